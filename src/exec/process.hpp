#pragma once
// Subprocesses: argv only (no shell), explicit environment, stdin from /dev/null, own session
// and process group (no controlling terminal), stdout+stderr through one pipe (or a
// pseudo-terminal) into a log file as text (escape sequences and control characters stripped,
// core::TerminalFilter; secret values masked), timeout -> SIGTERM then SIGKILL to the whole
// group. An interrupt (core::interrupt_signal) kills the group the same way.
//
// The child is not reaped until its output is finished: a zombie leader keeps its pid, and so
// the process group id, from being reused, which makes kill(-pgid) safe up to the end.

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
    std::vector<std::string> argv;  // argv[0] is looked up in env PATH if it has no '/'
    std::filesystem::path cwd;      // empty: inherit
    EnvMap env;                     // the complete environment of the child
    std::optional<std::chrono::milliseconds> timeout;
    std::chrono::milliseconds kill_grace{3000};  // SIGTERM -> SIGKILL delay
    std::filesystem::path log_path;              // empty: output is captured in memory only
    bool append_log = true;
    /// Called with each chunk of output as it arrives (may be empty function).
    std::function<void(std::string_view)> on_output;
    bool capture = false;  // keep all output in ProcessResult::output
    /// stdout and stderr on a pseudo-terminal of `terminal_columns` instead of the pipe, so that
    /// an installer draws its progress bars (pyenv/download_progress.hpp); the pipe when none
    /// can be opened (ProcessResult::terminal says which). It is not the child's controlling
    /// terminal and passes bytes as they are (no "\r\n" for '\n'); stdin stays /dev/null. A
    /// child without TERM (or with TERM=dumb) gets TERM=xterm, or it would draw nothing. The
    /// output is made text all the same: without a filter, a '\r' is a line end.
    bool terminal = false;
    unsigned short terminal_columns = 160;
    /// What the child printed, as text (escapes and controls stripped, '\r' kept for it, a tab
    /// a space) and masked, before it reaches the log, `capture` and `on_output`: returns the
    /// text that goes on (a terminal's lines: core::TerminalTranscript). Called once more with
    /// an empty chunk when the output has ended, for what it still holds.
    std::function<std::string(std::string_view)> filter;
    /// After the child exits, how long a background grandchild may keep the output pipe open
    /// before the group is killed (a daemon left behind must not hang the build).
    std::chrono::milliseconds orphan_grace{2000};
};

struct ProcessResult {
    int exit_code = -1;  // valid when signal == 0
    int signal = 0;      // terminating signal, 0 if it exited
    bool timed_out = false;
    bool interrupted = false;    // we killed it because core::interrupt_signal() was set
    int interrupt_signal = 0;    // that signal (SIGINT or SIGTERM), when interrupted
    double timeout_seconds = 0;  // the limit that was hit, when timed_out
    double seconds = 0;
    bool terminal = false;  // the output came through a pseudo-terminal (ProcessSpec::terminal)
    std::string output;     // when capture was set
    [[nodiscard]] bool ok() const { return signal == 0 && exit_code == 0 && !timed_out && !interrupted; }
    /// "exit code 3", "killed by signal 9 (SIGKILL)", "timed out after 5s (killed)",
    /// "interrupted by SIGINT". Timeout and interrupt take precedence over the raw status.
    [[nodiscard]] std::string describe() const;
};

/// While it lives, every child that run_process starts (from any thread) gets `fd` open, at
/// descriptors 3, 4, ... in registration order (no FD_CLOEXEC), and `on_child` hears of each:
/// (pid, true) once it started, (pid, false) once it was reaped. For a lock that must stay held
/// by what we started even if we are killed: the venv lock (state/venv_lock.hpp). `fd` must stay
/// open while registered.
class InheritedFd {
public:
    using OnChild = std::function<void(long pid, bool started)>;
    explicit InheritedFd(int fd, OnChild on_child = {});
    ~InheritedFd();
    InheritedFd(const InheritedFd&) = delete;
    InheritedFd& operator=(const InheritedFd&) = delete;

private:
    unsigned long m_id;
};

/// Run to completion. Fails (Error) only when the child could not be started (argv[0] not
/// found: not_found, naming it and the PATH searched; exec failure or bad cwd: process; an
/// interrupt already pending: interrupted, nothing is started), or when the log could not be
/// opened or written (io, after the child has been reaped). A non-zero exit is a ProcessResult.
[[nodiscard]] Result<ProcessResult> run_process(const ProcessSpec& spec);

/// Resolve a program name against a PATH string: the first entry holding an executable regular
/// file. Empty entries are skipped (not "."). A name containing '/' is returned as is when it
/// is executable. Empty path when not found.
[[nodiscard]] std::filesystem::path find_program(std::string_view name, std::string_view path_var);

/// find_program against the PATH of `env`, the environment the program will run in (an unset
/// PATH finds nothing but a name containing '/').
[[nodiscard]] std::filesystem::path find_program(std::string_view name, const EnvMap& env);

/// "SIGKILL" for 9; "signal 42" when the number has no name.
[[nodiscard]] std::string signal_name(int sig);

}  // namespace bootstrap::exec
