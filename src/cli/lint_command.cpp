// `bootstrap lint CONFIG`: training flags against a recipe's [[lint]] rules. Exit 3 when a finding
// has severity error, 2 for usage and invalid input, 1 for other runtime failures.

#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "doctor/flags.hpp"
#include "doctor/lint.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct LintArgs {
    std::string config;
    std::string recipe;
    std::string venv;
    bool json = false;
};

int execute_lint(const LintArgs& args) {
    auto loaded = steps::load_recipe(args.recipe);
    if (!loaded) return report_error(loaded.error(), args.json);
    doctor::TrainingConfig config;
    auto findings = lint_file(args.config, *loaded, args.venv, config);
    if (!findings) return report_error(findings.error(), args.json);
    size_t errors = doctor::count_severity(*findings, recipe::Severity::error);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : *findings) list.push_back(finding_json(f));
        nlohmann::json j{{"schema", 1},
                         {"ok", errors == 0},
                         {"config", config.file},
                         {"layout", doctor::to_string(config.format)},
                         {"recipe", loaded->file.string()},
                         {"rules", loaded->lint_rules.size()},
                         {"findings", list}};
        fmt::print("{}\n", j.dump(2));
    } else {
        if (loaded->lint_rules.empty()) fmt::print("warning: {} has no [[lint]] rules\n", loaded->file.string());
        fmt::print("{}", doctor::format_findings(*findings));
        fmt::print("{}", lint_summary(*findings, config, loaded->lint_rules.size()));
    }
    return errors > 0 ? k_exit_lint_errors : 0;
}

}  // namespace

void set_lint_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LintArgs>();
    auto* cmd = app.add_subcommand("lint", "Check training flags against a recipe's [[lint]] rules");
    cmd->add_option("config", args->config,
                    "Training flags: an args file or shell script, a flat YAML mapping, or "
                    "Megatron's --yaml-cfg file (.yaml/.yml)")
        ->required();
    cmd->add_option("--recipe", args->recipe, "Recipe with the [[lint]] rules")->required();
    cmd->add_option("--venv", args->venv,
                    "The training venv: `unless_import` rules try the import there (without it "
                    "they are reported as not checked)");
    cmd->add_flag("--json", args->json, "Print the findings as JSON");
    cmd->footer(
        "forbid_env rules also look at this shell's environment.\n"
        "Exit codes: 0 no errors, 2 usage or invalid recipe/config, 3 error findings.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_lint(*args); });
}

}  // namespace bootstrap::cli
