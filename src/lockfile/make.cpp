#include "lockfile/make.hpp"

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/fixed_point.hpp"
#include "engine/lock_meaning.hpp"
#include "engine/run_manifests.hpp"
#include "engine/skip_rule.hpp"
#include "lockfile/hash_check.hpp"
#include "lockfile/sdist_lock.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/name.hpp"
#include "pyenv/sdist_name.hpp"
#include "pyenv/uv_cache.hpp"
#include "pyenv/wheel_name.hpp"
#include "state/journal.hpp"
#include "steps/kind.hpp"
#include "steps/source_build.hpp"

namespace bootstrap::lockfile {

using engine::Decision;
using engine::Extra;
using engine::Facts;
using engine::Installed;
using engine::Plan;
using engine::PlanOptions;
using engine::SkipRule;
using engine::StepDecision;

namespace {

using TagSet = std::set<std::string>;

std::string show_tags(const TagSet& tags) {
    return "{" + core::join(std::vector<std::string>(tags.begin(), tags.end()), ", ") + "}";
}

/// How close a wheel is to the installed tag set: the whole tags they share, then the python,
/// abi and platform tags the wheel has among the installed ones (a cp311 manylinux wheel of
/// other glibc levels is closer than a cp310 macOS one).
std::pair<size_t, size_t> closeness(const pyenv::WheelName& wheel, const TagSet& tags) {
    std::pair<size_t, size_t> score{0, 0};
    for (const auto& t : wheel.tags) score.first += tags.count(t);
    std::array<TagSet, 3> parts;  // the installed python, abi and platform tags
    for (const auto& t : tags) {
        auto fields = core::split(t, '-');
        for (size_t i = 0; i < 3 && i < fields.size(); ++i) parts[i].insert(fields[i]);
    }
    const std::array<const std::vector<std::string>*, 3> lists{&wheel.python_tags, &wheel.abi_tags,
                                                               &wheel.platform_tags};
    for (size_t i = 0; i < 3; ++i)
        for (const auto& t : *lists[i]) score.second += parts[i].count(core::to_lower(t));
    return score;
}

/// "no wheel of X with tags T on URL" plus the files of that version, the closest first.
std::string no_match(const manifest::Package& pkg, const TagSet& tags, const std::string& page_url,
                     std::vector<pyenv::WheelName> same_version, size_t listed) {
    std::string head =
        fmt::format("no wheel of {} {} with tags {} on {}", pkg.name, pkg.version, show_tags(tags), page_url);
    if (same_version.empty())
        return fmt::format("{}: it lists no wheel of version {} ({} file{})", head, pkg.version, listed,
                           listed == 1 ? "" : "s");
    std::stable_sort(same_version.begin(), same_version.end(),
                     [&](const auto& a, const auto& b) { return closeness(a, tags) > closeness(b, tags); });
    constexpr size_t k_shown = 5;
    std::vector<std::string> names;
    for (size_t i = 0; i < same_version.size() && i < k_shown; ++i) names.push_back(same_version[i].file_name);
    std::string more =
        same_version.size() > k_shown ? fmt::format(" (and {} more)", same_version.size() - k_shown) : std::string();
    return fmt::format("{}; closest wheels of {} there: {}{}", head, pkg.version, core::join(names, ", "), more);
}

/// A project page, fetched and parsed once per URL: the files of the one release locked from
/// it (a page is one project's; a lock asks it for one version), and how many it lists.
struct Page {
    std::string url;  // after redirects
    std::vector<lockfile::IndexFile> files;
    size_t listed = 0;
};

Result<Page> load_page(const Fetch& fetch, const std::string& url, const manifest::Package& pkg) {
    BS_TRY(auto fetched, fetch(url));
    Page page;
    page.url = fetched.url.empty() ? url : fetched.url;
    auto keep = [&](std::string_view filename) {
        ++page.listed;
        auto wheel = pyenv::parse_wheel_name(filename);
        return (wheel && pyenv::is_release_of(*wheel, pkg.name, pkg.version)) ||
               pyenv::is_sdist_of(filename, pkg.name, pkg.version);  // what uv built it from, when no wheel fits
    };
    BS_TRY(page.files, lockfile::parse_index_page(fetched.body, fetched.content_type, page.url, keep));
    return page;
}

/// The index wheel of an installed package: the first of its indexes whose page lists it with a
/// sha256 (uv may have taken it from any of them). "" in `lp.sha256` and one reason per index
/// in `why_not` when none does.
/// An interrupt or the lock's deadline ends the whole lock (the error is returned); any other
/// failure of a page is one reason in `why_not`.
/// The index's sha256 is checked against the bytes at hand (hash_check.hpp): one that differs
/// from them on every index ends the lock.
Status lock_from_index(const manifest::Package& pkg, const Fetch& fetch, const std::vector<std::string>& known,
                       const BytesAtHand& at_hand, std::map<std::string, Result<Page>>& pages,
                       manifest::LockedPackage& lp, std::vector<std::string>& why_not) {
    std::optional<Error> mismatch;
    for (const auto& recorded : pkg.origin.index_urls) {
        // Recorded URLs carry no credentials; the recipe or the environment supplies them.
        std::string url = project_page_url(pyenv::with_credentials(recorded, known), pkg.name);
        auto page = pages.find(url);
        if (page == pages.end()) page = pages.emplace(url, load_page(fetch, url, pkg)).first;
        if (!page->second) {
            const auto code = page->second.error().code;
            if (code == ErrorCode::interrupted || code == ErrorCode::timeout)
                return tl::unexpected(page->second.error());
            why_not.push_back(
                core::redact_text(fmt::format("{} {}: {}", pkg.name, pkg.version, page->second.error().message)));
            continue;
        }
        auto file = find_installed_wheel(page->second->files, pkg, page->second->url, page->second->listed);
        const auto sdist = file ? std::nullopt : find_release_sdist(page->second->files, pkg);
        if (sdist && !sdist->sha256.empty()) {  // no wheel fits: uv built the venv's from this sdist
            const steps::SourceBuilt* built = nullptr;
            if (at_hand.source_builds != nullptr)
                if (auto b = at_hand.source_builds->find(pkg.name); b != at_hand.source_builds->end())
                    built = &b->second;
            lock_sdist(at_hand, pkg, *sdist, lp, built);
            lp.index = recorded;
            return {};
        }
        if (!file) {
            why_not.push_back(
                core::redact_text(sdist ? fmt::format("{} {}: {} is listed on {} without a sha256", pkg.name,
                                                      pkg.version, sdist->filename, page->second->url)
                                        : file.error().message));
            continue;
        }
        if (file->sha256.empty()) {
            why_not.push_back(core::redact_text(fmt::format("{} {}: {} is listed on {} without a sha256", pkg.name,
                                                            pkg.version, file->filename, page->second->url)));
            continue;
        }
        auto source = check_index_hash(at_hand, pkg, *file, page->second->url);
        if (!source) {
            if (!mismatch) mismatch = source.error();
            continue;
        }
        lp.wheel = file->filename;
        lp.sha256 = file->sha256;
        lp.hash_source = *source;
        lp.url = core::strip_credentials(file->url);
        lp.index = recorded;
        return {};
    }
    if (mismatch) return tl::unexpected(std::move(*mismatch));
    return {};
}

/// The one environment a lock is for (PEP 751 `environments`): the interpreter's platform. Its
/// Python version is the lock's `requires-python`.
std::string locked_environment(const pyenv::MarkerEnv& markers) {
    auto value = [&](const char* name) {
        auto it = markers.find(name);
        return it == markers.end() ? std::string() : it->second;
    };
    return fmt::format("sys_platform == '{}' and platform_machine == '{}'", value("sys_platform"),
                       value("platform_machine"));
}

}  // namespace

fs::path default_lockfile_path(const recipe::Recipe& recipe) {
    const fs::path dir = recipe.file.parent_path();
    const std::string name = recipe.name + ".lock.json";
    // A project keeps recipes/ and lockfiles/ side by side; a lone recipe keeps its own.
    std::error_code ec;
    if (!fs::is_directory(dir / "lockfiles", ec) && dir.has_parent_path() &&
        fs::is_directory(dir.parent_path() / "lockfiles", ec))
        return dir.parent_path() / "lockfiles" / name;
    return dir / "lockfiles" / name;
}

std::string project_page_url(std::string_view index, std::string_view name) {
    return fmt::format("{}{}{}/", index, index.ends_with("/") ? "" : "/", pyenv::normalize_name(name));
}

Result<lockfile::IndexFile> find_installed_wheel(const std::vector<lockfile::IndexFile>& files,
                                                 const manifest::Package& pkg, const std::string& page_url,
                                                 std::optional<size_t> listed) {
    auto tags =
        pyenv::expand_tags(pkg.wheel_tag.empty() ? std::vector<std::string>{} : core::split(pkg.wheel_tag, ','));
    if (!tags)
        return fail(ErrorCode::step_failed, fmt::format("{} {}: its WHEEL file has a bad tag: {}", pkg.name,
                                                        pkg.version, tags.error().message));
    if (tags->empty())
        return fail(ErrorCode::step_failed, fmt::format("{} {}: its dist-info has no WHEEL tags to match against {}",
                                                        pkg.name, pkg.version, page_url));
    std::vector<pyenv::WheelName> same_version;
    std::vector<const lockfile::IndexFile*> matches;
    for (const auto& f : files) {
        auto wheel = pyenv::parse_wheel_name(f.filename);
        if (!wheel || !pyenv::is_release_of(*wheel, pkg.name, pkg.version)) continue;  // sdists too
        if (wheel->tags == *tags) matches.push_back(&f);
        same_version.push_back(std::move(*wheel));
    }
    if (matches.empty()) {
        // A WHEEL file whose Tag lines disagree with its own file name (NVIDIA's
        // transformer_engine_cu13 2.14.1 says cp310-cp310-manylinux_2_28_x86_64 inside a
        // py3-none-manylinux_2_28_x86_64 wheel): the one wheel of that version for exactly the same
        // platform tags, for any Python, is the file that was installed. None, or several, stay a
        // mismatch.
        std::set<std::string> platforms;
        bool interpreter_specific = true;  // the WHEEL names an ABI ("cp310-cp310-..."), not "none"
        for (const auto& tag : *tags) {
            platforms.insert(tag.substr(tag.rfind('-') + 1));
            if (tag.find("-none-") != std::string::npos) interpreter_specific = false;
        }
        std::vector<const lockfile::IndexFile*> same_platform;
        for (const auto& f : files) {
            auto wheel = pyenv::parse_wheel_name(f.filename);
            if (!wheel || !pyenv::is_release_of(*wheel, pkg.name, pkg.version)) continue;
            std::set<std::string> theirs;
            for (const auto& p : wheel->platform_tags) theirs.insert(core::to_lower(p));
            // Only a file any Python may install (py3-none-...): a cp310 file is not a cp311 one.
            const bool any_python = wheel->abi_tags == std::vector<std::string>{"none"} &&
                                    std::all_of(wheel->python_tags.begin(), wheel->python_tags.end(),
                                                [](const std::string& t) { return t.starts_with("py"); });
            if (interpreter_specific && theirs == platforms && any_python) same_platform.push_back(&f);
        }
        if (same_platform.size() == 1) return *same_platform.front();
        return fail(ErrorCode::step_failed,
                    no_match(pkg, *tags, page_url, std::move(same_version), listed.value_or(files.size())));
    }
    // Wheels that differ only in their build tag (which the dist-info does not record) are
    // interchangeable only when they are the same bytes.
    for (const auto* m : matches)
        if (m->sha256 != matches.front()->sha256) {
            std::vector<std::string> names;
            for (const auto* n : matches) names.push_back(n->filename);
            return fail(ErrorCode::step_failed,
                        fmt::format("{} {}: several different wheels with tags {} on {}: {}", pkg.name, pkg.version,
                                    show_tags(*tags), page_url, core::join(names, ", ")));
        }
    return *matches.front();
}

namespace {

/// Which steps the lock covers (they passed when it was made), and why the others are not.
std::map<std::string, manifest::LockedStep> coverage(const Plan& plan, const state::Journal& journal) {
    std::map<std::string, manifest::LockedStep> out;
    for (const auto& step : plan.steps) {
        manifest::LockedStep ls;
        ls.optional = step.optional;
        auto it = journal.steps.find(step.id);
        if (it == journal.steps.end()) {
            ls.covered = false;
            ls.why = "not run";
        } else if (it->second.status != state::StepStatus::ok) {
            const auto& e = it->second;
            ls.covered = false;
            ls.why = fmt::format("{}{} on {}{}", step.optional ? "optional step " : "",
                                 e.status == state::StepStatus::interrupted ? "interrupted" : "failed",
                                 e.finished_at.substr(0, 10), e.failure.empty() ? "" : ": " + e.failure);
        }
        out[step.id] = std::move(ls);
    }
    return out;
}

/// The locked packages an install step's requirements need (their closure in the venv), and
/// those it owns (a package it installed that no requirement names, found by the journal).
Result<std::vector<std::string>> step_packages(const steps::ResolvedStep& step, const Installed& installed,
                                               const pyenv::MarkerEnv& markers, const manifest::Lockfile& lock) {
    const auto* own = steps::owned_of(step).requirements;
    if (!step.complete)
        return fail(
            ErrorCode::usage,
            fmt::format("cannot lock step '{}': its packages use a value known only with the GPU's arch", step.id),
            "pass the arch the run used: bootstrap lock RECIPE --arch X (or --no-device)");
    BS_TRY(auto names, pyenv::installed_closure(*own, installed, markers));
    std::set<std::string> out(names.begin(), names.end());
    for (const auto& [name, p] : lock.packages)
        if (p.origin.step == step.id) out.insert(name);
    std::erase_if(out, [&](const std::string& n) { return !lock.packages.count(n); });
    return std::vector<std::string>(out.begin(), out.end());
}

}  // namespace

namespace {

/// A package from an index that no record attributes to a step (a step that found its
/// requirements satisfied owns only what it names; a history written by a rollback of an older
/// bootstrap kept no origins): the first install step whose requirements bring it in (their
/// closure in the venv) installs it, from that step's indexes. Without this a lock would hold it
/// by version only, and a `--locked` run into a fresh path would not install it.
Status attribute_dependencies(const Plan& plan, const state::Journal& journal, const Facts& facts,
                              manifest::Manifest& snapshot) {
    BS_TRY(auto installed, pyenv::scan_venv_packages(*facts.python));
    for (const auto& step : plan.steps) {
        const auto* own = steps::owned_of(step).requirements;
        auto entry = journal.steps.find(step.id);
        if (own == nullptr || !step.complete || entry == journal.steps.end() ||
            entry->second.status != state::StepStatus::ok)
            continue;
        BS_TRY(auto closure, pyenv::installed_closure(*own, installed, facts.python->markers));
        const auto urls = entry->second.index_urls.empty() ? step.index_urls() : entry->second.index_urls;
        for (const auto& name : closure) {
            auto it = snapshot.packages.find(name);
            if (it == snapshot.packages.end()) continue;
            auto& origin = it->second.origin;
            if (!origin.step.empty() || !origin.index_urls.empty() || !origin.artifact_sha256.empty() ||
                (origin.kind != manifest::OriginKind::index && origin.kind != manifest::OriginKind::unknown))
                continue;
            origin.step = step.id;
            origin.index_urls = urls;
        }
    }
    return {};
}

/// Every step that passed still holds, and nothing is installed that no step accounts for
/// (`extras`, when they are allowed, gets those instead).
Status check_fixed_point(const recipe::Recipe& recipe, const Plan& plan, const Facts& facts,
                         const state::Journal& journal, const std::map<std::string, manifest::LockedStep>& steps,
                         const LockPolicy& policy, std::vector<Extra>& extras) {
    BS_TRY(auto decisions, engine::predict(plan, facts));
    std::vector<std::string> due;
    for (const auto& step : plan.steps) {
        auto covered = steps.find(step.id);
        if (!step.complete || covered == steps.end() || !covered->second.covered || step.index >= decisions.size())
            continue;
        if (decisions[step.index].decision == Decision::run)
            due.push_back(fmt::format("step '{}' would run: {}", step.id, decisions[step.index].reason));
    }
    const std::string where = plan.venv.string();
    if (!due.empty())
        return fail(ErrorCode::step_failed,
                    fmt::format("cannot lock {}: {} is not at the recipe's fixed point ({} would run again)",
                                recipe.name, where, due.size() == 1 ? "a step" : fmt::format("{} steps", due.size())),
                    core::join(due, "\n") +
                        fmt::format("\na lock stands for the recipe: run it first (bootstrap run {}), then lock",
                                    recipe.file.string()));
    BS_TRY(auto installed, pyenv::scan_venv_packages(*facts.python));
    BS_TRY(extras, engine::unowned_extras(plan, journal, installed, facts.python->markers));
    if (extras.empty() || policy.allow_extras) return {};
    return fail(
        ErrorCode::step_failed,
        fmt::format("cannot lock {}: {} holds {} no step of the recipe installs: {}", recipe.name, where,
                    extras.size() == 1 ? "a distribution" : fmt::format("{} distributions", extras.size()),
                    describe(extras)),
        fmt::format("remove {} (bootstrap run {} --exact), add {} to a step, or lock the recipe's packages "
                    "without {}: bootstrap lock {} --allow-extras",
                    extras.size() == 1 ? "it" : "them", recipe.file.string(), extras.size() == 1 ? "it" : "them",
                    extras.size() == 1 ? "it" : "them", recipe.file.string()));
}

}  // namespace

Result<manifest::Lockfile> make_lockfile(const recipe::Recipe& recipe, const PlanOptions& options, const Fetch& fetch,
                                         const LockPolicy& policy, std::vector<std::string>* notes) {
    BS_TRY(auto pre, engine::gather_facts({}, false));
    BS_TRY(auto venv, engine::resolve_venv_path(recipe, options, pre));
    BS_TRY(auto facts, engine::gather_facts(venv, true));
    if (!facts.python)
        return fail(ErrorCode::usage, fmt::format("{} does not exist yet: run the recipe first", venv.string()));
    PlanOptions lock_options = options;
    lock_options.probe_devices = false;  // nothing runs: the GPU is not asked
    lock_options.locked.reset();
    BS_TRY(auto plan, engine::make_plan(recipe, lock_options, facts));
    BS_TRY(auto journal, state::Journal::load(venv));
    auto steps = coverage(plan, journal);
    if (std::none_of(steps.begin(), steps.end(), [](const auto& s) { return s.second.covered; }))
        return fail(ErrorCode::usage,
                    fmt::format("cannot lock {}: no step of it has passed in {}", recipe.name, venv.string()),
                    "run the recipe first, then lock");

    std::vector<Extra> extras;
    BS_CHECK(check_fixed_point(recipe, plan, facts, journal, steps, policy, extras));

    BS_TRY(auto snapshot, engine::snapshot_for_run(plan, facts, "lock", "lock", true));
    for (const auto& extra : extras) {
        snapshot.packages.erase(extra.name);
        if (notes != nullptr)
            notes->push_back(
                fmt::format("left out: {} {} (no step of the recipe installs it)", extra.name, extra.version));
    }
    manifest::ArtifactStore store(manifest::bootstrap_home(facts.env) / "artifacts");
    const manifest::Manifest* previous = nullptr;
    std::optional<manifest::Manifest> newest;
    if (auto entries = manifest::list_history(venv); entries && !entries->empty())
        if (auto m = manifest::load_manifest(entries->back().file)) newest = std::move(*m);
    if (newest) previous = &*newest;
    (void)annotate_origins(snapshot, previous, journal, plan, store);
    BS_CHECK(attribute_dependencies(plan, journal, facts, snapshot));

    manifest::Lockfile lock;
    lock.recipe_name = recipe.name;
    lock.recipe_digest = recipe.source_digest;
    lock.python_version = snapshot.python.version;
    lock.platform = snapshot.python.platform;
    lock.environments = {locked_environment(facts.python->markers)};
    std::map<std::string, Result<Page>> pages;  // url -> parsed page (or why not), fetched once
    const auto known = pyenv::known_index_urls(facts.env, venv, steps::configured_index_urls(plan.steps));
    const auto source_builds = steps::read_source_builds(venv);
    const BytesAtHand at_hand{pyenv::uv_cache_dir(facts.env), &store, &source_builds};
    std::vector<std::string> missing;
    for (const auto& [name, pkg] : snapshot.packages) {
        manifest::LockedPackage lp{name, pkg.version, {}, {}, pkg.origin};
        if (!pkg.origin.artifact_sha256.empty()) {
            lp.sha256 = pkg.origin.artifact_sha256;
            lp.hash_source = k_hash_from_artifact_store;  // bootstrap hashed it when it kept it
            if (auto stored = store.find(lp.sha256)) {
                lp.wheel = stored->filename().string();
                lp.path = stored->string();
            }
        } else if (!pkg.origin.index_urls.empty()) {
            std::vector<std::string> why_not;
            BS_CHECK(lock_from_index(pkg, fetch, known, at_hand, pages, lp, why_not));
            if (lp.sha256.empty()) missing.push_back(core::join(why_not, "; "));
        } else if (pkg.origin.kind == manifest::OriginKind::editable) {
            // A local project (Megatron's own package, installed editable by its sync step):
            // no wheel to hash; its step installs it from the source again, checked by version.
        } else if (!pkg.origin.step.empty()) {
            missing.push_back(fmt::format("{} {}: installed by step '{}' but its index is unknown", name, pkg.version,
                                          pkg.origin.step));
        }
        // Packages no step installed (pip/setuptools seeded by `python -m venv`) are locked by
        // version only: no locked step reinstalls them, and drift is checked by version.
        lock.packages[name] = std::move(lp);
    }
    if (!missing.empty())
        return fail(ErrorCode::step_failed,
                    fmt::format("cannot lock {}: no wheel hash for {} package(s)", recipe.name, missing.size()),
                    core::join(missing, "\n"));
    BS_TRY(auto installed, pyenv::scan_venv_packages(*facts.python));
    for (const auto& step : plan.steps) {
        auto& ls = steps.at(step.id);
        if (ls.covered && steps::owned_of(step).requirements != nullptr) {
            BS_TRY(ls.packages, step_packages(step, installed, facts.python->markers, lock));
        }
    }
    lock.steps = std::move(steps);
    engine::record_meaning(lock, recipe);  // what a --locked run checks the recipe against
    return lock;
}

}  // namespace bootstrap::lockfile
