#pragma once
// The explicit environment a child sees: a pass-through allowlist of the parent's variables
// plus the recipe's set/unset. Nothing else leaks in.
//
// Which variables pass through, and why others (VIRTUAL_ENV, PYTHONPATH, CONDA_*, ...) do not:
// the `pass_through` entries of the one table in core/env_policy.hpp.

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace bootstrap::exec {

using EnvMap = std::map<std::string, std::string>;

/// The current process environment as a map (entries without '=' are skipped).
[[nodiscard]] EnvMap current_environment();

/// True for variables a child inherits by default (core::EnvUse::pass_through).
[[nodiscard]] bool is_pass_through(const std::string& name);

/// The pass-through subset of `base`, then every name in `unset` erased, then `set` applied.
/// Explicit sets therefore win over unsets, and an unset can remove an allowlisted variable.
[[nodiscard]] EnvMap compose_environment(const EnvMap& base, const EnvMap& set, const std::vector<std::string>& unset);

/// `env` inside `venv`, as `launch` and a recipe's run and check steps see it: the venv's bin/
/// first on PATH, VIRTUAL_ENV set, no PYTHONHOME. Variables named in `keep` (what a step sets
/// itself) are left as they are.
void enter_venv(EnvMap& env, const std::filesystem::path& venv, const std::set<std::string>& keep = {});

/// `bootstrap launch`'s environment: the caller's environment `caller` (all of it, not the
/// pass-through subset a step gets), less the recipe's [env] `unset`, entered into `venv` as
/// enter_venv does, plus VENV.
[[nodiscard]] EnvMap launch_environment(const EnvMap& caller, const std::filesystem::path& venv,
                                        const std::vector<std::string>& unset);

}  // namespace bootstrap::exec
