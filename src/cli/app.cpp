#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/version.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"

namespace bootstrap::cli {

namespace {

/// Every command, in `--help`'s order (`run` first: a bare recipe path means it); each setter
/// adds the subcommand of that name (tests/integration/test_cli_usability.py checks the two
/// agree).
struct Command {
    const char* name;
    void (*set)(CLI::App&, Outcome&);
};
constexpr Command k_commands[] = {
    {"run", set_run_command},         {"plan", set_plan_command},
    {"demo", set_demo_command},       {"snapshot", set_snapshot_command},
    {"history", set_history_command}, {"diff", set_diff_command},
    {"fleet", set_fleet_command},     {"pack", set_pack_command},
    {"unpack", set_unpack_command},   {"containerfile", set_containerfile_command},
    {"seal", set_seal_command},       {"rollback", set_rollback_command},
    {"lock", set_lock_command},       {"device", set_device_command},
    {"inspect", set_inspect_command}, {"explain", set_explain_command},
    {"lint", set_lint_command},       {"perf", set_perf_command},
    {"doctor", set_doctor_command},   {"relocate", set_relocate_command},
    {"launch", set_launch_command},   {"cache", set_cache_command},
};

std::vector<std::string> command_names() {
    std::vector<std::string> names;
    for (const auto& command : k_commands) names.emplace_back(command.name);
    return names;
}

/// `bootstrap WORD ...` with WORD not a subcommand is `bootstrap run WORD ...` only when WORD
/// is a recipe: an existing path, or one that looks like a path to a recipe (has a '/' or ends
/// in .toml), so that a mistyped command is not read as a recipe file.
bool looks_like_recipe(std::string_view word) {
    std::error_code ec;
    return word.find('/') != std::string_view::npos || word.ends_with(".toml") ||
           std::filesystem::exists(std::filesystem::path(word), ec);
}

int unknown_command(std::string_view word, const std::vector<std::string>& names) {
    std::string suggestion = core::closest_match(word, names);
    std::string message = suggestion.empty()
                              ? fmt::format("unknown command '{}' (see bootstrap --help)", word)
                              : fmt::format("unknown command '{}' (did you mean '{}'?)", word, suggestion);
    TerminalStatus status;
    status.error(Error{ErrorCode::usage, std::move(message), "to run a recipe, name its file: bootstrap run FILE"});
    return 2;
}

int run_commands(int argc, char** argv) {
    // BOOTSTRAP_LOG sets the console's log level for every command; `run -v/-vv` raise it.
    if (auto warning = core::log::configure_console(0); !warning.empty()) fmt::print(stderr, "warning: {}\n", warning);

    CLI::App app{"bootstrap: build reproducible GPU training environments from declarative recipes", "bootstrap"};
    app.set_version_flag("-V,--version", std::string("bootstrap ") + bootstrap_version());
    app.require_subcommand(1);
    app.footer(
        "bootstrap RECIPE is short for bootstrap run RECIPE (RECIPE: an existing file, or a path\n"
        "with a '/' or ending in .toml). `bootstrap help COMMAND` is `bootstrap COMMAND --help`.\n"
        "Exit codes: 0 ok, 1 a step failed (or an internal error), 2 usage or invalid recipe,\n"
        "3 doctor/lint found errors, 130 interrupted.\n"
        "BOOTSTRAP_LOG=trace|debug|info|warn|error|off sets the log level on stderr (default warn;\n"
        "`run -v` info, `-vv` debug); a run that changes something also writes its debug log to\n"
        "<venv>/.bootstrap/logs/<run-id>/bootstrap.log.");
    // Only the command asked for is built (each brings dozens of options, validators and
    // strings: building all of them cost ~0.4 ms and ~60 page faults of every start-up); none
    // for `--version`; every one when none is named (the top-level help and errors list them).
    Outcome outcome;
    std::vector<std::string> args(argv, argv + argc);
    if (args.size() > 1 && args[1] == "help") {
        // `bootstrap help [COMMAND]` is `bootstrap [COMMAND] --help`.
        args.erase(args.begin() + 1);
        args.insert(args.size() > 1 ? args.begin() + 2 : args.end(), "--help");
    }
    const Command* named = nullptr;
    if (args.size() > 1)
        for (const auto& command : k_commands)
            if (args[1] == command.name) named = &command;
    if (named == nullptr && args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
        if (!looks_like_recipe(args[1])) return unknown_command(args[1], command_names());
        args.insert(args.begin() + 1, "run");
        named = &k_commands[0];
    }
    const bool version_only = args.size() == 2 && (args[1] == "-V" || args[1] == "--version");
    if (named != nullptr) {
        named->set(app, outcome);
    } else if (!version_only) {
        for (const auto& command : k_commands) command.set(app, outcome);
    }
    std::vector<char*> pointers;
    for (auto& a : args) pointers.push_back(a.data());
    try {
        app.parse(static_cast<int>(pointers.size()), pointers.data());
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    return outcome.exit_code;
}

}  // namespace

int run_cli(int argc, char** argv) {
    core::install_interrupt_handlers();
    try {
        return run_commands(argc, argv);
    } catch (const std::exception& e) {
        // An exception that escaped the module that should have turned it into an Error (a
        // throwing std::filesystem overload, a library's): a bug, but the user gets one line
        // and exit code 1 instead of std::terminate's abort. Its text may quote a URL.
        std::fflush(stdout);
        fmt::print(stderr, "error: internal error: {}\n", core::redact_text(e.what()));
        return 1;
    }
}

}  // namespace bootstrap::cli
