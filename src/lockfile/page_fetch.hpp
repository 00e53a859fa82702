#pragma once
// The real lockfile::Fetch for `lock`: a project page over HTTP(S) through net/.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "lockfile/make.hpp"

namespace bootstrap::lockfile {

/// The longest project page read. PyPI's largest pages (projects with thousands of nightly
/// wheels) are a few MiB; a longer one is refused, not read into memory (net's own bound, for
/// any body, is 256 MiB).
inline constexpr std::uint64_t k_max_project_page = std::uint64_t{32} << 20;

/// GET `url` asking for PEP 691 JSON or PEP 503 HTML (k_simple_accept), following redirects;
/// the page's format comes from the Content-Type it answers with. Past `deadline` (retries and
/// their waits included) it fails with ErrorCode::timeout; a page over k_max_project_page fails.
[[nodiscard]] Result<FetchedPage> fetch_project_page(const std::string& url,
                                                     std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace bootstrap::lockfile
