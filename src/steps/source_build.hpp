#pragma once
// An install step's packages that uv would build from an sdist (no wheel of theirs fits the
// venv's interpreter: docopt, flash-attn, causal-conv1d), built once per key into the build
// cache (steps/build_cache.hpp) and installed from there, as a `build` step's wheel is. When
// the step's install with `--no-build` fails (kind_install.cpp), uv is asked for its
// resolution (`uv pip compile --format pylock.toml`); each package in it with an sdist and no wheel, not installed at that version
// already, is looked up by its key (make_source_build_key: the sdist's sha256, its build
// requirements' versions, the Python, platform and build environment; for a package built
// against the venv, `no_build_isolation_package`, also torch, nvcc, the compiler and the
// installed versions of what its build requires), else built from the downloaded,
// sha256-checked sdist with `uv build` (isolated builds get their requirements pinned with
// `--build-constraint`, so the key tells the truth) and published. A wheel that comes out
// `none-any` is published under the key without the compiled-only inputs, so a torch bump
// does not rebuild it. The wheels reach the installer as a --find-links directory; uv prefers a
// wheel to the sdist of the same version. Anything that stops the lookup before a build
// (a resolution uv cannot make, an sdist that cannot be downloaded) leaves the package to uv,
// said in the step's log. `run --locked` builds a lock's sdists the same way
// (build_locked_sdists). What was built is recorded per package in the venv
// (`.bootstrap/source-builds.json`), which `lock` reads for the key.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "steps/executor.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// One package built from its sdist (or found built) for an install step.
struct SourceBuilt {
    std::string name;  // normalised
    std::string version;
    std::string sdist;   // its file name
    std::string url;     // where it was downloaded from, credentials redacted
    std::string sha256;  // the sdist's
    std::string key;     // the build-cache key (the builds/ directory's name)
    std::string wheel;   // the built wheel's file name
    std::string wheel_sha256;
    bool hit = false;  // found in the cache
    std::string note;  // "NAME VERSION: built from FILE in 2.1s (cache key K)" / "...: build cache hit (...)"
};

/// The sdists of `step`'s resolution, each built or found, their wheels in `work/wheels`
/// (made afresh). Empty when the step's installer is not uv or nothing needs a build.
[[nodiscard]] Result<std::vector<SourceBuilt>> build_step_sdists(const ResolvedStep& step, StepContext& ctx,
                                                                 const InstallSpec& spec, const fs::path& work);

/// The step's installer command with what build_step_sdists built in `work`: the wheels
/// directory as --find-links (uv takes a wheel over the sdist of the same version).
[[nodiscard]] std::vector<std::string> install_argv_with(const ResolvedStep& step,
                                                         const std::vector<SourceBuilt>& built, const fs::path& work);

/// `run --locked`: a batch's sdists (`sources`: the batch's indexes, for build requirements),
/// each built from the locked URL, sha256-checked, or found; wheels in `work/wheels`. A wheel
/// whose name or version is not the lock's is an error; a key other than the lock's is said in
/// the note (the toolchain differs from the lock's machine).
[[nodiscard]] Result<std::vector<SourceBuilt>> build_locked_sdists(const ResolvedStep& step, StepContext& ctx,
                                                                   const SourceBuildSpec& spec,
                                                                   const pyenv::InstallRequest& sources,
                                                                   const std::vector<LockedSdist>& sdists,
                                                                   const fs::path& work);

/// `.bootstrap/source-builds.json` of `venv`, by name (empty when absent or unreadable).
[[nodiscard]] std::map<std::string, SourceBuilt> read_source_builds(const fs::path& venv);

/// `built` merged into the record (a package's entry replaced).
[[nodiscard]] Status record_source_builds(const fs::path& venv, const std::vector<SourceBuilt>& built);

}  // namespace bootstrap::steps
