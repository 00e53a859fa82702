#include "engine/runner.hpp"

#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"
#include "engine/journal.hpp"
#include "engine/lock.hpp"
#include "engine/rollback.hpp"
#include "engine/run_manifests.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/name.hpp"
#include "steps/executor.hpp"

namespace bootstrap::engine {

namespace {

using Clock = std::chrono::steady_clock;
using Installed = std::map<std::string, pyenv::Distribution>;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }


Result<Installed> scan_installed(const Facts& facts) {
    if (!facts.python) return Installed{};
    return pyenv::scan_venv_packages(*facts.python);
}

/// Does what the journal recorded for a step still hold? RECORD stamps avoid rehashing; a
/// stamp that changed while the digest did not is refreshed (and `*refreshed` set).
bool outcome_holds(JournalEntry& entry, const Installed& installed, std::string* why, bool* refreshed) {
    for (auto& [name, rec] : entry.dists) {
        auto it = installed.find(name);
        if (it == installed.end()) {
            *why = fmt::format("{} is no longer installed", name);
            return false;
        }
        if (it->second.version != rec.version) {
            *why = fmt::format("{} is now {} (was {})", name, it->second.version, rec.version);
            return false;
        }
        if (it->second.record_stamp == rec.stamp) continue;
        auto digest = pyenv::record_digest(it->second);
        if (!digest || *digest != rec.record_sha256) {
            *why = fmt::format("{} {} was reinstalled or modified", name, rec.version);
            return false;
        }
        rec.stamp = it->second.record_stamp;
        *refreshed = true;
    }
    return true;
}

Result<DistRecord> record_of(const pyenv::Distribution& d) {
    BS_TRY(auto digest, pyenv::record_digest(d));
    return DistRecord{d.version, digest, d.record_stamp};
}

bool same_dist(const pyenv::Distribution& a, const pyenv::Distribution& b) {
    return a.version == b.version && a.record_stamp == b.record_stamp;
}

class Runner {
public:
    Runner(const recipe::Recipe& recipe, const RunOptions& options, RunObserver& observer)
        : m_recipe(recipe), m_options(options), m_observer(observer) {}

    Result<RunReport> run() {
        const auto start = Clock::now();
        BS_TRY(auto venv_facts_pre, gather_facts({}, true));
        BS_TRY(auto venv, resolve_venv_path(m_recipe, m_options.plan, venv_facts_pre));
        BS_CHECK(replan(venv));
        // Building for an arch nothing confirmed (--arch, --no-device) is said before anything runs.
        for (const auto& notice : m_plan.device_notices) m_observer.message("warning: " + notice);
        BS_CHECK(check_selection());
        if (const auto& lock = m_options.plan.locked; lock && lock->recipe_digest != m_recipe.source_digest)
            return fail(ErrorCode::usage,
                        fmt::format("the recipe {} changed since its lockfile was written", m_recipe.file.string()),
                        "run `bootstrap lock` again after a successful run, or run without --locked");

        bool waited = false;
        BS_TRY(auto lock, VenvLock::acquire(venv, m_options.lock_timeout, [&](long pid) {
            waited = true;
            m_observer.message(fmt::format("waiting for the venv lock held by pid {} (up to {:.0f}s)", pid,
                                           m_options.lock_timeout));
        }));
        // Another run may have changed the venv while we waited; otherwise the plan stands (a
        // second plan would double the cost of a no-op run, device probing included).
        if (waited) BS_CHECK(replan(venv));
        BS_TRY(m_journal, Journal::load(venv));
        m_journal.recipe = m_recipe.name;
        BS_TRY(m_installed, scan_installed(m_facts));

        m_report.run_id = core::new_run_id();
        m_report.venv = venv;
        m_report.steps.resize(m_plan.steps.size());
        for (size_t i = 0; i < m_plan.steps.size(); ++i) {
            m_report.steps[i].id = m_plan.steps[i].id;
            m_report.steps[i].kind = recipe::to_string(m_plan.steps[i].kind);
        }
        for (size_t i = 0; i < m_plan.steps.size(); ++i) {
            if (!selected(i)) {
                m_report.steps[i].result = StepResult::not_selected;
                m_report.steps[i].reason = "not selected";
                continue;
            }
            auto stop = run_step(i);
            if (!stop) {
                m_report.error = stop.error();
                break;
            }
        }
        finish_manifests();
        if (m_report.error && m_report.error->code != ErrorCode::interrupted && m_options.rollback_on_failure)
            restore_before();
        m_report.seconds = since(start);
        return m_report;
    }

private:
    Status replan(const fs::path& venv) {
        BS_TRY(m_facts, gather_facts(venv, true));
        BS_TRY(m_plan, make_plan(m_recipe, m_options.plan, m_facts));
        m_allowed_conflicts.reset();
        return {};
    }

    Status check_selection() {
        std::vector<std::string> ids;
        for (const auto& s : m_plan.steps) ids.push_back(s.id);
        auto check = [&](const std::string& id, const char* option) -> Status {
            if (std::find(ids.begin(), ids.end(), id) != ids.end()) return {};
            auto near = core::closest_match(id, ids);
            return fail(ErrorCode::usage,
                        fmt::format("{} {}: the recipe has no step '{}'{}", option, id, id,
                                    near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)),
                        "steps: " + core::join(ids, ", "));
        };
        if (m_options.from) BS_CHECK(check(*m_options.from, "--from"));
        for (const auto& id : m_options.only) BS_CHECK(check(id, "--only"));
        for (const auto& id : m_options.skip) BS_CHECK(check(id, "--skip"));
        return {};
    }

    bool selected(size_t i) const {
        const auto& id = m_plan.steps[i].id;
        auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), id) != v.end(); };
        if (has(m_options.skip)) return false;
        if (!m_options.only.empty() && !has(m_options.only)) return false;
        if (m_options.from) {
            for (size_t j = 0; j < m_plan.steps.size(); ++j) {
                if (m_plan.steps[j].id == *m_options.from) return i >= j;
            }
        }
        return true;
    }

    /// Files a step promises (`creates`, a pybind11 output, `file` verify clauses) still exist:
    /// a stat each.
    static bool outputs_exist(const steps::ResolvedStep& step, std::string* why) {
        std::vector<std::string> paths;
        if (!step.creates.empty()) paths.push_back(step.creates);
        if (!step.output.empty()) paths.push_back(step.output);
        for (const auto& v : step.verify)
            if (v.kind == recipe::VerifyClause::Kind::file) paths.push_back(v.target);
        for (const auto& p : paths)
            if (!fs::exists(p)) {
                *why = p + " no longer exists";
                return false;
            }
        return true;
    }

    /// Why the step can be skipped without running anything, or "" when it must run; then
    /// `why_run` says what made it run.
    std::string skip_reason(const steps::ResolvedStep& step, std::string& why_run) {
        if (m_options.force) {
            why_run = "forced";
            return {};
        }
        auto it = m_journal.steps.find(step.id);
        if (it == m_journal.steps.end())
            why_run = "first run";
        else if (it->second.status != StepStatus::ok)
            why_run = fmt::format("resuming: last run {}", to_string(it->second.status));
        else if (it->second.key != step.key)
            why_run = "step changed";
        else if (outputs_exist(step, &why_run) && outcome_holds(it->second, m_installed, &why_run, &m_journal_dirty))
            return "up to date";
        if (step.kind == recipe::StepKind::install && !step.upgrade && !step.reinstall && m_facts.python &&
            !m_installed.empty()) {
            for (const auto& req : step.requirements) {
                std::string reason;
                if (!pyenv::is_satisfied(req, m_installed, m_facts.python->markers, step.pre, &reason,
                                         allowed_conflicts()))
                    return {};
            }
            return "requirements already satisfied";
        }
        return {};
    }

    /// {dependent, dependency} pins that the recipe overrides: a step installing `dependency`
    /// with `allow_conflicts = ["dependent"]` (cublas over torch's pin, SEED-NOTES P10).
    const std::set<std::pair<std::string, std::string>>& allowed_conflicts() {
        if (!m_allowed_conflicts) {
            m_allowed_conflicts.emplace();
            for (const auto& st : m_plan.steps)
                for (const auto& dependent : st.source->allow_conflicts)
                    for (const auto& req : st.requirements)
                        m_allowed_conflicts->insert({pyenv::normalize_name(dependent), req.normalized_name});
        }
        return *m_allowed_conflicts;
    }

    /// Run step i; an error return stops the run.
    Status run_step(size_t i) {
        auto& report = m_report.steps[i];
        auto step = m_plan.steps[i];  // copy: a re-plan below replaces m_plan
        const size_t total = m_plan.steps.size();
        m_observer.step_started(i, total, step);
        const auto start = Clock::now();

        std::string why_run;
        std::string reason = skip_reason(step, why_run);
        const bool skip = !reason.empty();
        steps::StepContext ctx;
        ctx.venv = m_plan.venv;
        ctx.on_output = [this](std::string_view chunk) { m_observer.step_output(chunk); };
        if (!skip || m_options.verify || reason != "up to date") {
            ctx.log_path = m_plan.venv / ".bootstrap" / "logs" / m_report.run_id /
                           fmt::format("{:02}-{}.log", i + 1, step.id);
            report.log = ctx.log_path.string();
        }

        Status status;
        if (!skip) {
            report.reason = why_run;
            BS_CHECK(ensure_before_snapshot());
            status = run_attempts(step, ctx, report);
        } else {
            report.reason = reason;
        }
        const bool run_verify = !skip || m_options.verify || reason != "up to date";
        if (status && run_verify && !step.verify.empty()) status = steps::verify(step, ctx);

        report.seconds = since(start);
        if (!status) return finish_failed(i, step, report, status.error());

        report.result = skip ? StepResult::skipped : StepResult::ran;
        if (step.kind == recipe::StepKind::venv && step.keep_venv && !skip) {
            report.result = StepResult::skipped;
            report.reason = step.note;
        }
        BS_CHECK(record_success(i, step, report, skip && reason == "up to date"));
        m_observer.step_finished(i, total, report);

        // Creating the venv makes its interpreter's facts known: resolve the later steps now.
        if (step.kind == recipe::StepKind::venv && !skip && !step.keep_venv) {
            BS_CHECK(replan(m_plan.venv));
            BS_TRY(m_installed, scan_installed(m_facts));
        }
        return {};
    }

    /// The newest history entry, once (origins of unchanged packages carry over from it).
    const manifest::Manifest* previous_manifest() {
        if (!m_previous_loaded) {
            m_previous_loaded = true;
            auto entries = manifest::list_history(m_plan.venv);
            if (entries && !entries->empty()) {
                auto m = manifest::load_manifest(entries->back().file);
                if (m) m_previous = std::move(*m);
                else m_report.warnings.push_back(m.error().message);
            }
        }
        return m_previous ? &*m_previous : nullptr;
    }

    /// Taken lazily, right before the first step that changes something: a run in which every
    /// step is up to date takes no snapshot and writes no history.
    Status ensure_before_snapshot() {
        if (m_before_taken) return {};
        m_before_taken = true;
        if (!m_facts.python) return {};  // no venv yet: "before" is empty
        BS_TRY(auto before, snapshot_for_run(m_plan, m_facts, m_report.run_id, "before", true));
        auto warnings = annotate_origins(before, previous_manifest(), m_journal, m_plan, m_store);
        m_report.warnings.insert(m_report.warnings.end(), warnings.begin(), warnings.end());
        BS_TRY(auto entry, manifest::append_history(m_plan.venv, before));
        m_report.history_before = entry.number;
        m_before = std::move(before);
        return {};
    }

    /// After the last step: snapshot, annotate, keep in history, and describe the change.
    void finish_manifests() {
        if (m_options.plan.locked && m_report.ok() && m_facts.python) check_drift();
        if (!m_before_taken || !m_facts.python) return;
        auto after = snapshot_for_run(m_plan, m_facts, m_report.run_id, "after", m_report.ok());
        if (!after) {
            m_report.warnings.push_back("cannot snapshot the venv after the run: " + after.error().message);
            return;
        }
        const manifest::Manifest* previous = m_before ? &*m_before : previous_manifest();
        auto warnings = annotate_origins(*after, previous, m_journal, m_plan, m_store);
        m_report.warnings.insert(m_report.warnings.end(), warnings.begin(), warnings.end());
        m_after = *after;
        if (auto entry = manifest::append_history(m_plan.venv, *after))
            m_report.history_after = entry->number;
        else
            m_report.warnings.push_back(entry.error().message);
        manifest::Manifest fresh = *after;  // a new venv: only its packages are news
        fresh.packages.clear();
        auto d = manifest::diff(m_before ? *m_before : fresh, *after);
        m_report.changes = manifest::format_diff(d);
        m_report.changes_summary = d.summary();
    }

    /// --locked: the venv must hold exactly the lock's versions.
    void check_drift() {
        auto now = snapshot_for_run(m_plan, m_facts, m_report.run_id, "locked", true);
        if (!now) {
            m_report.error = now.error();
            return;
        }
        auto drift = manifest::lock_drift(*m_options.plan.locked, *now);
        if (!drift.empty())
            m_report.error = Error{ErrorCode::step_failed,
                                   fmt::format("the venv differs from the lockfile in {} package(s)", drift.size()),
                                   core::join(drift, "\n")};
    }

    /// --rollback-on-failure: put the venv back as the before-snapshot recorded it (a venv this
    /// run created goes back to holding no packages).
    void restore_before() {
        if (!m_before_taken || !m_facts.python) return;
        manifest::Manifest target;
        if (m_before) {
            target = *m_before;
        } else if (m_after) {
            target = *m_after;
            target.packages.clear();
        } else {
            return;
        }
        RollbackOptions options;
        options.run_id = m_report.run_id;
        options.net = m_plan.net;
        options.installer = m_plan.installer->name();
        RollbackObserver observer;
        observer.on_message = [this](std::string_view text) { m_observer.message(text); };
        m_observer.message(fmt::format("step failed: rolling the venv back to {}",
                                       m_report.history_before
                                           ? fmt::format("history #{}", *m_report.history_before)
                                           : std::string("its state before the run (no packages)")));
        auto rolled = rollback_to(m_plan.venv, target, options, observer);
        if (!rolled) {
            m_report.warnings.push_back("rollback after the failure did not complete: " + rolled.error().message);
            if (!rolled.error().detail.empty()) m_report.warnings.push_back(rolled.error().detail);
            return;
        }
        m_report.rolled_back = true;
    }

    Status run_attempts(const steps::ResolvedStep& step, steps::StepContext& ctx, StepReport& report) {
        Status status;
        for (int attempt = 1; attempt <= step.attempts; ++attempt) {
            report.attempts = attempt;
            auto outcome = steps::execute(step, ctx);
            if (outcome) {
                if (*outcome == steps::Outcome::skipped_creates) report.reason = "creates: " + step.creates + " exists";
                if (*outcome == steps::Outcome::skipped_unless) report.reason = "unless: command succeeded";
                if (!ctx.note.empty()) report.reason = ctx.note;
                if (attempt > 1) report.reason = fmt::format("succeeded on attempt {}/{}", attempt, step.attempts);
                return {};
            }
            status = tl::unexpected(outcome.error());
            if (outcome.error().code == ErrorCode::interrupted || attempt == step.attempts) break;
            double wait = m_options.backoff_base * static_cast<double>(1 << (attempt - 1));
            m_observer.message(fmt::format("step '{}': attempt {}/{} failed ({}); retrying in {}", step.id,
                                           attempt, step.attempts, outcome.error().message,
                                           core::format_duration(wait)));
            if (!core::sleep_interruptible(wait)) return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id));
        }
        return status;
    }

    Status finish_failed(size_t i, const steps::ResolvedStep& step, StepReport& report, Error error) {
        const bool interrupted = error.code == ErrorCode::interrupted || core::interrupt_signal() != 0;
        if (interrupted) error.code = ErrorCode::interrupted;
        report.error = error;
        report.result = interrupted           ? StepResult::interrupted
                        : step.optional      ? StepResult::optional_failed
                                              : StepResult::failed;
        JournalEntry& entry = m_journal.steps[step.id];
        entry.key = step.key;
        entry.status = interrupted ? StepStatus::interrupted : StepStatus::failed;
        entry.run_id = m_report.run_id;
        entry.finished_at = core::utc_iso8601();
        entry.seconds = report.seconds;
        entry.log = report.log;
        entry.dists.clear();
        BS_CHECK(m_journal.save(m_plan.venv));
        m_observer.step_finished(i, m_plan.steps.size(), report);
        // What a step changed before failing is real: later steps see it.
        if (auto rescanned = scan_installed(m_facts)) m_installed = std::move(*rescanned);
        if (report.result == StepResult::optional_failed) return {};
        return tl::unexpected(error);
    }

    /// Journal a passed step; the distributions it changed now belong to it.
    Status record_success(size_t, const steps::ResolvedStep& step, StepReport& report, bool unchanged) {
        JournalEntry& entry = m_journal.steps[step.id];
        if (unchanged && entry.key == step.key) {
            // A no-op must stay cheap: write only when refreshed stamps need keeping.
            if (!m_journal_dirty) return {};
            m_journal_dirty = false;
            return m_journal.save(m_plan.venv);
        }
        Installed before = std::move(m_installed);
        if (step.kind == recipe::StepKind::venv) {
            BS_TRY(m_facts, gather_facts(m_plan.venv, true));
        }
        BS_TRY(m_installed, scan_installed(m_facts));

        std::set<std::string> changed;
        for (const auto& [name, d] : m_installed) {
            auto it = before.find(name);
            if (it == before.end() || !same_dist(it->second, d)) changed.insert(name);
        }
        for (const auto& [name, d] : before)
            if (!m_installed.count(name)) changed.insert(name);
        // Ownership moves forward only: what an earlier step installed and this one changed now
        // belongs to this step. A later step's record is left alone, so that if this step undid
        // its work (torch re-pinning cublas), the later step no longer holds and runs again.
        for (size_t j = 0; j < step.index; ++j) {
            auto it = m_journal.steps.find(m_plan.steps[j].id);
            if (it == m_journal.steps.end()) continue;
            for (const auto& name : changed) it->second.dists.erase(name);
        }

        std::set<std::string> owned;
        for (const auto& name : changed)
            if (m_installed.count(name)) owned.insert(name);
        for (const auto& req : step.requirements)
            if (m_installed.count(req.normalized_name)) owned.insert(req.normalized_name);

        entry.dists.clear();
        for (const auto& name : owned) {
            BS_TRY(auto rec, record_of(m_installed.at(name)));
            entry.dists[name] = rec;
        }
        entry.key = step.key;
        entry.status = StepStatus::ok;
        entry.run_id = m_report.run_id;
        entry.finished_at = core::utc_iso8601();
        entry.seconds = report.seconds;
        entry.log = report.log;
        return m_journal.save(m_plan.venv);
    }

    const recipe::Recipe& m_recipe;
    const RunOptions& m_options;
    RunObserver& m_observer;
    Facts m_facts;
    Plan m_plan;
    Journal m_journal;
    Installed m_installed;
    RunReport m_report;
    bool m_journal_dirty = false;
    manifest::ArtifactStore m_store{manifest::bootstrap_home(exec::current_environment()) / "artifacts"};
    bool m_before_taken = false;
    std::optional<manifest::Manifest> m_before;
    std::optional<manifest::Manifest> m_after;
    bool m_previous_loaded = false;
    std::optional<manifest::Manifest> m_previous;
    std::optional<std::set<std::pair<std::string, std::string>>> m_allowed_conflicts;
};

}  // namespace

const char* to_string(StepResult r) {
    switch (r) {
        case StepResult::ran: return "ran";
        case StepResult::skipped: return "skipped";
        case StepResult::failed: return "failed";
        case StepResult::optional_failed: return "failed (optional)";
        case StepResult::interrupted: return "interrupted";
        case StepResult::not_selected: return "not selected";
        case StepResult::not_reached: return "not reached";
    }
    return "?";
}

Result<RunReport> run_recipe(const recipe::Recipe& recipe, const RunOptions& options, RunObserver& observer) {
    Runner runner(recipe, options, observer);
    return runner.run();
}

}  // namespace bootstrap::engine
