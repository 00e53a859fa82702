#pragma once
// A rollback's use of uv's cache (rollback/uv_cache.hpp): which of the plan's installs can be put
// back from the unpacked wheels uv keeps, without an installer and without the index, and
// putting them back.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "pyenv/interpreter.hpp"
#include "rollback/plan.hpp"
#include "rollback/uv_cache.hpp"

namespace bootstrap::rollback {

struct CachedPackage {
    std::string name;
    CachedRestore restore;
    std::vector<fs::path> old_scripts;  // the installed version's, in the venv's bin/
};

struct CacheRestores {
    std::vector<CachedPackage> cached;  // put back from uv's cache
    std::vector<RollbackInstall> rest;  // left to the installers, in the plan's order
    std::vector<std::string> notes;     // why a cached wheel did not do, for the rollback's log
};

/// Split `installs` (of the venv at `venv`, uv's cache found through `env`): those `eligible`
/// lets through (exact index pins of packages uv installed) whose cached wheel gives exactly
/// the target's RECORD, scripts included, and whose installed version (if any) has no file
/// outside site-packages but its scripts in the venv's bin/, are restored from the cache; the
/// rest is left to the installers. No cache, or no such wheel, leaves it all to them.
[[nodiscard]] Result<CacheRestores> plan_cache_restores(const std::vector<RollbackInstall>& installs,
                                                        const fs::path& venv, const pyenv::InterpreterFacts& python,
                                                        const exec::EnvMap& env,
                                                        const std::function<bool(const RollbackInstall&)>& eligible);

/// Put back each planned package: the installed version's files go (by its RECORD, inside
/// site-packages, and its scripts), then the cached wheel's are linked in as uv links them
/// (copied with UV_LINK_MODE=copy), RECORD last. The caller runs it under the venv's `changing`
/// marker: an interruption is repaired by the next run.
[[nodiscard]] Status restore_from_cache(const std::vector<CachedPackage>& cached, const fs::path& venv,
                                        const pyenv::InterpreterFacts& python, const exec::EnvMap& env);

}  // namespace bootstrap::rollback
