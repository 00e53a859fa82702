#pragma once
// What the run loop asks of the outside world, behind one small interface (as ninja's Builder
// reaches processes through CommandRunner): the venv's interpreter facts, what is installed,
// a step's action and verify clauses (child processes: Python, uv, the recipe's commands) and
// the clock. RealRunWorld does what a run does; unit tests pass a fake
// (tests/unit/engine/fake_world.hpp) that runs nothing and never sleeps. The journal, the
// history, the logs and the venv lock stay real files under the venv.

#include <filesystem>
#include <map>
#include <string>

#include "core/error.hpp"
#include "engine/facts.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/interpreter.hpp"
#include "steps/executor.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::engine {

class RunWorld {
public:
    virtual ~RunWorld() = default;

    /// The environment, cpus, and the venv's interpreter when `venv` holds one
    /// (engine::gather_facts).
    [[nodiscard]] virtual Result<Facts> gather_facts(const std::filesystem::path& venv, bool update_caches) = 0;

    /// Every distribution `python` sees, by normalised name (pyenv::scan_venv_packages, with
    /// its `include_broken` and `memo`).
    [[nodiscard]] virtual Result<std::map<std::string, pyenv::Distribution>> scan_installed(
        const pyenv::InterpreterFacts& python, bool include_broken, const pyenv::ScanMemo* memo) = 0;

    /// One attempt at a step's action (steps::execute).
    [[nodiscard]] virtual Result<steps::Outcome> execute(const steps::ResolvedStep& step, steps::StepContext& ctx) = 0;

    /// A step's verify clauses (steps::verify).
    [[nodiscard]] virtual Status verify(const steps::ResolvedStep& step, steps::StepContext& ctx) = 0;

    /// Seconds on a monotonic clock (a step's and the run's duration).
    [[nodiscard]] virtual double now() = 0;

    /// Wait `seconds` (the backoff between attempts); false when interrupted.
    [[nodiscard]] virtual bool sleep(double seconds) = 0;
};

/// The world a run really acts on: Python, the installer, child processes, the steady clock.
class RealRunWorld final : public RunWorld {
public:
    Result<Facts> gather_facts(const std::filesystem::path& venv, bool update_caches) override;
    Result<std::map<std::string, pyenv::Distribution>> scan_installed(const pyenv::InterpreterFacts& python,
                                                                      bool include_broken,
                                                                      const pyenv::ScanMemo* memo) override;
    Result<steps::Outcome> execute(const steps::ResolvedStep& step, steps::StepContext& ctx) override;
    Status verify(const steps::ResolvedStep& step, steps::StepContext& ctx) override;
    double now() override;
    bool sleep(double seconds) override;
};

}  // namespace bootstrap::engine
