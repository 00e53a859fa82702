#include "engine/locking.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"
#include "engine/journal.hpp"
#include "engine/run_manifests.hpp"
#include "manifest/snapshot.hpp"

namespace bootstrap::engine {

namespace {

std::string url_decode(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace

fs::path default_lockfile_path(const recipe::Recipe& recipe) {
    return recipe.file.parent_path() / "lockfiles" / (recipe.name + ".lock.json");
}

std::string hash_from_simple_page(const std::string& html, const std::string& file_name) {
    // Each file is an anchor whose href ends with the file name and, per PEP 503, may carry a
    // "#sha256=<hex>" fragment.
    size_t pos = 0;
    while ((pos = html.find("href=\"", pos)) != std::string::npos) {
        pos += 6;
        size_t end = html.find('"', pos);
        if (end == std::string::npos) break;
        std::string href = html.substr(pos, end - pos);
        pos = end;
        auto hash_at = href.find("#sha256=");
        if (hash_at == std::string::npos) continue;
        std::string path = url_decode(href.substr(0, hash_at));
        auto slash = path.rfind('/');
        std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
        if (name == file_name) return href.substr(hash_at + 8);
    }
    return {};
}

Result<manifest::Lockfile> make_lockfile(const recipe::Recipe& recipe, const PlanOptions& options,
                                         const Fetch& fetch) {
    BS_TRY(auto pre, gather_facts({}, false));
    BS_TRY(auto venv, resolve_venv_path(recipe, options, pre));
    BS_TRY(auto facts, gather_facts(venv, true));
    if (!facts.python)
        return fail(ErrorCode::usage, fmt::format("{} does not exist yet: run the recipe first", venv.string()));
    BS_TRY(auto plan, make_plan(recipe, options, facts));
    BS_TRY(auto journal, Journal::load(venv));
    std::vector<std::string> not_passed;
    for (const auto& step : plan.steps) {
        auto it = journal.steps.find(step.id);
        if (!step.optional && (it == journal.steps.end() || it->second.status != StepStatus::ok))
            not_passed.push_back(step.id);
    }
    if (!not_passed.empty())
        return fail(ErrorCode::usage,
                    fmt::format("cannot lock {}: the last run did not pass step(s) {}", recipe.name,
                                core::join(not_passed, ", ")),
                    "run the recipe to success first, then lock");

    BS_TRY(auto snapshot, snapshot_for_run(plan, facts, "lock", "lock", true));
    manifest::ArtifactStore store(manifest::bootstrap_home(facts.env) / "artifacts");
    const manifest::Manifest* previous = nullptr;
    std::optional<manifest::Manifest> newest;
    if (auto entries = manifest::list_history(venv); entries && !entries->empty())
        if (auto m = manifest::load_manifest(entries->back().file)) newest = std::move(*m);
    if (newest) previous = &*newest;
    (void)annotate_origins(snapshot, previous, journal, plan, store);

    manifest::Lockfile lock;
    lock.recipe_name = recipe.name;
    lock.recipe_digest = recipe.source_digest;
    lock.python_version = snapshot.python.version;
    lock.platform = snapshot.python.platform;
    std::map<std::string, std::string> pages;  // url -> body, fetched once
    std::vector<std::string> missing;
    for (const auto& [name, pkg] : snapshot.packages) {
        manifest::LockedPackage lp{name, pkg.version, manifest::wheel_file_name(pkg), {}, pkg.origin};
        if (!pkg.origin.artifact_sha256.empty()) {
            lp.sha256 = pkg.origin.artifact_sha256;
        } else if (!pkg.origin.index_urls.empty()) {
            for (const auto& index : pkg.origin.index_urls) {
                std::string url = index + (index.ends_with("/") ? "" : "/") + name + "/";
                auto page = pages.find(url);
                if (page == pages.end()) {
                    BS_TRY(auto body, fetch(url));
                    page = pages.emplace(url, std::move(body)).first;
                }
                lp.sha256 = hash_from_simple_page(page->second, lp.wheel);
                if (!lp.sha256.empty()) break;
            }
            if (lp.sha256.empty())
                missing.push_back(fmt::format("{} {}: {} is not listed with a sha256 on {}", name, pkg.version,
                                              lp.wheel, core::join(pkg.origin.index_urls, ", ")));
        } else if (!pkg.origin.step.empty()) {
            missing.push_back(fmt::format("{} {}: installed by step '{}' but its index is unknown", name,
                                          pkg.version, pkg.origin.step));
        }
        // Packages no step installed (pip/setuptools seeded by `python -m venv`) are locked by
        // version only: no locked step reinstalls them, and drift is checked by version.
        lock.packages[name] = std::move(lp);
    }
    if (!missing.empty())
        return fail(ErrorCode::step_failed,
                    fmt::format("cannot lock {}: no wheel hash for {} package(s)", recipe.name, missing.size()),
                    core::join(missing, "\n"));
    return lock;
}

}  // namespace bootstrap::engine
