#pragma once
// Internal to recipe/: the checks that need no toml++ (value forms, placeholders on the parsed
// structs) and the problem list every check appends to.

#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.hpp"

namespace bootstrap::recipe::detail {

/// One recipe problem; rendered as "file:line:col: message".
struct Problem {
    SourceLoc loc;
    std::string message;
};

/// [A-Za-z_][A-Za-z0-9_]*: a name `env`, `env_unset` and `{env.NAME}` accept.
[[nodiscard]] bool is_env_name(std::string_view name);

/// "3.12" or "3.12.1": two or three dot-separated decimal numbers.
[[nodiscard]] bool is_python_version(std::string_view v);

/// A compute capability such as "9.0" or "9.0a".
[[nodiscard]] bool is_arch(std::string_view v);

/// [A-Za-z0-9_.-]+, the form of a step id.
[[nodiscard]] bool is_step_id(std::string_view id);

/// [A-Za-z0-9_-]+, the form of a [vars] name (and of the name in `{vars.NAME}`).
[[nodiscard]] bool is_var_name(std::string_view name);

/// Check every placeholder of every string value: known names, variables defined earlier in
/// [vars], env names, defaults only on env, and no `{venv.*}`/`{python.*}` in venv.path (also
/// through variables). Appends one problem per offence.
void check_placeholders(const Recipe& recipe, std::vector<Problem>& problems);

/// Render problems sorted by location into Error{invalid_recipe, first line, all lines}.
[[nodiscard]] Error make_recipe_error(std::vector<Problem> problems);

}  // namespace bootstrap::recipe::detail
