#pragma once
// The run loop behind engine::run_recipe (engine/runner.hpp), shared by its two files:
// runner.cpp (plan, settle, lock, each step's decision and attempts, the end of the run) and
// runner_record.cpp (what the journal keeps of each step, the overrides files, --locked drift).
// Internal to engine/.

#include <optional>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "engine/run_history.hpp"
#include "engine/run_world.hpp"
#include "engine/runner.hpp"
#include "engine/skip_rule.hpp"
#include "state/journal.hpp"

namespace bootstrap::engine {

class Runner {
public:
    Runner(const recipe::Recipe& recipe, const RunOptions& options, RunObserver& observer, RunWorld& world)
        : m_recipe(recipe), m_options(options), m_observer(observer), m_world(world) {}

    Result<RunReport> run();

private:
    // runner.cpp: the loop.
    Result<bool> confirm_settled(const fs::path& venv);
    Status repair_cut_short(const fs::path& venv);
    Status settle_changing(const steps::ResolvedStep& step, bool action_passed);
    Status replan(const fs::path& venv);
    bool selected(size_t i) const { return i < m_plan.selected.size() && m_plan.selected[i]; }
    SkipRule& skip_rule();
    Status run_step(size_t i);
    Status remove_extras();
    void restore_before();

    // runner_record.cpp: what the run writes of each step.
    Status write_overrides(const steps::ResolvedStep& step) const;
    Status finish_failed(size_t i, const steps::ResolvedStep& step, StepReport& report, Error error, bool in_verify,
                         bool retry_can_help, bool fatal = false);
    Status record_success(size_t, const steps::ResolvedStep& step, StepReport& report, bool unchanged, bool verified,
                          std::optional<Installed> after = std::nullopt);
    Status settle_verified_state();
    void record_device_facts();
    void check_drift();

    // The world's side (RunWorld): facts, the installed set, the clock.
    Result<Facts> gather_facts(const fs::path& venv, bool update_caches) {
        return m_world.gather_facts(venv, update_caches);
    }
    Result<Installed> scan_installed(const Facts& facts, bool include_broken = false,
                                     const pyenv::ScanMemo* memo = nullptr) {
        if (!facts.python) return Installed{};
        return m_world.scan_installed(*facts.python, include_broken, memo);
    }
    double since(double start) { return m_world.now() - start; }

    const recipe::Recipe& m_recipe;
    const RunOptions& m_options;
    RunObserver& m_observer;
    RunWorld& m_world;
    Facts m_facts;
    Plan m_plan;
    state::Journal m_journal;
    Installed m_installed;
    RunReport m_report;
    std::optional<SkipRule> m_skip;
    bool m_earlier_ran = false;  // a step of this run ran: later verify clauses run again
    RunHistory m_history{m_plan, m_journal, m_report};
};

}  // namespace bootstrap::engine
