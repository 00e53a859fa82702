// `bootstrap launch RECIPE -- CMD`: doctor + lint, then exec CMD in the venv. Exit 3 when a
// finding has severity error (unless --force); otherwise the command's own code (it execs it).

#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/flags.hpp"
#include "doctor/lint.hpp"
#include "exec/environment.hpp"
#include "exec/exec_image.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct LaunchArgs {
    DoctorArgs doctor;
    std::vector<std::string> command;
    bool force = false;
};

/// The training flags of a launch command: the `--yaml-cfg FILE` it names, else its own args.
Result<doctor::TrainingConfig> launch_config(const std::vector<std::string>& command) {
    for (size_t i = 0; i < command.size(); ++i) {
        if (command[i] == "--yaml-cfg" && i + 1 < command.size()) return doctor::read_config(command[i + 1]);
        if (core::starts_with(command[i], "--yaml-cfg="))
            return doctor::read_config(command[i].substr(std::string("--yaml-cfg=").size()));
    }
    std::string text;
    for (const auto& word : command) text += core::shell_quote(word) + " ";
    return doctor::parse_args(text, "command line");
}

int execute_launch(const LaunchArgs& args) {
    std::optional<recipe::Recipe> loaded;
    if (auto r = steps::load_recipe(args.doctor.recipe); r) loaded = std::move(*r);
    else return report_error(r.error(), false);
    auto venv = doctor_venv(args.doctor.venv, loaded);
    if (!venv) return report_error(venv.error(), false);
    const exec::EnvMap env = exec::launch_environment(exec::current_environment(), *venv, loaded->env_unset);

    auto config = launch_config(args.command);
    if (!config) return report_error(config.error(), false);
    DoctorArgs doctor_args = args.doctor;
    doctor_args.venv = venv->string();
    doctor_args.check_files = false;
    auto run = run_doctor_and_lint(doctor_args, loaded, env, *config);
    if (!run) return report_error(run.error(), false);
    size_t errors = doctor::count_severity(run->findings, recipe::Severity::error);
    std::vector<doctor::Finding> shown;
    for (const auto& f : run->findings)
        if (f.severity != recipe::Severity::info) shown.push_back(f);
    fmt::print(stderr, "{}", doctor::format_findings(shown));
    fmt::print(stderr, "{}", doctor_summary("launch preflight", run->findings));
    if (errors > 0 && !args.force) {
        fmt::print(stderr, "launch refused: {} error(s); fix them or pass --force\n", errors);
        return k_exit_lint_errors;
    }
    if (errors > 0) fmt::print(stderr, "launching anyway (--force)\n");
    std::fflush(stdout);
    std::fflush(stderr);
    // Returns only when the command could not be started.
    Error err = exec::replace_process(args.command, env);
    err.message = "launch: " + err.message;
    return report_error(err, false);
}

/// Options doctor and launch share.

}  // namespace

void set_launch_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LaunchArgs>();
    auto* cmd = app.add_subcommand("launch", "Run doctor and lint, then exec CMD with the venv's environment");
    cmd->add_option("recipe", args->doctor.recipe, "Recipe (venv, [[lint]] rules)")->required();
    cmd->add_option("command", args->command, "The training command, after --")->required();
    cmd->add_option("--venv", args->doctor.venv, "The venv (default: the recipe's [venv] path)");
    add_doctor_options(cmd, args->doctor);
    cmd->add_flag("--force", args->force, "Launch even when doctor or lint report errors");
    cmd->footer(
        "The flags linted are those of the --yaml-cfg FILE in CMD, else CMD's own.\n"
        "CMD gets VENV, VIRTUAL_ENV and PATH (venv's bin first), less the recipe's "
        "[env] unset.\nExit codes: CMD's own, 3 refused, 2 usage, 1 CMD not found.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_launch(*args); });
}

}  // namespace bootstrap::cli
