#pragma once
// `bootstrap launch`: the command's environment and the exec that replaces bootstrap with it.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

/// The caller's environment `caller`, less the recipe's [env] unset, inside `venv`: its bin/
/// first on PATH, VIRTUAL_ENV and VENV set, no PYTHONHOME.
[[nodiscard]] exec::EnvMap launch_environment(const recipe::Recipe& recipe, const std::filesystem::path& venv,
                                              const exec::EnvMap& caller);

/// Replace this process with `command` in `env` (the program looked up on env's PATH).
/// Returns only on failure, with an Error headed "launch: ".
[[nodiscard]] Error launch_command(const std::vector<std::string>& command, const exec::EnvMap& env);

}  // namespace bootstrap::engine
