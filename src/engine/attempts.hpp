#pragma once
// A step's action, attempted as often as its `attempts` allow, with exponential backoff between
// attempts, and no further attempt after a failure another one cannot change: what the
// installer said (steps::classify_installer_output) decides, then the error's code.

#include "core/error.hpp"
#include "engine/run_world.hpp"
#include "engine/runner.hpp"
#include "steps/executor.hpp"

namespace bootstrap::engine {

struct Attempted {
    Result<steps::Outcome> outcome;
    steps::FailureClass failure;  // of the last failed attempt (unknown when one passed)
};

/// Run `step`'s action up to step.attempts times (report.attempts counts them; the observer
/// hears each retry, or why there is none). `backoff_base`: seconds before the 2nd attempt,
/// doubled each time. An interrupt ends the attempts. Each attempt and each wait goes through
/// `world` (RunWorld::execute, RunWorld::sleep).
[[nodiscard]] Attempted attempt_step(const steps::ResolvedStep& step, steps::StepContext& ctx, StepReport& report,
                                     double backoff_base, RunObserver& observer, RunWorld& world);

/// Whether another attempt can change `error`: the installer's own words first (ctx.failure),
/// then the error's code (a missing path or a bad value stays so; a timeout may not).
[[nodiscard]] steps::FailureClass failure_class(const Error& error, const steps::StepContext& ctx);

}  // namespace bootstrap::engine
