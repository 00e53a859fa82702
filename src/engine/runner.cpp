#include "engine/runner.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/attempts.hpp"
#include "engine/fixed_point.hpp"
#include "engine/image_state.hpp"
#include "engine/install_repair.hpp"
#include "engine/run_history.hpp"
#include "engine/run_loop.hpp"
#include "engine/run_manifests.hpp"
#include "engine/skip_rule.hpp"
#include "exec/environment.hpp"
#include "exec/process.hpp"
#include "manifest/lockfile.hpp"
#include "manifest/package_cache.hpp"
#include "pyenv/broken_install.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/name.hpp"
#include "state/journal.hpp"
#include "state/layout.hpp"
#include "state/venv_lock.hpp"
#include "steps/executor.hpp"
#include "steps/kind.hpp"
#include "steps/venv_swap.hpp"

namespace bootstrap::engine {

namespace {

/// The debug log's line for a step's decision (both keys: a v3 journal can be matched by hand).
void log_decision(const steps::ResolvedStep& step, const StepDecision& d) {
    core::log::debug("step {} ({}): {}: {}; key {} (bootstrap-step-v3: {})", step.id, step.kind, to_string(d.decision),
                     d.reason, step.key, step.legacy_key);
}

}  // namespace

Result<RunReport> Runner::run() {
    const double start = m_world.now();
    // SOURCE_DATE_EPOCH stands in for the time in everything the run records: a malformed
    // one is refused before anything is written.
    BS_CHECK(core::source_date_epoch());
    // The debug log (core/log.hpp): kept in memory until the run changes something.
    core::log::set_secret_names(m_recipe.env_secret);
    core::log::begin_run();
    struct EndLog {
        ~EndLog() { core::log::end_run(); }
    } end_log;
    core::log::debug("run: recipe {} ({} steps), bootstrap pid {}", m_recipe.file.string(), m_recipe.steps.size(),
                     getpid());
    BS_TRY(auto venv_facts_pre, gather_facts({}, true));
    BS_TRY(auto venv, resolve_venv_path(m_recipe, m_options.plan, venv_facts_pre));
    BS_CHECK(replan(venv));
    core::log::debug("venv {}", venv.string());
    // Said before anything runs: building for an arch nothing confirmed (--arch, --no-device),
    // a locked step asking other indexes than the lock recorded.
    for (const auto& notice : m_plan.notices) m_observer.message("warning: " + notice);

    // A settled venv is confirmed under a shared lock and left untouched: a no-op run
    // writes nothing, the lock file included (an image layer stays empty, a read-only
    // venv can be checked).
    BS_TRY(bool settled, confirm_settled(venv));
    if (settled) {
        m_report.seconds = since(start);
        core::log::debug("run: every step holds; nothing written");
        return m_report;
    }
    m_skip.reset();  // decided again under the exclusive lock

    bool waited = false;
    BS_TRY(auto lock, state::VenvLock::acquire(venv, m_options.lock_timeout, [&](long pid) {
               waited = true;
               m_observer.message(state::VenvLock::waiting_message(pid, m_options.lock_timeout));
           }));
    // Another run may have changed the venv while we waited; otherwise the plan stands (a
    // second plan would double the cost of a no-op run, device probing included).
    // A recreation that an earlier run did not finish is undone first (steps/venv_swap.hpp).
    BS_TRY(bool restored, steps::restore_unfinished_recreate(venv));
    if (restored) m_observer.message("restored the venv whose recreation an earlier run did not finish");
    if (waited || restored) BS_CHECK(replan(venv));
    BS_CHECK(unseal(venv));  // this run may change the venv: no longer as `seal` left it
    // Made under the lock: unique among this venv's run logs.
    m_report.run_id = core::new_run_id(m_recipe.source_digest, state::Layout(venv).logs());
    core::log::debug("run id {}", m_report.run_id);
    // An install cut short (no METADATA) makes uv fail on every later install and cannot be
    // uninstalled: remove it, so that the step that installs it runs again.
    if (m_facts.python) {
        BS_TRY(auto removed, pyenv::remove_broken_installs(*m_facts.python));
        for (const auto& note : removed) m_observer.message(note);
        BS_CHECK(repair_cut_short(venv));
    }
    BS_TRY(m_journal, state::Journal::load(venv));
    m_journal.recipe = m_recipe.name;
    BS_CHECK(record_declared_overrides(m_plan));
    BS_TRY(m_installed, scan_installed(m_facts));

    m_report.venv = venv;
    m_report.steps.resize(m_plan.steps.size());
    for (size_t i = 0; i < m_plan.steps.size(); ++i) {
        m_report.steps[i].id = m_plan.steps[i].id;
        m_report.steps[i].kind = m_plan.steps[i].kind;
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
    // The recipe is a fixed point: every passed step's requirements hold at the end.
    if (m_report.ok()) {
        if (auto error = fixed_point_error(skip_rule().unsatisfied(m_installed), m_recipe.file))
            m_report.error = std::move(*error);
    }
    if (m_report.ok() && m_options.plan.exact && m_facts.python)
        if (auto removed = remove_extras(); !removed) m_report.error = removed.error();
    if (m_report.ok()) BS_CHECK(settle_verified_state());
    record_device_facts();
    if (m_options.plan.locked && m_report.ok() && m_facts.python) check_drift();
    m_history.finish(m_facts);
    if (m_report.error && m_report.error->code != ErrorCode::interrupted && m_options.rollback_on_failure)
        restore_before();
    m_report.seconds = since(start);
    core::log::debug("run {} {} in {:.3f} s", m_report.run_id,
                     m_report.error ? "failed: " + m_report.error->message : std::string("passed"), m_report.seconds);
    return m_report;
}

/// True when, under a shared lock, every selected step is up to date exactly as the journal
/// records it (no re-key, no refreshed stamp, no verify due), the recipe is a fixed point
/// of the venv and nothing awaits repair: the report is filled, every step skipped, and
/// nothing was written. False (nothing reported) sends the run down the locked path.
Result<bool> Runner::confirm_settled(const fs::path& venv) {
    if (m_options.force || m_options.verify || !m_facts.python) return false;
    BS_TRY(auto reader, state::VenvLock::try_read(venv));
    if (!reader || steps::recreate_pending(venv) || read_changing_marker(venv)) return false;
    if (auto recorded = core::read_file(declared_overrides_path(venv));
        !recorded || *recorded != declared_overrides_text(declared_overrides(m_plan)))
        return false;
    // One scan, broken dist-infos included (one awaits repair: not settled), each unchanged
    // dist-info recalled from the snapshot's package cache (read, never written here).
    // The journal is read meanwhile, on another thread.
    auto journal = state::Journal::load_in_background(venv);
    const auto cache = manifest::PackageCache::of_venv(venv);
    BS_TRY(m_installed, scan_installed(m_facts, /*include_broken=*/true, &cache));
    for (const auto& [name, dist] : m_installed)
        if (!dist.broken.empty()) return false;
    BS_TRY(m_journal, journal.get());
    if (m_options.plan.exact) {  // extras to remove: not settled, whatever the steps say
        BS_TRY(auto extras, unowned_extras(m_plan, m_journal, m_installed, m_facts.python->markers));
        if (!extras.empty()) return false;
    }
    auto decisions = settled_decisions(m_plan, m_facts, m_journal, m_installed, log_decision);
    if (!decisions) return false;
    if (m_options.plan.locked) {
        BS_TRY(auto now, snapshot_for_run(m_plan, m_facts, "", "locked", true));
        if (!manifest::lock_drift(*m_options.plan.locked, now, m_plan.locked_left_out).empty()) return false;
    }
    m_report.venv = venv;
    m_report.run_id = core::new_run_id(m_recipe.source_digest, state::Layout(venv).logs());
    m_report.steps.resize(m_plan.steps.size());
    for (size_t i = 0; i < m_plan.steps.size(); ++i) {
        auto& report = m_report.steps[i];
        report.id = m_plan.steps[i].id;
        report.kind = m_plan.steps[i].kind;
        if (!selected(i)) {
            report.result = StepResult::not_selected;
            report.reason = "not selected";
            continue;
        }
        m_observer.step_started(i, m_plan.steps.size(), m_plan.steps[i]);
        report.result = StepResult::skipped;
        report.reason = (*decisions)[i].reason;
        m_observer.step_finished(i, m_plan.steps.size(), report);
    }
    return true;
}

/// A step a run did not see end may have left an install cut short (engine/install_repair.hpp):
/// the files of every distribution are checked, and the incomplete ones removed so that
/// their steps install them again. `--force` checks too, marker or not.
Status Runner::repair_cut_short(const fs::path& venv) {
    auto marker = read_changing_marker(venv);
    if (!marker && !m_options.force) return {};
    if (marker)
        m_observer.message(describe(*marker) + ": checking every installed distribution's files against its RECORD");
    BS_TRY(auto notes, repair_incomplete_installs(*m_facts.python, venv));
    for (const auto& note : notes) m_observer.message(note);
    if (!notes.empty()) BS_CHECK(replan(venv));
    return {};
}

/// After a step's action: a passed one leaves the venv whole; a failed one may have been
/// stopped mid-copy by its own timeout or error, so what it left incomplete goes now (an
/// optional step's failure lets the run go on). An interrupted one keeps the marker: the
/// next run checks.
Status Runner::settle_changing(const steps::ResolvedStep& step, bool action_passed) {
    if (action_passed) return clear_changing(m_plan.venv);
    if (core::interrupt_signal() != 0) {
        m_observer.message(fmt::format(
            "step `{}` was stopped while it changed the venv: the next run checks the installed files first", step.id));
        return {};
    }
    if (!m_facts.python) return clear_changing(m_plan.venv);
    BS_TRY(auto notes, repair_incomplete_installs(*m_facts.python, m_plan.venv));
    for (const auto& note : notes) m_observer.message(note);
    return {};
}

Status Runner::replan(const fs::path& venv) {
    BS_TRY(m_facts, gather_facts(venv, true));
    BS_TRY(m_plan, make_plan(m_recipe, m_options.plan, m_facts));
    m_skip.reset();
    return {};
}

SkipRule& Runner::skip_rule() {
    if (!m_skip) m_skip.emplace(m_plan, m_facts, m_journal);
    return *m_skip;
}

/// Run step i; an error return stops the run.
Status Runner::run_step(size_t i) {
    auto& report = m_report.steps[i];
    auto step = m_plan.steps[i];  // copy: a re-plan below replaces m_plan
    const size_t total = m_plan.steps.size();
    m_observer.step_started(i, total, step);
    const double start = m_world.now();

    const auto decision = skip_rule().decide(step, m_installed, m_earlier_ran, m_options.force, m_options.verify);
    const bool runs = decision.runs_action();
    const bool verifies = !step.verify.empty() && decision.decision != Decision::up_to_date;
    log_decision(step, decision);
    // `run -v`: a changed key, input by input.
    for (const auto& change : decision.changes) core::log::info("step {} changed: {}", step.id, change);
    if (core::log::enabled(core::log::Level::debug))
        for (const auto& line : core::split(step.key_explain, '\n'))
            if (!line.empty()) core::log::debug("step {} key input: {}", step.id, line);
    if (decision.decision == Decision::optional_failed) {
        // Failed for good under this key: no log, no snapshot, no network.
        report.result = StepResult::skipped;
        report.reason = decision.reason;
        report.seconds = since(start);
        m_observer.step_finished(i, total, report);
        return {};
    }
    if (runs || verifies) BS_CHECK(check_image_secrets(step, m_facts));
    steps::StepContext ctx;
    ctx.venv = m_plan.venv;
    ctx.on_output = [this](std::string_view chunk) { m_observer.step_output(chunk); };
    ctx.on_progress = [this](const pyenv::DownloadProgress& p) { m_observer.step_progress(p); };
    if (runs || verifies) {
        const fs::path dir = state::Layout(m_plan.venv).run_logs(m_report.run_id);
        ctx.log_path = dir / fmt::format("{:02}-{}.log", i + 1, step.id);
        report.log = ctx.log_path.string();
        // From here the run leaves logs: its debug log joins them (what it kept so far first).
        if (auto persisted = core::log::persist_run_log(dir / "bootstrap.log"); !persisted)
            m_observer.message("warning: " + persisted.error().message);
    }

    report.reason = decision.reason;
    Status status;
    steps::Outcome outcome = steps::Outcome::kept;
    std::vector<const steps::ResolvedStep*> held;
    steps::FailureClass failure;  // of the action, when it failed
    if (runs) {
        BS_CHECK(m_history.take_before(m_facts));
        BS_CHECK(write_overrides(step));
        if (m_facts.python) held = holding_before(step, m_plan, skip_rule(), m_installed);
        const bool marks = !steps::kind_of(step.kind).makes_venv;
        if (marks)
            BS_CHECK(mark_changing(m_plan.venv, {step.id, m_report.run_id, core::utc_iso8601()},
                                   m_facts.python ? &*m_facts.python : nullptr));
        auto ran = attempt_step(step, ctx, report, m_options.backoff_base, m_observer, m_world);
        if (marks) BS_CHECK(settle_changing(step, ran.outcome.has_value()));
        failure = ran.failure;
        if (ran.outcome) outcome = *ran.outcome;
        else
            status = tl::unexpected(with_override_note(step, ran.outcome.error(), m_installed,
                                                       m_facts.python ? &m_facts.python->markers : nullptr,
                                                       m_plan.installer->name()));
    }
    // A step that changed the venv must leave every earlier step's requirements holding;
    // otherwise it undid a deliberate choice, and the run fails here (even for an optional
    // step: the venv it leaves is not the one the recipe stands for).
    std::optional<Installed> after;
    if (status && outcome == steps::Outcome::ran && m_facts.python && !steps::kind_of(step.kind).makes_venv) {
        BS_TRY(auto scanned, scan_installed(m_facts));
        if (auto undone = undone_by(step, held, skip_rule(), m_installed, scanned)) {
            report.seconds = since(start);
            return finish_failed(i, step, report, std::move(*undone), false, true, true);
        }
        after = std::move(scanned);
    }
    bool in_verify = false;
    if (status && verifies) {
        in_verify = true;
        status = m_world.verify(step, ctx);
    }

    report.seconds = since(start);
    core::log::debug("step {}: {} in {:.3f} s", step.id, status ? "done" : "failed: " + status.error().message,
                     report.seconds);
    // Only the action's own failure can be permanent: a failed verify clause says something
    // about the venv, which can change.
    if (!status)
        return finish_failed(i, step, report, status.error(), in_verify,
                             in_verify || failure.kind != steps::FailureKind::permanent);

    report.result = runs                                         ? StepResult::ran
                    : decision.decision == Decision::verify_only ? StepResult::verified
                                                                 : StepResult::skipped;
    // Due to run, but it found its work done (the venv kept, a run step's `creates` there,
    // its `unless` command passing): the label says skipped, as its log does.
    if (outcome != steps::Outcome::ran && runs) {
        report.result = StepResult::skipped;
        if (step.kept) report.reason = step.note;
    }
    // What a check or a verify clause saw changes only when something actually ran.
    if (outcome == steps::Outcome::ran) m_earlier_ran = true;
    const bool unchanged = decision.decision == Decision::up_to_date || decision.decision == Decision::verify_only;
    BS_CHECK(record_success(i, step, report, unchanged, verifies, std::move(after)));
    m_observer.step_finished(i, total, report);

    // Creating the venv makes its interpreter's facts known: resolve the later steps now.
    if (steps::kind_of(step.kind).makes_venv && outcome == steps::Outcome::ran) {
        BS_CHECK(replan(m_plan.venv));
        BS_TRY(m_installed, scan_installed(m_facts));
    } else if (outcome == steps::Outcome::ran && i + 1 < m_plan.steps.size()) {
        // A later step's key reads the venv (a build's ABI packages, which this step may
        // have installed): resolve it against the venv as it is now, as the next run will,
        // or that run finds the key changed and runs the step again.
        BS_CHECK(replan(m_plan.venv));
    }
    return {};
}

/// --exact, after every step passed: what no step accounts for goes, as `uv pip sync` would
/// remove it (the history's before/after entries record it like any change).
Status Runner::remove_extras() {
    BS_TRY(auto extras, unowned_extras(m_plan, m_journal, m_installed, m_facts.python->markers));
    if (extras.empty()) return {};
    std::vector<std::string> names;
    for (const auto& e : extras) names.push_back(e.name);
    m_observer.message(fmt::format("--exact: removing {}: no step of the recipe installs {}", describe(extras),
                                   extras.size() == 1 ? "it" : "them"));
    BS_CHECK(m_history.take_before(m_facts));
    const auto command = m_plan.installer->uninstall(m_plan.venv, names);
    const fs::path dir = state::Layout(m_plan.venv).run_logs(m_report.run_id);
    BS_CHECK(core::create_directories(dir));
    exec::ProcessSpec spec;
    spec.argv = command.argv;
    spec.cwd = "/";  // no project discovery (pyenv/installer.hpp)
    spec.env = exec::compose_environment(m_facts.env, command.env_set, command.env_unset);
    spec.log_path = dir / "exact.log";
    spec.capture = true;
    BS_TRY(auto result, exec::run_process(spec));
    BS_TRY(m_installed, scan_installed(m_facts));
    if (!result.ok())
        return fail(result.interrupted ? ErrorCode::interrupted : ErrorCode::step_failed,
                    fmt::format("--exact: removing {} failed: {}", core::join(names, ", "), result.describe()),
                    fmt::format("command: {}\n{}\nlog: {}", core::redact_text(core::format_argv(command.argv)),
                                core::last_lines(result.output, 20), spec.log_path.string()));
    return {};
}

/// --rollback-on-failure: put the venv back as the before-snapshot recorded it (a venv this
/// run created goes back to holding no packages).
void Runner::restore_before() {
    auto target = m_history.restore_target(m_facts);
    if (!target) return;
    RestoreRequest request;
    request.venv = m_plan.venv;
    request.target = &*target;
    request.run_id = m_report.run_id;
    request.net = m_plan.net;
    request.installer = m_plan.installer->name();
    request.known_index_urls = steps::configured_index_urls(m_plan.steps);
    request.message = [this](std::string_view text) { m_observer.message(text); };
    m_observer.message(fmt::format("step failed: rolling the venv back to {}",
                                   m_report.history_before ? fmt::format("history #{}", *m_report.history_before)
                                                           : std::string("its state before the run (no packages)")));
    auto rolled = m_options.rollback_on_failure(request);
    if (!rolled) {
        m_report.warnings.push_back("rollback after the failure did not complete: " + rolled.error().message);
        if (!rolled.error().detail.empty()) m_report.warnings.push_back(rolled.error().detail);
        return;
    }
    m_report.rolled_back = true;
}

const char* to_string(StepResult r) {
    switch (r) {
        case StepResult::ran: return "ran";
        case StepResult::skipped: return "skipped";
        case StepResult::verified: return "verified";
        case StepResult::failed: return "failed";
        case StepResult::optional_failed: return "failed (optional)";
        case StepResult::interrupted: return "interrupted";
        case StepResult::not_selected: return "not selected";
        case StepResult::not_reached: return "not reached";
    }
    return "?";
}

Result<RunReport> run_recipe(const recipe::Recipe& recipe, const RunOptions& options, RunObserver& observer) {
    RealRunWorld world;
    return run_recipe(recipe, options, observer, world);
}

Result<RunReport> run_recipe(const recipe::Recipe& recipe, const RunOptions& options, RunObserver& observer,
                             RunWorld& world) {
    Runner runner(recipe, options, observer, world);
    return runner.run();
}

}  // namespace bootstrap::engine
