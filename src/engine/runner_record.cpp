// What a run writes of each step: the journal entry of a passed or failed step, the overrides
// files, the verified state, the device facts; and --locked drift.

#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/fixed_point.hpp"
#include "engine/run_loop.hpp"
#include "engine/run_manifests.hpp"
#include "manifest/lockfile.hpp"
#include "pyenv/dist_info.hpp"
#include "state/journal.hpp"
#include "steps/kind.hpp"

namespace bootstrap::engine {

namespace {

Result<state::DistRecord> record_of(const pyenv::Distribution& d) {
    BS_TRY(auto digest, pyenv::record_digest(d));
    return state::DistRecord{d.version, digest, d.record_stamp};
}

/// A step that ran a command of the recipe's in the venv's environment (a run step) with a
/// Python other than the venv's: its failure says nothing about the venv.
std::string foreign_interpreter_note(const steps::ResolvedStep& step) {
    if (!steps::kind_of(step.kind).venv_environment || step.argv.empty()) return {};
    const fs::path program = step.argv[0];
    const std::string name = program.filename().string();
    if (!core::starts_with(name, "python") && !core::starts_with(name, "pip")) return {};
    auto venv_it = step.child_env.find("VIRTUAL_ENV");
    if (venv_it == step.child_env.end()) return {};
    const fs::path bin = fs::path(venv_it->second) / "bin";
    if (program.parent_path() == bin) return {};
    return fmt::format(
        "\nnote: this step ran {}, not the venv's interpreter ({}): what it could not find is not "
        "missing from the venv; write `{}` (the venv's) or `{{venv.python}}` in argv",
        program.string(), (bin / "python").string(), name);
}

bool same_dist(const pyenv::Distribution& a, const pyenv::Distribution& b) {
    return a.version == b.version && a.record_stamp == b.record_stamp;
}

}  // namespace

/// Before an install or build step that keeps earlier steps' overrides runs: their versions now.
Status Runner::write_overrides(const steps::ResolvedStep& step) const {
    const auto kept = steps::overrides_of(step);
    if (kept.file == nullptr || !*kept.file) return {};
    if (kept.locked_pins != nullptr)
        return core::write_file_atomic(**kept.file, core::join(*kept.locked_pins, "\n") + "\n");
    return core::write_file_atomic(**kept.file, overrides_text(step, m_installed));
}

/// `retry_can_help`: false when another attempt gives the same answer (an optional step is
/// then skipped while its key holds). `fatal`: the run stops even for an optional step (it
/// undid an earlier step).
Status Runner::finish_failed(size_t i, const steps::ResolvedStep& step, StepReport& report, Error error, bool in_verify,
                             bool retry_can_help, bool fatal) {
    const bool interrupted = error.code == ErrorCode::interrupted || core::interrupt_signal() != 0;
    if (interrupted) error.code = ErrorCode::interrupted;
    if (auto note = foreign_interpreter_note(step); !note.empty()) {
        error.detail += note;
        report.foreign_interpreter = true;
    }
    report.error = error;
    // The label says what went wrong, never why the step was due ("failed: up to date"),
    // and nothing when the result says it all ("failed: failed").
    report.reason = interrupted                        ? std::string(in_verify ? "while verifying" : "")
                    : in_verify                        ? std::string("verify failed")
                    : error.code == ErrorCode::timeout ? std::string("timed out")
                    : report.attempts > 1              ? fmt::format("failed {} attempts", report.attempts)
                                                       : std::string();
    report.result = interrupted               ? StepResult::interrupted
                    : step.optional && !fatal ? StepResult::optional_failed
                                              : StepResult::failed;
    state::JournalEntry& entry = m_journal.steps[step.id];
    entry.key = step.key;
    entry.inputs = step.key_inputs;
    entry.status = interrupted ? state::StepStatus::interrupted : state::StepStatus::failed;
    entry.run_id = m_report.run_id;
    entry.finished_at = core::utc_iso8601();
    entry.seconds = report.seconds;
    entry.log = report.log;
    entry.dists.clear();
    entry.failure = core::redact_text(error.message);
    entry.retry_can_help = retry_can_help;
    BS_CHECK(m_journal.save(m_plan.venv));
    m_observer.step_finished(i, m_plan.steps.size(), report);
    // What a step changed before failing is real: later steps see it.
    if (auto rescanned = scan_installed(m_facts)) m_installed = std::move(*rescanned);
    if (report.result == StepResult::optional_failed) return {};
    return tl::unexpected(error);
}

/// Journal a passed step; the distributions it changed now belong to it.
/// `after`: the venv as scanned after the step ran, when the caller has it.
Status Runner::record_success(size_t, const steps::ResolvedStep& step, StepReport& report, bool unchanged,
                              bool verified, std::optional<Installed> after) {
    state::JournalEntry& entry = m_journal.steps[step.id];
    if (unchanged && key_matches(entry, step)) {
        // Settled under bootstrap-step-v3 (or by a bootstrap that kept no inputs): the step
        // holds, so it takes its new key without running.
        const bool rekey = entry.key != step.key || entry.inputs != step.key_inputs;
        if (rekey) {
            core::log::debug("step {}: re-keyed {} -> {} (it still holds)", step.id, entry.key, step.key);
            entry.key = step.key;
            entry.inputs = step.key_inputs;
        }
        if (verified) {
            entry.venv_state = installed_state(m_installed);
            skip_rule().clear_refreshed();
            return m_journal.save(m_plan.venv);
        }
        // A no-op must stay cheap: write only when refreshed stamps or new keys need keeping.
        if (!skip_rule().refreshed() && !rekey) return {};
        skip_rule().clear_refreshed();
        return m_journal.save(m_plan.venv);
    }
    Installed before = std::move(m_installed);
    if (steps::kind_of(step.kind).makes_venv) {
        BS_TRY(m_facts, gather_facts(m_plan.venv, true));
    }
    if (after) {
        m_installed = std::move(*after);
    } else {
        BS_TRY(m_installed, scan_installed(m_facts));
    }

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
    if (const auto* own = steps::owned_of(step).requirements)
        for (const auto& req : *own)
            if (m_installed.count(req.normalized_name)) owned.insert(req.normalized_name);

    entry.dists.clear();
    for (const auto& name : owned) {
        BS_TRY(auto rec, record_of(m_installed.at(name)));
        entry.dists[name] = rec;
    }
    entry.key = step.key;
    entry.inputs = step.key_inputs;
    entry.status = state::StepStatus::ok;
    entry.venv_state = installed_state(m_installed);
    entry.index_urls = step.index_urls();
    entry.run_id = m_report.run_id;
    entry.finished_at = core::utc_iso8601();
    entry.seconds = report.seconds;
    entry.log = report.log;
    return m_journal.save(m_plan.venv);
}

/// A run that passed leaves the venv its recipe stands for: every passed step's verify
/// clauses now answer for that state, and re-run only when it changes (or an earlier step
/// of a later run runs). A no-op run finds nothing to update and writes nothing.
Status Runner::settle_verified_state() {
    const std::string state = installed_state(m_installed);
    bool changed = false;
    for (const auto& step : m_plan.steps) {
        auto it = m_journal.steps.find(step.id);
        if (it == m_journal.steps.end() || it->second.status != state::StepStatus::ok || it->second.key != step.key)
            continue;
        if (it->second.venv_state == state) continue;
        it->second.venv_state = state;
        changed = true;
    }
    return changed ? m_journal.save(m_plan.venv) : Status{};
}

/// What {device.*} stood for in a run that ran something: the journal keeps it for doctor's
/// built-for check, as a history entry would (a run that changed no distribution has none).
void Runner::record_device_facts() {
    if (!m_history.before_taken() || m_plan.device_facts.empty() || m_journal.device == m_plan.device_facts) return;
    m_journal.device = m_plan.device_facts;
    if (auto saved = m_journal.save(m_plan.venv); !saved) m_report.warnings.push_back(saved.error().message);
}

/// --locked: the venv must hold exactly the lock's versions.
void Runner::check_drift() {
    auto now = snapshot_for_run(m_plan, m_facts, m_report.run_id, "locked", true);
    if (!now) {
        m_report.error = now.error();
        return;
    }
    auto drift = manifest::lock_drift(*m_options.plan.locked, *now, m_plan.locked_left_out);
    if (!drift.empty())
        m_report.error = Error{ErrorCode::step_failed,
                               fmt::format("the venv differs from the lockfile in {} package(s)", drift.size()),
                               core::join(drift, "\n")};
}

}  // namespace bootstrap::engine
