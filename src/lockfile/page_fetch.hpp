#pragma once
// The real lockfile::Fetch for `lock`: a project page over HTTP(S) through net/.

#include <chrono>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "lockfile/make.hpp"

namespace bootstrap::lockfile {

/// GET `url` asking for PEP 691 JSON or PEP 503 HTML (k_simple_accept), following redirects;
/// the page's format comes from the Content-Type it answers with. Past `deadline` (retries and
/// their waits included) it fails with ErrorCode::timeout.
[[nodiscard]] Result<FetchedPage> fetch_project_page(const std::string& url,
                                                     std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace bootstrap::lockfile
