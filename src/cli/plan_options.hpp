#pragma once
// The options `run` and `plan` share, so that `plan` says what the same `run` would do: the
// venv, the steps selected, the arch `{device.*}` stands for, the lockfile, --retry-optional.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"

namespace CLI {
class App;
}

namespace bootstrap::cli {

struct PlanArgs {
    std::string venv;
    std::string from;
    std::vector<std::string> only;
    std::vector<std::string> skip;
    bool recreate = false;
    std::string arch;
    bool no_device = false;
    bool locked = false;
    std::string lockfile;
    bool retry_optional = false;
    bool exact = false;
};

/// Bind the shared options to `args`.
void add_plan_options(CLI::App& cmd, PlanArgs& args);

/// The engine's options for `args` (the lockfile is read here: its errors name the file).
[[nodiscard]] Result<engine::PlanOptions> plan_options(const PlanArgs& args, const recipe::Recipe& recipe);

}  // namespace bootstrap::cli
