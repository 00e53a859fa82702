#pragma once
// `plan --explain` for a build step: the build-cache key it would use now.

#include <string>

#include "core/error.hpp"
#include "engine/plan.hpp"

namespace bootstrap::engine {

struct BuildKeyNow {
    std::string digest;
    std::string explain;  // its inputs, one per line
    bool cached = false;  // the build cache holds it: the step installs without building
};

/// The build-cache key `step` (a build step of `plan`) would use now (probes torch, nvcc and the
/// compiler; fetches nothing).
[[nodiscard]] Result<BuildKeyNow> build_key_now(const Plan& plan, const steps::ResolvedStep& step);

}  // namespace bootstrap::engine
