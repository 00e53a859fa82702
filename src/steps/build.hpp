#pragma once
// Step kind `build`: make the source local (build_source.hpp), compute its build-cache key
// (build_cache.hpp), then either install the cached wheel or — holding the key's lock — check
// the toolchain against torch and the target arches, build a wheel from a private copy of the
// source with the venv's installer, publish it to the cache, and install it.

#include <map>
#include <optional>

#include "core/cache_trust.hpp"
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

/// The toolchain side of a build's key, asked of the tools for `step`'s environment: torch's
/// facts (cached per torch install, `torch_version` "" for none: "not installed"), nvcc's
/// release, the C++ compiler and its libstdc++ level, and the variables the build sees that
/// can change its output (the recipe's own and the build-input ones; the venv's path as
/// `<venv>`). Sets in.torch, nvcc, compiler, libstdcxx, env.
[[nodiscard]] Status add_toolchain_inputs(const ResolvedStep& step, StepContext& ctx, const std::string& torch_version,
                                          const std::string& torch_record_stamp, BuildInputs& in);

/// A build the shared cache could not take, moved from its staging directory into `dir`.
[[nodiscard]] Status keep_in_venv(BuildCache::Entry& built, const fs::path& dir);

/// The keys this user trusts, loaded (with libcrypto) the first time an entry needs them.
struct LazyTrustedKeys {
    const fs::path* home;
    const std::map<std::string, std::string>* trust_env;
    std::optional<core::TrustedKeys> keys;
    Result<const core::TrustedKeys*> operator()();
};

}  // namespace bootstrap::steps
