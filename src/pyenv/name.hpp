#pragma once
#include <string>
#include <string_view>

namespace bootstrap::pyenv {

/// PEP 503 normalised project name: lower case, runs of [-_.] become a single '-'.
[[nodiscard]] std::string normalize_name(std::string_view name);

/// True if `name` is a valid PEP 508 distribution name.
[[nodiscard]] bool is_valid_name(std::string_view name);

}  // namespace bootstrap::pyenv
