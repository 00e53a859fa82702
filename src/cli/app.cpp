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
    return word == "run" || word == "plan" || word == "demo" || word == "help";
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
        "Exit codes: 0 ok, 1 a step failed, 2 usage or invalid recipe, 130 interrupted.");
    Outcome outcome;
    set_run_command(app, outcome);
    set_plan_command(app, outcome);
    set_demo_command(app, outcome);
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    return outcome.exit_code;
}

}  // namespace bootstrap::cli
