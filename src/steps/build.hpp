#pragma once
// Step kind `build`: make the source local (build_source.hpp), compute its build-cache key
// (build_cache.hpp), then either install the cached wheel or — holding the key's lock — check
// the toolchain against torch and the target arches, build a wheel from a private copy of the
// source with the venv's installer, publish it to the cache, and install it.

#include "core/error.hpp"
#include "steps/build_cache.hpp"
#include "steps/executor.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// Run a build step (ctx.note says whether the cache answered).
[[nodiscard]] Status run_build(const ResolvedStep& step, StepContext& ctx);

/// The build-cache key a build step would use now, and its inputs (`plan --explain`): probes
/// torch (cached per torch version), nvcc and the C++ compiler. Fetches nothing: for a git or
/// archive source the key needs only its commit or sha256.
[[nodiscard]] Result<BuildKey> current_build_key(const ResolvedStep& step, StepContext& ctx);

}  // namespace bootstrap::steps
