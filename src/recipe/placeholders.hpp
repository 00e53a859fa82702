#pragma once
// `{namespace.name}` placeholders. Known namespaces: env (with `{env.NAME:-default}`), vars,
// venv (path, python), python (version, ext_suffix), host (cpus), device (arch,
// torch_arch_list, nvte_archs, cmake_archs: the target CUDA arches, detected or given). `{{` and `}}` are literal
// braces.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::recipe {

struct Placeholder {
    std::string ns;                            // "env", "vars", ...
    std::string name;                          // "MEGATRON_DIR", "path", ...
    std::optional<std::string> default_value;  // env only, from ":-"
    size_t offset = 0;                         // position of '{' in the text
};

/// Split out the placeholders of a text; an unterminated '{' or an empty name is an error.
[[nodiscard]] Result<std::vector<Placeholder>> find_placeholders(std::string_view text);

/// The placeholder as written, e.g. "{env.CUDA_HOME:-/usr/local/cuda}" (for messages).
[[nodiscard]] std::string to_string(const Placeholder& p);

/// The placeholders known to the schema, "ns.name" (vars and env are open namespaces).
[[nodiscard]] const std::vector<std::string>& known_placeholders();

/// Answers a placeholder: a value, std::nullopt for "not known yet" (e.g. the venv's
/// ext_suffix before the venv exists), or an Error (e.g. unset env var without default).
using PlaceholderResolver = std::function<Result<std::optional<std::string>>(const Placeholder&)>;

struct Expanded {
    std::string value;
    bool complete = true;  // false when some placeholder was not known yet; value then shows
                           // it as "<python.ext_suffix: known after the venv exists>"
};

/// The most an expanded value may hold (a recipe value: an argv word, an env value, a path).
inline constexpr size_t k_max_expanded_value = 64 * 1024;

/// Expand all placeholders in `text` (`{{`/`}}` become braces); errors, the resolver's
/// included, are prefixed with the text's location ("file:line:col: ").
[[nodiscard]] Result<Expanded> expand(const Text& text, const PlaceholderResolver& resolve);

}  // namespace bootstrap::recipe
