#pragma once
// Internal to recipe/: `[[step]]` tables, read from the toml-free value tree. The common keys
// (id, kind, env, env_unset, timeout, attempts, optional, verify) are read here; every other
// key belongs to the step's kind (KindSyntax::parse).

#include "recipe/recipe.hpp"
#include "recipe/value.hpp"
#include "recipe/value_reader.hpp"

namespace bootstrap::recipe::detail {

/// Read the `step` value (an array of tables) into `out.steps`, its verify clauses with `clauses`.
void read_steps(ValueReader& rd, const Value& steps, const KindTable& kinds, const ClauseTable& clauses, Recipe& out);

}  // namespace bootstrap::recipe::detail
