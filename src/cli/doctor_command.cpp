// `bootstrap doctor`: what is wrong with a venv. Exit 3 when a finding has severity error, 2 for
// usage and invalid input, 1 for other runtime failures.

#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "doctor/lint.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

int execute_doctor(const DoctorArgs& args) {
    if (!args.config.empty() && args.recipe.empty())
        return report_error(Error{ErrorCode::usage,
                                  "--config needs --recipe (the lint rules come "
                                  "from the recipe)",
                                  ""},
                            args.json);
    std::optional<recipe::Recipe> loaded;
    if (!args.recipe.empty()) {
        auto r = steps::load_recipe(args.recipe);
        if (!r) return report_error(r.error(), args.json);
        loaded = std::move(*r);
    }
    auto run = run_doctor_and_lint(args, loaded, exec::current_environment(), std::nullopt);
    if (!run) return report_error(run.error(), args.json);
    size_t errors = doctor::count_severity(run->findings, recipe::Severity::error);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : run->findings) list.push_back(finding_json(f));
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& c : run->checks) checks.push_back({{"group", c.group}, {"summary", c.line}});
        nlohmann::json j{{"schema", 1},
                         {"ok", errors == 0},
                         {"venv", run->venv.string()},
                         {"recipe", loaded ? loaded->file.string() : ""},
                         {"config", run->config_file},
                         {"scope", run->training ? "training" : "venv"},
                         {"checks", checks},
                         {"findings", list}};
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{}", doctor::format_findings(run->findings));
        if (!run->findings.empty()) fmt::print("\n");
        if (!run->training)
            fmt::print(
                "no recipe and no training stack in the venv: checking what it holds "
                "(--recipe R for a training venv's checks)\n");
        for (const auto& c : run->checks) fmt::print("{}\n", c.line);
        fmt::print("{}", doctor_summary("doctor " + run->venv.string(), run->findings));
    }
    return errors > 0 ? k_exit_lint_errors : 0;
}

}  // namespace

void set_doctor_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<DoctorArgs>();
    auto* cmd =
        app.add_subcommand("doctor", "Check a venv: imports, dependencies, symbols, CUDA code, paths, packages");
    cmd->add_option("--venv", args->venv, "The venv (default: the recipe's [venv] path)");
    cmd->add_option("--recipe", args->recipe,
                    "Recipe: its verify imports, allow_conflicts, installer and [[lint]] rules");
    cmd->add_option("--config", args->config, "Training flags to lint as well (needs --recipe)");
    add_doctor_options(cmd, *args);
    cmd->add_flag("--json", args->json, "Print the findings as JSON");
    cmd->footer(
        "With --recipe, or in a venv holding torch, TransformerEngine, megatron-core or apex, the\n"
        "imports checked are the recipe's and Megatron's defaults (torch, transformer_engine,\n"
        "amp_C, fused_weight_gradient_mlp_cuda, megatron.core); in any other venv they are the\n"
        "top-level modules of what is installed. One summary line per check group says what\n"
        "passed. Without --recipe, a pin the venv's recipe overrides on purpose (allow_conflicts,\n"
        "recorded by its last run in .bootstrap/declared-overrides.txt) is info, as with it.\n"
        "Each fix is a command for the venv examined: `bootstrap run R --venv DIR --only STEP`\n"
        "(the step that provides the module), or the installer command with the version a pin\n"
        "asks for. The build cache ($BOOTSTRAP_HOME/builds): each entry another user could have\n"
        "written, its writer and signer (`bootstrap cache keygen --help`); a broken signature is an error.\n"
        "Exit codes: 0 no errors, 2 usage or invalid recipe/config, 3 error findings.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_doctor(*args); });
}

}  // namespace bootstrap::cli
