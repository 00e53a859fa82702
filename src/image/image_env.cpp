// The image's defaults file (/etc/bootstrap/env: recipe/image_defaults.hpp), written into the
// build context beside the recipe.
#include <algorithm>

#include "engine/plan.hpp"
#include "image/containerfile.hpp"

namespace bootstrap::image {

std::vector<std::string> steps_reading(const engine::Plan& plan, const std::string& name) {
    const bool keyed = plan.recipe && plan.recipe->env_key.count(name) > 0;
    auto read = plan.env_read.find(name);
    std::vector<std::string> out;
    for (const auto& step : plan.steps)
        if (keyed || (read != plan.env_read.end() &&
                      std::count(read->second.steps.begin(), read->second.steps.end(), step.id) > 0))
            out.push_back(step.id);
    return out;
}

recipe::ImageDefaults image_defaults_of(const engine::Plan& plan, const ContainerfileSpec& spec) {
    recipe::ImageDefaults d;
    d.recipe_digest = spec.recipe_digest;
    d.env = spec.env;
    for (const auto& name : spec.secrets) d.secrets.push_back({name, steps_reading(plan, name)});
    d.venv = spec.venv;
    if (spec.arch_args.size() == 2 && spec.arch_args[0] == "--arch") d.arch = spec.arch_args[1];
    d.no_device = spec.arch_args.size() == 1 && spec.arch_args[0] == "--no-device";
    d.skip = spec.skip;
    d.only = spec.only;
    return d;
}

}  // namespace bootstrap::image
