#include "engine/build_key.hpp"

#include <fmt/format.h>

#include "steps/build.hpp"

namespace bootstrap::engine {

Result<BuildKeyNow> build_key_now(const Plan& plan, const steps::ResolvedStep& step) {
    const auto* build = step.build();
    if (build == nullptr) return fail(ErrorCode::internal, fmt::format("step '{}' is not a build step", step.id));
    steps::StepContext ctx;
    ctx.venv = plan.venv;
    BS_TRY(auto key, steps::current_build_key(step, ctx));
    steps::BuildCache cache(build->home / "builds");
    return BuildKeyNow{key.digest, key.explain, cache.find(key.digest).has_value()};
}

}  // namespace bootstrap::engine
