#pragma once
// `bootstrap lock`: a lockfile from the venv a successful run left — exact versions, each
// wheel's sha256 (from the artifact store, or the index's PEP 503 `#sha256=` link fragments),
// and origins.

#include <filesystem>
#include <functional>
#include <string>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "manifest/lockfile.hpp"

namespace bootstrap::engine {

/// Fetches a URL's body (the real one uses net::get; tests may pass a fake).
using Fetch = std::function<Result<std::string>(const std::string& url)>;

/// The default lockfile path for a recipe: `<recipe dir>/lockfiles/<name>.lock.json`.
[[nodiscard]] fs::path default_lockfile_path(const recipe::Recipe& recipe);

/// Build a lockfile for the recipe's venv. Refuses (naming them) when the last run did not pass
/// every step, or when some wheel's hash cannot be found.
[[nodiscard]] Result<manifest::Lockfile> make_lockfile(const recipe::Recipe& recipe,
                                                       const PlanOptions& options, const Fetch& fetch);

/// The sha256 that a PEP 503 simple page gives for `file_name`, or "" when absent.
[[nodiscard]] std::string hash_from_simple_page(const std::string& html, const std::string& file_name);

}  // namespace bootstrap::engine
