#pragma once
// One function per subcommand: `set_X_command` binds options to a plain struct and a callback
// that calls into the library. Only this module sees CLI11.

#include <string>

namespace CLI {
class App;
}

namespace bootstrap::cli {

/// Exit code holder shared by the subcommand callbacks.
struct Outcome {
    int exit_code = 0;
};

void set_run_command(CLI::App& app, Outcome& outcome);
void set_plan_command(CLI::App& app, Outcome& outcome);
void set_demo_command(CLI::App& app, Outcome& outcome);
void set_snapshot_command(CLI::App& app, Outcome& outcome);       // snapshot_command.cpp
void set_history_command(CLI::App& app, Outcome& outcome);        // history_command.cpp
void set_diff_command(CLI::App& app, Outcome& outcome);           // diff_command.cpp
void set_fleet_command(CLI::App& app, Outcome& outcome);          // fleet_command.cpp
void set_pack_command(CLI::App& app, Outcome& outcome);           // pack_commands.cpp
void set_unpack_command(CLI::App& app, Outcome& outcome);         // pack_commands.cpp
void set_containerfile_command(CLI::App& app, Outcome& outcome);  // containerfile_command.cpp
void set_seal_command(CLI::App& app, Outcome& outcome);           // seal_command.cpp
void set_rollback_command(CLI::App& app, Outcome& outcome);       // rollback_command.cpp
void set_lock_command(CLI::App& app, Outcome& outcome);           // lock_command.cpp
void set_device_command(CLI::App& app, Outcome& outcome);         // device_command.cpp
void set_inspect_command(CLI::App& app, Outcome& outcome);        // inspect_command.cpp
void set_explain_command(CLI::App& app, Outcome& outcome);        // explain_command.cpp
void set_lint_command(CLI::App& app, Outcome& outcome);           // lint_command.cpp
void set_perf_command(CLI::App& app, Outcome& outcome);           // perf_command.cpp
void set_doctor_command(CLI::App& app, Outcome& outcome);         // doctor_command.cpp
void set_relocate_command(CLI::App& app, Outcome& outcome);       // relocate_command.cpp
void set_launch_command(CLI::App& app, Outcome& outcome);         // launch_command.cpp
void set_cache_command(CLI::App& app, Outcome& outcome);          // cache_command.cpp

/// Entry point used by main(): parse argv, dispatch, return the process exit code.
int run_cli(int argc, char** argv);

/// The demo recipe compiled into the binary (recipes/demo.toml).
[[nodiscard]] const std::string& embedded_demo_recipe();

}  // namespace bootstrap::cli
