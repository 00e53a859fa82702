#include "engine/run_world.hpp"

#include <chrono>

#include "core/interrupt.hpp"
#include "engine/plan.hpp"

namespace bootstrap::engine {

Result<Facts> RealRunWorld::gather_facts(const std::filesystem::path& venv, bool update_caches) {
    return engine::gather_facts(venv, update_caches);
}

Result<std::map<std::string, pyenv::Distribution>> RealRunWorld::scan_installed(const pyenv::InterpreterFacts& python,
                                                                                bool include_broken,
                                                                                const pyenv::ScanMemo* memo) {
    return pyenv::scan_venv_packages(python, {}, include_broken, memo);
}

Result<steps::Outcome> RealRunWorld::execute(const steps::ResolvedStep& step, steps::StepContext& ctx) {
    return steps::execute(step, ctx);
}

Status RealRunWorld::verify(const steps::ResolvedStep& step, steps::StepContext& ctx) {
    return steps::verify(step, ctx);
}

double RealRunWorld::now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool RealRunWorld::sleep(double seconds) { return core::sleep_interruptible(seconds); }

}  // namespace bootstrap::engine
