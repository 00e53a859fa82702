// The image's defaults file (/etc/bootstrap/env: recipe/image_defaults.hpp), written into the
// build context beside the recipe.
#include <algorithm>

#include "core/strings.hpp"
#include "image/containerfile.hpp"

namespace bootstrap::image {

namespace {

/// Lines [first, last) of `lines` hold `needle`.
bool region_holds(const std::vector<std::string>& lines, int first, int last, std::string_view needle) {
    for (int i = std::max(first, 1); i < last && i <= static_cast<int>(lines.size()); ++i)
        if (lines[static_cast<size_t>(i - 1)].find(needle) != std::string::npos) return true;
    return false;
}

}  // namespace

std::vector<std::string> steps_reading(const recipe::Recipe& recipe, std::string_view recipe_text,
                                       const std::string& name) {
    const auto lines = core::split(recipe_text, '\n');
    // `{env.NAME}` or `{env.NAME:-default}`, in a step or in a [vars] value that a step reads.
    std::vector<std::string> needles = {"{env." + name + "}", "{env." + name + ":-"};
    for (const auto& [var, text] : recipe.vars)
        if (text.value.find("{env." + name + "}") != std::string::npos ||
            text.value.find("{env." + name + ":-") != std::string::npos) {
            needles.push_back("{vars." + var + "}");
            needles.push_back("{vars." + var + ":-");
        }
    std::vector<std::string> out;
    for (size_t i = 0; i < recipe.steps.size(); ++i) {
        const int first = recipe.steps[i].loc.line;
        const int last =
            i + 1 < recipe.steps.size() ? recipe.steps[i + 1].loc.line : static_cast<int>(lines.size()) + 1;
        if (std::any_of(needles.begin(), needles.end(),
                        [&](const std::string& n) { return region_holds(lines, first, last, n); }))
            out.push_back(recipe.steps[i].id);
    }
    return out;
}

recipe::ImageDefaults image_defaults_of(const recipe::Recipe& recipe, std::string_view recipe_text,
                                        const ContainerfileSpec& spec) {
    recipe::ImageDefaults d;
    d.recipe_digest = spec.recipe_digest;
    d.env = spec.env;
    for (const auto& name : spec.secrets) d.secrets.push_back({name, steps_reading(recipe, recipe_text, name)});
    d.venv = spec.venv;
    if (spec.arch_args.size() == 2 && spec.arch_args[0] == "--arch") d.arch = spec.arch_args[1];
    d.no_device = spec.arch_args.size() == 1 && spec.arch_args[0] == "--no-device";
    d.skip = spec.skip;
    d.only = spec.only;
    return d;
}

}  // namespace bootstrap::image
