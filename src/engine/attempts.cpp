#include "engine/attempts.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::engine {

steps::FailureClass failure_class(const Error& error, const steps::StepContext& ctx) {
    if (ctx.failure.kind != steps::FailureKind::unknown) return ctx.failure;
    switch (error.code) {
        case ErrorCode::not_found: return {steps::FailureKind::permanent, "a path the step needs does not exist"};
        case ErrorCode::usage:
        case ErrorCode::invalid_recipe: return {steps::FailureKind::permanent, "the step's input is invalid"};
        case ErrorCode::timeout: return {steps::FailureKind::transient, "the step ran out of time"};
        case ErrorCode::network: return {steps::FailureKind::transient, "a download failed"};
        default: return {};
    }
}

Attempted attempt_step(const steps::ResolvedStep& step, steps::StepContext& ctx, StepReport& report,
                       double backoff_base, RunObserver& observer, RunWorld& world) {
    Attempted out{fail(ErrorCode::internal, "no attempt ran"), {}};
    for (int attempt = 1; attempt <= step.attempts; ++attempt) {
        report.attempts = attempt;
        ctx.failure = {};
        auto outcome = world.execute(step, ctx);
        if (outcome) {
            if (!ctx.note.empty()) report.reason = ctx.note;
            if (attempt > 1) report.reason = fmt::format("succeeded on attempt {}/{}", attempt, step.attempts);
            return {*outcome, {}};
        }
        out = {tl::unexpected(outcome.error()), failure_class(outcome.error(), ctx)};
        if (outcome.error().code == ErrorCode::interrupted || attempt == step.attempts) break;
        if (out.failure.kind == steps::FailureKind::permanent) {
            observer.message(fmt::format("step '{}': attempt {}/{} failed ({}); not retried: {}", step.id, attempt,
                                         step.attempts, outcome.error().message, out.failure.why));
            break;
        }
        double wait = backoff_base * static_cast<double>(1 << (attempt - 1));
        observer.message(fmt::format("step '{}': attempt {}/{} failed ({}); retrying in {}", step.id, attempt,
                                     step.attempts, outcome.error().message, core::format_duration(wait)));
        if (!world.sleep(wait))
            return {fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id)), {}};
    }
    return out;
}

}  // namespace bootstrap::engine
