#pragma once
// Whether a step must run, and why: one rule shared by `run` (which acts on it) and `plan`
// (which shows it).
//
// A step's action is skipped when its key matches the journal, its promised files exist, the
// distributions it owns still have the versions and RECORD digests it left (ownership moves
// forward: what a later step changed on purpose is that step's), and, for an install step, the
// venv still satisfies its own requirements. An install step whose requirements are already
// satisfied skips the installer even when it never ran.
// Verify clauses (and a check step, which is only verify clauses) observe the whole venv, so
// they run again whenever the installed set differs from the one they last passed against, or
// an earlier step of the same run ran.
// An optional step that failed in a way another attempt cannot change (an impossible
// resolution, a missing path: steps::FailureKind::permanent) is skipped while its key holds,
// unless --retry-optional; one that failed for a transient reason is tried again.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/plan.hpp"
#include "pyenv/dist_info.hpp"
#include "state/journal.hpp"

namespace bootstrap::engine {

using Installed = std::map<std::string, pyenv::Distribution>;

enum class Decision {
    run,              // run the step (and then its verify clauses)
    verify_only,      // the action holds; its verify clauses must run again
    up_to_date,       // nothing to do
    satisfied,        // install step: its requirements already hold; the installer is not run
    optional_failed,  // an optional step failed for good under this key: not tried again
    not_selected,     // `plan` with --only/--skip/--from: the run leaves it alone
};

struct StepDecision {
    StepDecision() = default;
    StepDecision(Decision d, std::string why, std::vector<std::string> changed = {})
        : decision(d), reason(std::move(why)), changes(std::move(changed)) {}
    Decision decision = Decision::run;
    std::string reason;  // "first run", "step changed: env NCCL_ALGO: unset → Tree", ...
    /// A changed key: what changed, one line per input (core::explain_change).
    std::vector<std::string> changes;
    [[nodiscard]] bool runs_action() const { return decision == Decision::run; }
};

/// The journal's key for a step is the step's key, or its bootstrap-step-v3 key (a venv settled
/// by an older bootstrap: the step holds as it did, and is re-keyed when the run records it).
[[nodiscard]] bool key_matches(const state::JournalEntry& entry, const steps::ResolvedStep& step);

/// "step changed: env NCCL_ALGO: unset → Tree" (and "(+2 more)"), from `changes`.
[[nodiscard]] std::string changed_reason(const std::vector<std::string>& changes);

/// A digest of the installed set (names, versions, RECORD stamps): what a verify clause saw.
[[nodiscard]] std::string installed_state(const Installed& installed);

/// A passed step whose requirements the venv no longer satisfies, and why.
struct Unsatisfied {
    const steps::ResolvedStep* step = nullptr;
    std::string why;  // "nvidia-cublas 13.1.0.3 does not satisfy nvidia-cublas>=13.4.1.1"
};

class SkipRule {
public:
    /// `journal` may have RECORD stamps refreshed (see refreshed()).
    SkipRule(const Plan& plan, const Facts& facts, state::Journal& journal);

    /// The decision for `step` against the venv as `installed` holds it now. `earlier_ran`: an
    /// earlier step of this run ran (or, for `plan`, would run). `force` runs everything;
    /// `verify` re-runs verify clauses of steps that are up to date. `venv_state`: the
    /// installed_state(installed) the caller already has (computed here when nullptr).
    [[nodiscard]] StepDecision decide(const steps::ResolvedStep& step, const Installed& installed, bool earlier_ran,
                                      bool force, bool verify, const std::string* venv_state = nullptr);

    /// A journal entry's stamps were refreshed (its digests held): worth saving.
    [[nodiscard]] bool refreshed() const { return m_refreshed; }
    void clear_refreshed() { m_refreshed = false; }

    /// {dependent, dependency} pins that the recipe overrides: a step installing `dependency`
    /// with `allow_conflicts = ["dependent"]` (cublas over torch's pin, README pitfall P10).
    [[nodiscard]] const std::set<std::pair<std::string, std::string>>& allowed_conflicts() const {
        return m_allowed_conflicts;
    }

    /// Does `installed` satisfy what `step` (an install step) asked for? Pins the recipe
    /// overrides on purpose (allowed_conflicts) and names a later install step asks for itself
    /// do not count; other kinds always hold.
    [[nodiscard]] bool own_requirements_hold(const steps::ResolvedStep& step, const Installed& installed,
                                             std::string* why) const;

    /// `step` passed when it last ran (the journal says ok).
    [[nodiscard]] bool passed(const steps::ResolvedStep& step) const;

    /// The steps of the plan that passed (journal) whose requirements `installed` does not
    /// satisfy, in plan order: empty when the recipe is a fixed point of the venv.
    [[nodiscard]] std::vector<Unsatisfied> unsatisfied(const Installed& installed) const;

    /// Does the venv state a journal entry recorded (`recorded`) still hold? A stat state is
    /// compared with `stat_state` (installed_state(installed)); a sealed venv's content state
    /// (engine/image_state.hpp) with the content of `installed`.
    [[nodiscard]] bool venv_state_holds(const std::string& recorded, const std::string& stat_state,
                                        const Installed& installed);

private:
    bool outcome_holds(state::JournalEntry& entry, const Installed& installed, std::string* why);
    bool requirements_hold(const std::vector<pyenv::Requirement>& requirements, bool pre, const Installed& installed,
                           std::string* why) const;

    const Plan& m_plan;
    const Facts& m_facts;
    state::Journal& m_journal;
    bool m_refreshed = false;
    /// The venv is sealed (engine/image_state.hpp): stamps are not refreshed (nothing is written).
    bool m_sealed = false;
    /// {stat state, its content state}: computed once per installed set.
    std::pair<std::string, std::string> m_content;
    std::set<std::pair<std::string, std::string>> m_allowed_conflicts;
    /// step id -> names later install steps ask for themselves (they decide those versions).
    std::map<std::string, std::set<std::string>> m_superseded;
};

/// What `run` would do with each step of `plan` now (for `plan`): the journal and the venv as
/// they are, every step assumed to succeed. Reads only; writes nothing.
[[nodiscard]] Result<std::vector<StepDecision>> predict(const Plan& plan, const Facts& facts);
/// The same, from a journal and an installed set the caller already read (`journal` is the
/// rule's to re-key in memory: pass a copy to keep one).
[[nodiscard]] std::vector<StepDecision> predict(const Plan& plan, const Facts& facts, state::Journal journal,
                                                const Installed& installed);

/// Whether the selected steps of `plan` are settled in the venv exactly as `journal` records
/// them: each up to date under its current key with the same recorded inputs and venv state
/// (or an optional step that failed), no stamp to refresh, and the recipe a fixed point of
/// `installed`. The decisions when it is (Decision::not_selected for the others), nullopt when a
/// step would act or the journal would change. Reads only; `log` hears each decision made.
[[nodiscard]] std::optional<std::vector<StepDecision>> settled_decisions(
    const Plan& plan, const Facts& facts, state::Journal& journal, const Installed& installed,
    const std::function<void(const steps::ResolvedStep&, const StepDecision&)>& log);

[[nodiscard]] const char* to_string(Decision d);  // "run", "verify", "skip"

}  // namespace bootstrap::engine
