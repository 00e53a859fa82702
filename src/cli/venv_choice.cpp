#include "cli/venv_choice.hpp"

#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "engine/plan.hpp"
#include "pyenv/interpreter.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace fs = std::filesystem;

void add_venv_choice(CLI::App& cmd, VenvChoice& choice) {
    auto* venv =
        cmd.add_option("--venv", choice.venv, "The venv (default: the recipe's with --recipe, else $VIRTUAL_ENV)");
    cmd.add_option("--recipe", choice.recipe, "Act on this recipe's venv ([venv] path)")->excludes(venv);
}

Result<std::string> chosen_venv(const VenvChoice& choice) {
    std::string chosen = choice.venv;
    if (chosen.empty() && !choice.recipe.empty()) {
        BS_TRY(auto recipe, steps::load_recipe(choice.recipe));
        BS_TRY(auto facts, engine::gather_facts({}, false));
        BS_TRY(auto path, engine::resolve_venv_path(recipe, engine::PlanOptions{}, facts));
        chosen = path.string();
    }
    if (chosen.empty())
        if (const char* active = std::getenv("VIRTUAL_ENV")) chosen = active;
    if (chosen.empty()) return chosen;
    std::error_code ec;
    fs::path absolute = fs::absolute(chosen, ec);
    return ec ? chosen : absolute.lexically_normal().string();
}

Result<std::string> required_venv_choice(const VenvChoice& choice) {
    BS_TRY(auto venv, chosen_venv(choice));
    if (venv.empty())
        return fail(ErrorCode::usage, "no venv given: pass --venv DIR or --recipe R, or activate one (VIRTUAL_ENV)");
    return venv;
}

Result<std::string> required_venv(const VenvChoice& choice) {
    BS_TRY(std::string v, required_venv_choice(choice));
    BS_TRY(auto cfg, pyenv::read_pyvenv_cfg(v));
    (void)cfg;
    return v;
}

}  // namespace bootstrap::cli
