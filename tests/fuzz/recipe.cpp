// Fuzz target: a recipe's TOML text through recipe::parse_recipe (toml++, schema checks,
// placeholders, [[fault]] regexes, [[lint]] rules). Every input must give a Recipe or an error
// value, never a crash.

#include "recipe/recipe.hpp"
#include "fuzz_support.hpp"
#include "recipe/placeholders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    auto recipe = recipe::parse_recipe(fuzz::as_text(data, size), "fuzz.toml");
    if (!recipe) {
        if (recipe.error().message.empty()) fuzz::invariant_failed("empty error message", "");
        return 0;
    }
    // Placeholders in what parsed: each step's argv is scanned as the planner would.
    for (const auto& step : recipe->steps)
        for (const auto& arg : step.argv) (void)recipe::find_placeholders(arg.value);
    return 0;
}
