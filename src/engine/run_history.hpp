#pragma once
// The history side of one run (engine/runner.hpp): the "before" snapshot, taken lazily right
// before the first step that changes something (so a run in which every step is up to date
// takes none and writes nothing), the "after" snapshot, and the entries they make in the venv's
// numbered history. A run that changed no distribution leaves no entry: `rollback --last` still
// undoes the newest change.

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/manifest.hpp"
#include "state/journal.hpp"

namespace bootstrap::engine {

class RunHistory {
public:
    /// `plan`, `journal` and `report` are the run's own (read at each call: a re-plan replaces
    /// the plan in place); warnings and history numbers go into `report`.
    RunHistory(const Plan& plan, const state::Journal& journal, RunReport& report);

    /// Whether the "before" snapshot was taken (something was about to change).
    [[nodiscard]] bool before_taken() const { return m_before_taken; }

    /// Once, right before the first change: snapshot the venv (when it exists), annotate its
    /// origins, and append it to the history, unless the newest entry already records that
    /// state (then that entry is the "before"). Sets report.history_before.
    [[nodiscard]] Status take_before(const Facts& facts);

    /// After the last step: snapshot, annotate and append the "after" entry; when the venv is as
    /// it was before, drop the "before" entry this run wrote and say "no change". Fills
    /// report.history_after, changes and changes_summary (warnings for what could not be done).
    void finish(const Facts& facts);

    /// What --rollback-on-failure restores: the "before" snapshot (a venv this run created:
    /// the "after" one without packages); nullopt when nothing changed or nothing was taken.
    [[nodiscard]] std::optional<manifest::Manifest> restore_target(const Facts& facts) const;

private:
    const manifest::Manifest* previous_manifest();

    const Plan& m_plan;
    const state::Journal& m_journal;
    RunReport& m_report;
    manifest::ArtifactStore m_store;
    bool m_before_taken = false;
    std::optional<manifest::Manifest> m_before;
    fs::path m_before_entry;  // the "before" entry this run wrote ("" when it reused the newest)
    std::optional<manifest::Manifest> m_after;
    bool m_changed_nothing = false;  // the run's after-snapshot equals its before-snapshot
    bool m_previous_loaded = false;
    std::int64_t m_previous_number = 0;
    std::optional<manifest::Manifest> m_previous;
};

}  // namespace bootstrap::engine
