#include "engine/run_history.hpp"

#include <system_error>

#include "core/interrupt.hpp"
#include "engine/run_manifests.hpp"
#include "exec/environment.hpp"
#include "manifest/diff.hpp"
#include "manifest/history.hpp"

namespace bootstrap::engine {

namespace {

/// Two manifests of the same venv state (what run/label/time say aside).
bool same_state(manifest::Manifest a, manifest::Manifest b) {
    a.run.reset();
    b.run.reset();
    a.label = b.label;
    return manifest::to_json(a) == manifest::to_json(b);
}

}  // namespace

RunHistory::RunHistory(const Plan& plan, const state::Journal& journal, RunReport& report)
    : m_plan(plan),
      m_journal(journal),
      m_report(report),
      m_store(manifest::bootstrap_home(exec::current_environment()) / "artifacts") {}

/// The newest history entry, once (origins of unchanged packages carry over from it).
const manifest::Manifest* RunHistory::previous_manifest() {
    if (!m_previous_loaded) {
        m_previous_loaded = true;
        auto entries = manifest::list_history(m_plan.venv);
        if (entries && !entries->empty()) {
            auto m = manifest::load_manifest(entries->back().file);
            m_previous_number = entries->back().number;
            if (m) m_previous = std::move(*m);
            else m_report.warnings.push_back(m.error().message);
        }
    }
    return m_previous ? &*m_previous : nullptr;
}

Status RunHistory::take_before(const Facts& facts) {
    if (m_before_taken) return {};
    m_before_taken = true;
    if (!facts.python) return {};  // no venv yet: "before" is empty
    BS_TRY(auto before, snapshot_for_run(m_plan, facts, m_report.run_id, "before", true));
    auto warnings = annotate_origins(before, previous_manifest(), m_journal, m_plan, m_store);
    m_report.warnings.insert(m_report.warnings.end(), warnings.begin(), warnings.end());
    if (const auto* previous = previous_manifest(); previous && same_state(*previous, before)) {
        // The venv is as the newest entry recorded it: that entry is the "before".
        m_report.history_before = m_previous_number;
    } else {
        // Written now, so a run that dies midway leaves the state it started from in the
        // history; finish takes it back if the run changed nothing.
        BS_TRY(auto entry, manifest::append_history(m_plan.venv, before));
        m_report.history_before = entry.number;
        m_before_entry = entry.file;
    }
    m_before = std::move(before);
    return {};
}

void RunHistory::finish(const Facts& facts) {
    if (!m_before_taken || !facts.python) return;
    // An interrupted run changed the venv too, and the snapshot's host probes (gcc, nvcc:
    // milliseconds) refuse to start while the flag is set: set it aside for the snapshot, so
    // only a second interrupt stops it, then put it back.
    const int pending = core::interrupt_signal();
    core::set_interrupt_signal(0);
    auto after = snapshot_for_run(m_plan, facts, m_report.run_id, "after", m_report.ok());
    if (pending != 0 && core::interrupt_signal() == 0) core::set_interrupt_signal(pending);
    if (!after) {
        m_report.warnings.push_back("cannot snapshot the venv after the run: " + after.error().message);
        return;
    }
    const manifest::Manifest* previous = m_before ? &*m_before : previous_manifest();
    auto warnings = annotate_origins(*after, previous, m_journal, m_plan, m_store);
    m_report.warnings.insert(m_report.warnings.end(), warnings.begin(), warnings.end());
    m_after = *after;
    // History records changes: a run that changed no distribution (a run step, a verify, an
    // interrupted or failed run that left the venv as it was) leaves no entry, so
    // `rollback --last` still undoes the newest change. The run itself is in the journal and
    // its bootstrap.log.
    if (m_before && same_state(*m_before, *after)) {
        std::error_code ec;
        if (!m_before_entry.empty()) fs::remove(m_before_entry, ec);
        m_report.history_before.reset();
        m_report.changes_summary = "no change";
        m_changed_nothing = true;
        return;
    }
    if (auto entry = manifest::append_history(m_plan.venv, *after)) m_report.history_after = entry->number;
    else m_report.warnings.push_back(entry.error().message);
    manifest::Manifest fresh = *after;  // a new venv: only its packages are news
    fresh.packages.clear();
    auto d = manifest::diff(m_before ? *m_before : fresh, *after);
    m_report.changes = manifest::format_diff(d);
    m_report.changes_summary = d.summary();
}

std::optional<manifest::Manifest> RunHistory::restore_target(const Facts& facts) const {
    if (!m_before_taken || !facts.python || m_changed_nothing) return std::nullopt;
    if (m_before) return *m_before;
    if (!m_after) return std::nullopt;
    manifest::Manifest target = *m_after;
    target.packages.clear();
    return target;
}

}  // namespace bootstrap::engine
