#pragma once
// Reading a recipe with the registered step kinds (steps/kinds.cpp) and verify clauses
// (steps/verify_clauses.cpp): recipe/ parses the common step keys and hands each kind's own keys
// to the kind (recipe::KindTable), each verify clause's to the clause (recipe::ClauseTable),
// without knowing either itself.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::steps {

/// The registered kinds as the recipe parser takes them, in the order messages list them.
[[nodiscard]] const recipe::KindTable& recipe_kinds();

/// The registered verify clauses as the recipe parser takes them, in the order they are tried.
[[nodiscard]] const recipe::ClauseTable& recipe_clauses();

/// recipe::load_recipe with the registered kinds and clauses.
[[nodiscard]] Result<recipe::Recipe> load_recipe(const std::filesystem::path& file);

/// recipe::parse_recipe with the registered kinds and clauses (embedded recipes, tests).
[[nodiscard]] Result<recipe::Recipe> parse_recipe(std::string_view text, const std::string& name);

}  // namespace bootstrap::steps
