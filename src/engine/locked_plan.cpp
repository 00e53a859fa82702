#include "engine/locked_plan.hpp"

#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/lock_meaning.hpp"
#include "manifest/artifacts.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/specifier.hpp"
#include "state/layout.hpp"
#include "steps/kind.hpp"
#include "steps/pylock_data.hpp"

namespace bootstrap::engine {

namespace {

std::vector<std::string> redacted(const std::vector<std::string>& urls) {
    std::vector<std::string> out;
    for (const auto& u : urls) out.push_back(core::redact_url(u));
    return out;
}

}  // namespace

Status LockedPlan::check(const manifest::Lockfile& lock, const recipe::Recipe& recipe) {
    if (!lock.foreign_tool.empty()) return {};  // bound to no recipe: adopt_foreign maps it
    if (lock.schema < 2)
        return fail(ErrorCode::usage,
                    fmt::format("{}: lockfile schema {} cannot rebuild a venv from nothing: it credits each package "
                                "only to the last step that installed it",
                                lock.file.string(), lock.schema),
                    "run `bootstrap lock` again (in the venv it was made from, or after a run) to write schema 2");
    return check_lock_stands(lock, recipe);  // by what the steps do (lock_meaning.hpp)
}

LockedPlan::LockedPlan(const manifest::Lockfile& lock, const Plan& unlocked, const pyenv::MarkerEnv* markers)
    : m_lock(lock) {
    for (const auto& st : unlocked.steps)
        if (const auto* request = steps::index_request_of(st))
            m_step_indexes[st.id] =
                pyenv::effective_indexes(unlocked.installer->name(), *request, st.child_env, unlocked.venv).all();
    if (!m_lock.foreign_tool.empty()) adopt_foreign(unlocked, markers);
}

void LockedPlan::adopt_foreign(const Plan& unlocked, const pyenv::MarkerEnv* markers) {
    const steps::ResolvedStep* first = nullptr;
    for (const auto& st : unlocked.steps) {
        m_lock.steps[st.id] = {};
        if (first == nullptr && steps::owned_of(st).requirements != nullptr && steps::index_request_of(st) != nullptr)
            first = &st;
    }
    if (first == nullptr) {
        m_foreign_problems.push_back("the recipe has no install step to install its packages");
        return;
    }
    auto& packages = m_lock.steps[first->id].packages;
    for (auto& [name, p] : m_lock.packages) {
        if (p.sha256.empty()) continue;  // a source tree: the recipe's steps install it
        p.origin.step = first->id;
        packages.push_back(name);
    }
    // What the recipe asks for must be what the lock holds: nothing else checks a lock that
    // was not made from this recipe's venv.
    for (const auto& st : unlocked.steps) {
        const auto* own = steps::owned_of(st).requirements;
        if (own == nullptr) continue;
        for (const auto& req : *own) {
            if (req.marker && (markers == nullptr || !req.marker->evaluate(*markers))) continue;
            auto it = m_lock.packages.find(req.normalized_name);
            if (it == m_lock.packages.end()) {
                m_foreign_problems.push_back(
                    fmt::format("step '{}' asks for {}, which it does not lock", st.id, req.str()));
                continue;
            }
            auto version = pyenv::Version::parse(it->second.version);
            if (req.url.empty() && version && !req.specifier.contains(*version, true))
                m_foreign_problems.push_back(fmt::format("step '{}' asks for {}; it locks {} {}", st.id, req.str(),
                                                         it->first, it->second.version));
        }
    }
}

Status LockedPlan::check_interpreter(const pyenv::InterpreterFacts& python) const {
    auto fits = steps::check_lock_interpreter(m_lock.file, m_lock.requires_python, m_lock.environments, python);
    if (fits) return {};
    Error error = fits.error();
    error.message = "--locked: " + error.message;
    return tl::unexpected(std::move(error));
}

Result<steps::LockedInstall> LockedPlan::install(const std::string& step_id, const fs::path& venv, const fs::path& home,
                                                 const std::vector<std::string>& known,
                                                 const pyenv::InterpreterFacts* python,
                                                 const std::function<void(std::string)>& notice) {
    steps::LockedInstall out;
    auto covered = m_lock.steps.find(step_id);
    if (covered == m_lock.steps.end() || !covered->second.covered) return out;
    if (python != nullptr) BS_CHECK(check_interpreter(*python));
    manifest::ArtifactStore store(home / "artifacts");
    std::vector<std::vector<std::string>> index_lists;  // in order of first use
    std::map<std::vector<std::string>, std::vector<const manifest::LockedPackage*>> by_indexes;
    std::vector<std::pair<const manifest::LockedPackage*, fs::path>> wheels;
    for (const auto& name : covered->second.packages) {
        const auto& p = m_lock.packages.at(name);
        if (!p.marker.empty() && python != nullptr)
            if (auto marker = pyenv::Marker::parse(p.marker); marker && !marker->evaluate(python->markers)) continue;
        if (auto r = pyenv::Requirement::parse(name + "==" + p.version)) out.requirements.push_back(*r);
        if (!p.origin.artifact_sha256.empty()) {
            auto stored = store.find(p.origin.artifact_sha256);
            if (!stored)
                return fail(
                    ErrorCode::not_found,
                    fmt::format("step '{}': locked package {} {} is a local wheel (sha256 {}) that {} no "
                                "longer keeps",
                                step_id, name, p.version, p.origin.artifact_sha256, (home / "artifacts").string()),
                    fmt::format("run the step that made it without --locked, or copy $BOOTSTRAP_HOME from "
                                "the machine the lock ({}) was made on",
                                m_lock.file.string()));
            wheels.emplace_back(&p, *stored);
            continue;
        }
        // Seeded by the venv's creation, or an editable project: left to the step that makes it.
        if (p.sha256.empty()) continue;
        if (!p.path.empty()) {  // a pylock's wheel by path
            wheels.emplace_back(&p, p.path);
            continue;
        }
        std::vector<std::string> urls;
        if (auto now = m_step_indexes.find(p.origin.step); now != m_step_indexes.end()) {
            urls = now->second;
            if (!p.origin.index_urls.empty() && redacted(urls) != p.origin.index_urls &&
                m_noted.insert(p.origin.step).second)
                notice(
                    fmt::format("--locked: the packages of step '{}' were locked from {}; on this node it asks {} "
                                "(the same files must be there: their sha256 is checked)",
                                p.origin.step, core::join(p.origin.index_urls, " "), core::join(redacted(urls), " ")));
        } else if (!p.origin.index_urls.empty()) {
            for (const auto& recorded : p.origin.index_urls) urls.push_back(pyenv::with_credentials(recorded, known));
        } else {
            continue;  // no index to ask (the step it names is not an install step of the recipe)
        }
        if (!by_indexes.count(urls)) index_lists.push_back(urls);
        by_indexes[urls].push_back(&p);
    }
    for (size_t i = 0; i < index_lists.size() || (i == 0 && !wheels.empty()); ++i) {
        steps::LockedBatch batch;
        std::vector<const manifest::LockedPackage*> members;
        std::map<std::string, fs::path> paths;
        if (i < index_lists.size()) {
            const auto& urls = index_lists[i];
            batch.index_url = urls.front();
            batch.extra_index_urls.assign(urls.begin() + 1, urls.end());
            batch.indexes_shown = core::join(redacted(urls), " ");
            members = by_indexes[urls];
        } else {
            batch.no_index = true;
            batch.indexes_shown = "(no index)";
        }
        // A wheel by path pins the bytes and asks no index: they go with the first command.
        if (i == 0)
            for (const auto& [p, path] : wheels) {
                members.push_back(p);
                paths[p->name] = path;
            }
        batch.file = state::Layout(venv).locked_requirements(step_id, i);
        auto text = manifest::locked_requirements(members, paths);
        if (!text)
            return fail(ErrorCode::usage,
                        fmt::format("--locked: {}: package {}", m_lock.file.string(), text.error().message),
                        "write the lockfile again with `bootstrap lock`, or fix the value it names");
        batch.text = std::move(*text);
        for (const auto* p : members)
            if (!p->sdist.empty() && !paths.count(p->name))
                batch.sdists.push_back(steps::LockedSdist{
                    p->name, p->version, p->sdist, pyenv::with_credentials(p->url, known), p->sha256, p->built_key});
        for (const auto* p : members)
            if (!p->at.empty())
                batch.locked_at[p->name] =
                    fmt::format("{}: {} {} sha256 {}", p->at, p->sdist.empty() ? "wheel" : "sdist",
                                p->sdist.empty() ? p->wheel : p->sdist, p->sha256);
        out.batches.push_back(std::move(batch));
    }
    return out;
}

Status LockedPlan::apply_coverage(Plan& plan) const {
    if (!m_foreign_problems.empty())
        return fail(ErrorCode::usage,
                    fmt::format("--locked: {} (written by {}) does not fit the recipe {}", m_lock.file.string(),
                                m_lock.foreign_tool,
                                plan.recipe != nullptr ? plan.recipe->file.string() : std::string("(none)")),
                    core::join(m_foreign_problems, "\n") +
                        "\na pylock.toml from another tool gives every package to the recipe's first install step");
    std::vector<std::string> uncovered, ids;
    for (auto& step : plan.steps) {
        if (!plan.selected[step.index]) continue;
        auto it = m_lock.steps.find(step.id);
        if (it != m_lock.steps.end() && it->second.covered) continue;
        const std::string why = it == m_lock.steps.end() ? "not in the lockfile" : it->second.why;
        if (step.optional) {
            step.not_locked = why;
            continue;
        }
        uncovered.push_back(fmt::format("{}: {} when the lock was made", step.id, why));
        ids.push_back(step.id);
    }
    if (!uncovered.empty()) {
        const char* them = ids.size() == 1 ? "it" : "them";
        return fail(ErrorCode::usage,
                    fmt::format("--locked: the lockfile {} does not cover step{} {}", m_lock.file.string(),
                                ids.size() == 1 ? "" : "s", core::join(ids, ", ")),
                    core::join(uncovered, "\n") +
                        fmt::format("\nrun {} without --locked first and lock again, or leave {} out: --skip {}", them,
                                    them, core::join(ids, " ")));
    }
    for (const auto& [name, p] : m_lock.packages)
        if (!p.origin.index_urls.empty()) plan.locked_indexes[name] = p.origin.index_urls;
    return {};
}

}  // namespace bootstrap::engine
