#pragma once
// What a recipe means for the work its steps do, as key inputs (core/key.hpp): what a lockfile
// records and is checked against (engine/lock_meaning.hpp), so that a comment or a new
// `summary` leaves a lock standing while a changed pin makes it stale, named by step and input
// (core::explain_change: "packages: +demo-core==2.0.0, -demo-core==1.0.0").
//
// Counted, recipe-wide: the steps' order, [venv] python and installer, each variable, [env]
// set, unset and key, and [device]. Per step: its kind, its environment (env.set, env.unset,
// as the step key has them) and every other key of its table as written (placeholders
// unexpanded: a variable's change is the variable's), but timeout, attempts and optional.
// Not counted: comments and layout, name, summary, [venv] path (a lock holds wherever the venv
// is), [network] and a step's timeout and attempts (transport and patience: no step key holds
// them either), [env] secret, [[lint]], [[fault]], [flag_aliases] and [perf]. Values are shown
// as step keys show them: a secret-named variable's value as "***", URL credentials redacted.

#include <string>
#include <vector>

#include "core/key.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::recipe {

struct StepMeaning {
    std::string id;
    std::vector<core::KeyInput> inputs;
};

struct Meaning {
    std::vector<core::KeyInput> recipe;  // recipe-wide; "steps" lists the step ids in order
    std::vector<StepMeaning> steps;      // in the recipe's order
};

/// The recipe's meaning (see above); equal for two recipes that differ only in what is not
/// counted.
[[nodiscard]] Meaning meaning(const Recipe& recipe);

struct Value;

namespace detail {

/// A step table's keys as Step::written keeps them, in key order, leaving out id, kind, env,
/// env_unset (fields of Step), timeout, attempts and optional: a string, number or boolean is
/// one value; an array of them a list; a table a list of "key=value"; an array of tables a list
/// of inline tables (`{import = "torch"}`).
[[nodiscard]] std::vector<core::KeyInput> written_inputs(const Value& step_table);

}  // namespace detail

}  // namespace bootstrap::recipe
