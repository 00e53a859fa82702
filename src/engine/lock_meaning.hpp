#pragma once
// Whether a lockfile still stands for its recipe. A lock records the recipe's meaning
// (recipe/meaning.hpp: what each step does, and what the recipe gives every step); it is stale
// only when that changed, and the error names each step and input that did, as `plan
// --explain` names a changed step key's ("step 'core': packages: +demo-core==2.0.0,
// -demo-core==1.0.0"). A comment, `summary` or a [[fault]] entry leaves it standing. A lock of
// an older bootstrap records only the recipe's bytes: any changed byte makes it stale.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/lockfile.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

/// Record the recipe's meaning in `lock`: recipe-wide, and for each of its steps the lock has.
void record_meaning(manifest::Lockfile& lock, const recipe::Recipe& recipe);

/// What changed since the lock recorded the recipe's meaning, one line per change, each once,
/// in the recipe's order: "recipe: vars.torch: 2.5 → 2.6", "step 'core': packages: +a, -b",
/// "step 'x': added", "step 'y': removed", "recipe: steps: same values, another order". Empty
/// when the lock stands (or records no meaning).
[[nodiscard]] std::vector<std::string> meaning_changes(const manifest::Lockfile& lock, const recipe::Recipe& recipe);

/// The lock stands for the recipe: by meaning when it records one, by the recipe's digest
/// otherwise. A usage error naming the recipe, the lockfile and each change.
[[nodiscard]] Status check_lock_stands(const manifest::Lockfile& lock, const recipe::Recipe& recipe);

}  // namespace bootstrap::engine
