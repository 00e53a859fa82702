#pragma once
// Key inputs (core/key.hpp) in JSON, as a lockfile records a recipe's meaning: an array of
// [field, value] pairs in order, the value a string or, for a list, an array of strings (the
// journal's shape for a step key's inputs).

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_fields.hpp"
#include "core/key.hpp"

namespace bootstrap::manifest {

[[nodiscard]] nlohmann::json inputs_to_json(const std::vector<core::KeyInput>& inputs);

/// The inputs under `key` of `f` (none when absent); JsonInvalid naming the path when they are
/// not that shape.
[[nodiscard]] std::vector<core::KeyInput> inputs_from_json(const core::JsonFields& f, std::string_view key);

}  // namespace bootstrap::manifest
