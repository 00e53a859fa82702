#pragma once
// `bootstrap lock`: a lockfile from the venv a successful run left (and only from one at the
// recipe's fixed point) — exact versions, each
// wheel's file name, URL and sha256 (from the artifact store, or the index's project page: PEP
// 691 JSON or PEP 503 HTML), and origins. Written as JSON or as a PEP 751 pylock.toml
// (lockfile/pylock.hpp).

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "lockfile/index_page.hpp"
#include "manifest/lockfile.hpp"

namespace bootstrap::lockfile {

namespace fs = std::filesystem;

/// A fetched project page.
struct FetchedPage {
    std::string body;
    std::string content_type;  // the response's Content-Type; "" when there is none (file://)
    std::string url;           // where it came from after redirects; "" means the URL asked for
};

/// Fetches a project page (the real one uses net::get with k_simple_accept; tests pass a fake).
using Fetch = std::function<Result<FetchedPage>(const std::string& url)>;

/// The Accept header for project pages: PEP 691 JSON preferred, PEP 503 HTML as the fallback.
inline constexpr std::string_view k_simple_accept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01";

/// The default lockfile path for a recipe: `<recipe dir>/lockfiles/<name>.lock.json`, or
/// `<recipe dir>/../lockfiles/<name>.lock.json` when only that directory exists (a project's
/// `recipes/` beside its `lockfiles/`).
[[nodiscard]] fs::path default_lockfile_path(const recipe::Recipe& recipe);

/// `<index>/<PEP 503 name>/`: a project's page. PyPI redirects any other spelling; this one
/// needs no redirect.
[[nodiscard]] std::string project_page_url(std::string_view index, std::string_view name);

/// The file on a project page that is the installed wheel of `pkg`: the same PEP 503 name, an
/// equal PEP 440 version and the same set of expanded tags as its WHEEL `Tag:` lines (file
/// names are never compared: case and the order of compressed tags vary). When none fits, the
/// error names the package, version, tags and page, and the closest files of that version.
/// `listed`: how many files the page lists, when `files` holds only some (files.size() if not).
[[nodiscard]] Result<lockfile::IndexFile> find_installed_wheel(const std::vector<lockfile::IndexFile>& files,
                                                               const manifest::Package& pkg,
                                                               const std::string& page_url,
                                                               std::optional<size_t> listed = {});

/// Build a lockfile for the recipe's venv: every installed package, and per step whether it is
/// covered (it passed) with, for an install step, the closure of its requirements. Steps that
/// did not pass are recorded as not covered, with why. Refuses when no step passed, or when some
/// wheel's hash cannot be found (naming each). Probes no device: a `{device.*}` value is known
/// only through options.arch / no_device.
///
/// A lock stands for the recipe: it is refused (step_failed, naming them) while a step that
/// passed would run again (the venv is off the recipe's fixed point: rolled back, edited, the
/// recipe changed), and while the venv holds distributions no step accounts for
/// (unowned_extras: installed by hand). With `allow_extras` those are left out of the lock
/// instead, each named in `notes`.
struct LockPolicy {
    bool allow_extras = false;
};
[[nodiscard]] Result<manifest::Lockfile> make_lockfile(const recipe::Recipe& recipe, const engine::PlanOptions& options,
                                                       const Fetch& fetch, const LockPolicy& policy = {},
                                                       std::vector<std::string>* notes = nullptr);

}  // namespace bootstrap::lockfile
