#pragma once
// Subprocesses: argv only (no shell), explicit environment, stdin from /dev/null, own process
// group, stdout+stderr through one pipe into a log file, timeout -> SIGTERM then SIGKILL to the
// whole group. An interrupt (core::interrupt_signal) kills the group the same way.

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"

namespace bootstrap::exec {

struct ProcessSpec {
    std::vector<std::string> argv;             // argv[0] is looked up in env PATH if it has no '/'
    std::filesystem::path cwd;                 // empty: inherit
    EnvMap env;                                // the complete environment of the child
    std::optional<std::chrono::milliseconds> timeout;
    std::chrono::milliseconds kill_grace{3000};  // SIGTERM -> SIGKILL delay
    std::filesystem::path log_path;            // empty: output is captured in memory only
    bool append_log = true;
    /// Called with each chunk of output as it arrives (may be empty function).
    std::function<void(std::string_view)> on_output;
    bool capture = false;                      // keep all output in ProcessResult::output
};

struct ProcessResult {
    int exit_code = -1;        // valid when signal == 0
    int signal = 0;            // terminating signal, 0 if it exited
    bool timed_out = false;
    bool interrupted = false;  // we killed it because core::interrupt_signal() was set
    double seconds = 0;
    std::string output;        // when capture was set
    [[nodiscard]] bool ok() const { return signal == 0 && exit_code == 0 && !timed_out && !interrupted; }
    /// "exit code 3", "killed by SIGKILL", "timed out after 5s", "interrupted".
    [[nodiscard]] std::string describe() const;
};

/// Run to completion. Fails (Error) only when the child could not be started (e.g. argv[0] not
/// found: the message names it and the PATH searched); a non-zero exit is a ProcessResult.
[[nodiscard]] Result<ProcessResult> run_process(const ProcessSpec& spec);

/// Resolve a program name against a PATH string; empty path when not found.
[[nodiscard]] std::filesystem::path find_program(std::string_view name, std::string_view path_var);

}  // namespace bootstrap::exec
