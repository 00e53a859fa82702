#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/interrupt.hpp"

#ifndef BOOTSTRAP_VERSION
#define BOOTSTRAP_VERSION "dev"
#endif

namespace bootstrap::cli {

namespace {
bool is_subcommand(std::string_view word) {
    for (const char* known : {"run", "plan", "demo", "snapshot", "history", "diff", "rollback", "lock",
                              "device", "inspect", "explain", "lint", "perf", "doctor", "relocate",
                              "launch", "help"})
        if (word == known) return true;
    return false;
}
}  // namespace

int run_cli(int argc, char** argv) {
    core::install_interrupt_handlers();
    // `bootstrap RECIPE ...` is `bootstrap run RECIPE ...`.
    std::vector<char*> args(argv, argv + argc);
    static char run_word[] = "run";
    if (argc > 1 && argv[1][0] != '-' && !is_subcommand(argv[1])) args.insert(args.begin() + 1, run_word);

    CLI::App app{"bootstrap: build reproducible GPU training environments from declarative recipes",
                 "bootstrap"};
    app.set_version_flag("--version", std::string("bootstrap ") + BOOTSTRAP_VERSION);
    app.require_subcommand(1);
    app.footer(
        "bootstrap RECIPE is short for bootstrap run RECIPE.\n"
        "Exit codes: 0 ok, 1 a step failed, 2 usage or invalid recipe, 3 doctor/lint found errors,\n"
        "130 interrupted.");
    Outcome outcome;
    set_run_command(app, outcome);
    set_plan_command(app, outcome);
    set_demo_command(app, outcome);
    set_snapshot_command(app, outcome);
    set_history_command(app, outcome);
    set_diff_command(app, outcome);
    set_rollback_command(app, outcome);
    set_lock_command(app, outcome);
    set_device_command(app, outcome);
    set_inspect_command(app, outcome);
    set_explain_command(app, outcome);
    set_lint_command(app, outcome);
    set_perf_command(app, outcome);
    set_doctor_command(app, outcome);
    set_relocate_command(app, outcome);
    set_launch_command(app, outcome);
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    return outcome.exit_code;
}

}  // namespace bootstrap::cli
