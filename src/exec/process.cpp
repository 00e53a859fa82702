#include "exec/process.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "core/terminal_filter.hpp"
#include "exec/exec_image.hpp"

namespace bootstrap::exec {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Upper bound on one poll(): how late a timeout or an interrupt may be noticed.
constexpr milliseconds k_poll_interval{100};
// After SIGKILL to the group, how long the pipe may stay open before we stop reading it. Only a
// process that left our group (setsid) can still hold it, and nothing we send reaches it.
constexpr milliseconds k_abandon_pipe_after{1000};

/// The descriptors every child inherits (InheritedFd), process-wide like the interrupt flag:
/// whoever starts a child while the venv lock is held must pass it on, whichever module that is.
struct Inherited {
    unsigned long id;
    int fd;
    InheritedFd::OnChild on_child;
};

std::mutex& inherited_mutex() {
    static std::mutex m;
    return m;
}

std::vector<Inherited>& inherited_list() {
    static std::vector<Inherited> list;
    return list;
}

std::vector<Inherited> inherited_now() {
    std::lock_guard<std::mutex> guard(inherited_mutex());
    return inherited_list();
}

void tell_children(const std::vector<Inherited>& inherited, pid_t pid, bool started) {
    for (const auto& i : inherited)
        if (i.on_child) i.on_child(static_cast<long>(pid), started);
}

using core::Fd;

struct Pipe {
    Fd read;
    Fd write;
};

/// If our own stdio was closed, pipe2 (or open) hands out 0..2, and the child's dup2/open of its
/// stdio would clobber the write end: it is moved out of the way. False when it cannot be.
[[nodiscard]] bool above_stdio(Fd& write) {
    if (write.get() > STDERR_FILENO) return true;
    int moved = ::fcntl(write.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0) return false;
    write = Fd(moved);
    return true;
}

[[nodiscard]] Result<Pipe> make_pipe() {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0)
        return fail(ErrorCode::process, fmt::format("cannot create an output pipe: {}", std::strerror(errno)));
    Pipe pipe{Fd(fds[0]), Fd(fds[1])};
    if (!above_stdio(pipe.write))
        return fail(ErrorCode::process, fmt::format("cannot create an output pipe: {}", std::strerror(errno)));
    return pipe;
}

/// A pseudo-terminal as the output "pipe": read = the master, write = the terminal the child
/// writes to (raw: bytes pass unchanged; `columns` wide). nullopt when the system has none to
/// give (no /dev/ptmx in a container, all in use): the caller uses a pipe.
[[nodiscard]] std::optional<Pipe> make_terminal(unsigned short columns) {
    Fd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!master.is_open() || ::grantpt(master.get()) != 0 || ::unlockpt(master.get()) != 0) return std::nullopt;
    std::array<char, 128> name{};
    if (::ptsname_r(master.get(), name.data(), name.size()) != 0) return std::nullopt;
    Fd terminal(::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!terminal.is_open() || !above_stdio(terminal)) return std::nullopt;
    termios mode{};
    if (::tcgetattr(terminal.get(), &mode) != 0) return std::nullopt;
    ::cfmakeraw(&mode);
    if (::tcsetattr(terminal.get(), TCSANOW, &mode) != 0) return std::nullopt;
    winsize size{};
    size.ws_row = 50;
    size.ws_col = columns;
    if (::ioctl(terminal.get(), TIOCSWINSZ, &size) != 0) return std::nullopt;
    return Pipe{std::move(master), std::move(terminal)};
}

[[nodiscard]] Result<Fd> open_log(const ProcessSpec& spec) {
    if (spec.log_path.empty()) return Fd();
    if (spec.log_path.has_parent_path()) BS_CHECK(core::create_directories(spec.log_path.parent_path()));
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (spec.append_log ? 0 : O_TRUNC);
    int fd = ::open(spec.log_path.c_str(), flags, 0644);
    if (fd < 0)
        return fail(ErrorCode::io, fmt::format("cannot open log {}: {}", spec.log_path.string(), std::strerror(errno)));
    return Fd(fd);
}

[[nodiscard]] Result<fs::path> resolve_program(const ProcessSpec& spec) {
    const std::string& name = spec.argv.front();
    // A name with a slash is used as given (relative to the child's cwd, as execve after the
    // chdir sees it); posix_spawn reports whether it can be executed.
    if (name.find('/') != std::string::npos) return fs::path(name);
    auto path_it = spec.env.find("PATH");
    if (path_it == spec.env.end())
        return fail(ErrorCode::not_found,
                    fmt::format("cannot run '{}': not found (PATH is not set in its environment)", name));
    fs::path program = find_program(name, path_it->second);
    if (program.empty())
        return fail(ErrorCode::not_found,
                    fmt::format("cannot run '{}': not found on PATH ({})", name, path_it->second));
    return program;
}

/// "cannot run 'uv' (/usr/bin/uv) in /work: " — the prefix of every start failure.
[[nodiscard]] std::string start_failure_prefix(const ProcessSpec& spec, const fs::path& program) {
    std::string text = fmt::format("cannot run '{}'", spec.argv.front());
    if (program.string() != spec.argv.front()) text += fmt::format(" ({})", program.string());
    if (!spec.cwd.empty()) text += fmt::format(" in {}", spec.cwd.string());
    return text;
}

// The C spawn objects must be destroyed on every path, including early failures.
class SpawnSetup {
public:
    SpawnSetup() {
        posix_spawn_file_actions_init(&m_actions);
        posix_spawnattr_init(&m_attr);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&m_actions);
        posix_spawnattr_destroy(&m_attr);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;

    /// Returns the first error of the set-up calls, 0 when all succeeded. `inherit` go to
    /// descriptors 3, 4, ...: they must all be numbered above those (see run_process).
    int prepare(const ProcessSpec& spec, int output_fd, const std::vector<int>& inherit) {
        int rc = 0;
        auto step = [&rc](int r) {
            if (rc == 0) rc = r;
        };
        step(posix_spawn_file_actions_addopen(&m_actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0));
        step(posix_spawn_file_actions_adddup2(&m_actions, output_fd, STDOUT_FILENO));
        step(posix_spawn_file_actions_adddup2(&m_actions, output_fd, STDERR_FILENO));
        // dup2 leaves the copy without FD_CLOEXEC: it survives the exec.
        for (size_t i = 0; i < inherit.size(); ++i)
            step(posix_spawn_file_actions_adddup2(&m_actions, inherit[i], STDERR_FILENO + 1 + static_cast<int>(i)));
        // Anything a library opened without O_CLOEXEC would otherwise leak into the child and
        // could hold a pipe or a lock open for as long as the build runs.
        step(
            posix_spawn_file_actions_addclosefrom_np(&m_actions, STDERR_FILENO + 1 + static_cast<int>(inherit.size())));
        if (!spec.cwd.empty()) step(posix_spawn_file_actions_addchdir_np(&m_actions, spec.cwd.c_str()));

        sigset_t mask;
        sigemptyset(&mask);
        step(posix_spawnattr_setsigmask(&m_attr, &mask));
        // Ignored dispositions survive exec; a child must not inherit ours.
        sigset_t defaults;
        sigemptyset(&defaults);
        for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
        step(posix_spawnattr_setsigdefault(&m_attr, &defaults));
        // Own session, hence own process group (sid = pgid = pid): one kill(-pid) reaches every
        // grandchild, the terminal's ^C reaches only us (we forward it as SIGTERM), and the
        // child has no controlling terminal: it cannot open /dev/tty to write past the log, or
        // to read a password the user never sees asked. (glibc >= 2.26, below our floor of 2.34;
        // not with POSIX_SPAWN_SETPGROUP: a session leader cannot change its group.)
        step(posix_spawnattr_setflags(&m_attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
        return rc;
    }

    const posix_spawn_file_actions_t* actions() const { return &m_actions; }
    const posix_spawnattr_t* attr() const { return &m_attr; }

private:
    posix_spawn_file_actions_t m_actions;
    posix_spawnattr_t m_attr;
};

[[nodiscard]] Result<pid_t> spawn_child(const ProcessSpec& spec, const fs::path& program, const EnvMap& env,
                                        int output_fd, const std::vector<int>& inherit) {
    SpawnSetup setup;
    if (int rc = setup.prepare(spec, output_fd, inherit); rc != 0)
        return fail(ErrorCode::process, fmt::format("{}: cannot prepare the spawn: {}",
                                                    start_failure_prefix(spec, program), std::strerror(rc)));

    ExecImage image(spec.argv, env);
    pid_t pid = -1;
    // glibc's posix_spawn reports chdir and exec failures of the child through its return value.
    int rc = ::posix_spawn(&pid, program.c_str(), setup.actions(), setup.attr(), image.argv(), image.envp());
    if (rc != 0)
        return fail(ErrorCode::process, fmt::format("{}: {}", start_failure_prefix(spec, program), std::strerror(rc)));
    return pid;
}

[[nodiscard]] bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// glibc 2.36's <sys/pidfd.h> lacks extern "C", so its wrapper cannot be linked from C++.
[[nodiscard]] int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U)); }

/// What the child was given that must not be shown: the values of its secret-named variables
/// (core::is_secret_name, a recipe's `[env] secret` included) and the credentials of URLs in its
/// environment and argv.
std::vector<std::string> secret_values(const ProcessSpec& spec) {
    std::vector<std::string> out;
    const auto& extra = core::log::secret_names();
    for (const auto& [name, value] : spec.env) {
        if (core::is_secret_name(name, extra)) out.push_back(value);
        for (auto& c : core::url_credentials(value)) out.push_back(std::move(c));
    }
    for (const auto& word : spec.argv)
        for (auto& c : core::url_credentials(word)) out.push_back(std::move(c));
    return out;
}

/// How a child's output is made text. A filter (the transcript) reads '\r' as a redraw and
/// counts columns; the log of a plain child gets '\r' as a line end, so that `cat` cannot
/// overprint one line with the next.
core::TerminalFilter::Options text_options(const ProcessSpec& spec) {
    if (spec.filter) return {core::TerminalFilter::CarriageReturn::redraw, true};
    return {};
}

/// Drives one started child to completion and reaps it.
///
/// States, re-evaluated on every wake-up (output arrived, or k_poll_interval passed):
///   running      reading output. Timeout or interrupt -> terminating. The child exited but
///                something still holds the pipe for orphan_grace -> terminating.
///   terminating  SIGTERM sent to the group; kill_grace later -> killing.
///   killing      SIGKILL sent to the group; a pipe still open k_abandon_pipe_after later is
///                closed unread.
///   done         the child has exited and the pipe is closed: reap, fill the result.
/// The child is observed with WNOWAIT and reaped only at the end, so its pid (our pgid) cannot
/// be reused while we might still signal the group.
class Supervision {
public:
    Supervision(const ProcessSpec& spec, pid_t pid, Fd output, Fd log)
        : m_spec(spec),
          m_pid(pid),
          m_output(std::move(output)),
          m_log(std::move(log)),
          // A pidfd turns readable when the child exits, so poll() wakes at once instead of at
          // the next k_poll_interval. Without one (old kernel, seccomp) we fall back to ticks.
          m_exit_fd(open_pidfd(pid)),
          m_text(text_options(spec)),
          // The mask reads the filter's text: it looks for each value as the filter shows it.
          m_mask(secret_values(spec), text_options(spec)) {}

    // Also runs when on_output throws: nothing of the child may outlive us.
    ~Supervision() {
        if (m_reaped) return;
        ::kill(-m_pid, SIGKILL);
        reap();
    }
    Supervision(const Supervision&) = delete;
    Supervision& operator=(const Supervision&) = delete;

    ProcessResult run() {
        const auto started = Clock::now();
        while (true) {
            const auto now = Clock::now();
            if (!m_exited_at) observe_exit(now);
            if (m_exited_at && !m_output.is_open()) break;
            escalate(now, started);
            if (m_killed_at && m_output.is_open() && now - *m_killed_at >= k_abandon_pipe_after && m_exited_at)
                m_output.reset();
            if (m_exited_at && !m_output.is_open()) break;
            wait_and_read(next_wake(now, started));
        }
        std::string rest;
        m_text.finish(rest);
        if (!m_mask.empty()) {
            rest = m_mask.feed(rest);
            rest += m_mask.flush();
        }
        pass_on(rest);
        if (m_spec.filter) emit(m_spec.filter({}));
        reap();
        return std::move(m_result);
    }

    /// Why writing the log failed, empty when it did not.
    [[nodiscard]] const std::string& log_error() const { return m_log_error; }

private:
    void observe_exit(Clock::time_point now) {
        siginfo_t info{};
        int rc = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
        // ECHILD: someone else reaped it (SIGCHLD ignored process-wide); it is gone either way.
        if ((rc == 0 && info.si_pid == m_pid) || (rc < 0 && errno == ECHILD)) m_exited_at = now;
    }

    void escalate(Clock::time_point now, Clock::time_point started) {
        if (!m_termed_at) {
            if (m_spec.timeout && now - started >= *m_spec.timeout) {
                m_result.timed_out = true;
                m_result.timeout_seconds = std::chrono::duration<double>(*m_spec.timeout).count();
                signal_group(SIGTERM, now);
            } else if (int sig = core::interrupt_signal(); sig != 0) {
                m_result.interrupted = true;
                m_result.interrupt_signal = sig;
                signal_group(SIGTERM, now);
            } else if (m_exited_at && now - *m_exited_at >= m_spec.orphan_grace) {
                signal_group(SIGTERM, now);
            }
        } else if (!m_killed_at && now - *m_termed_at >= m_spec.kill_grace) {
            signal_group(SIGKILL, now);
        }
    }

    void signal_group(int sig, Clock::time_point now) {
        ::kill(-m_pid, sig);  // ESRCH: the group is already empty, which is what we wanted
        if (sig == SIGKILL) m_killed_at = now;
        else m_termed_at = now;
    }

    [[nodiscard]] milliseconds next_wake(Clock::time_point now, Clock::time_point started) const {
        auto wake = now + k_poll_interval;
        auto consider = [&](Clock::time_point at) { wake = std::min(wake, at); };
        if (!m_termed_at && m_spec.timeout) consider(started + *m_spec.timeout);
        if (!m_termed_at && m_exited_at) consider(*m_exited_at + m_spec.orphan_grace);
        if (m_termed_at && !m_killed_at) consider(*m_termed_at + m_spec.kill_grace);
        auto delay = std::chrono::ceil<milliseconds>(wake - now);
        return std::clamp(delay, milliseconds(1), k_poll_interval);
    }

    void wait_and_read(milliseconds delay) {
        std::array<pollfd, 2> fds{};
        nfds_t count = 0;
        if (m_output.is_open()) fds[count++] = pollfd{m_output.get(), POLLIN, 0};
        // Once the exit is observed the pidfd stays readable; polling it then would spin.
        if (m_exit_fd.is_open() && !m_exited_at) fds[count++] = pollfd{m_exit_fd.get(), POLLIN, 0};
        int ready = ::poll(fds.data(), count, static_cast<int>(delay.count()));
        if (ready <= 0) return;  // timeout, or EINTR from a signal: re-check the state
        if (!m_output.is_open() || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
        ssize_t n = ::read(m_output.get(), m_buffer.data(), m_buffer.size());
        if (n > 0) {
            deliver(std::string_view(m_buffer.data(), static_cast<size_t>(n)));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            m_output.reset();  // EOF: every holder of the write end is gone
        }
    }

    /// What the child printed, as text (core::TerminalFilter: no escape sequence or control
    /// character reaches the log, the capture or the terminal), then with the secret values it
    /// was given masked: the mask sees the text a user sees, so an escape inside a secret
    /// ("sup\e[0mersecret") cannot split it. A filter (the installer's transcript) comes last.
    void deliver(std::string_view chunk) {
        std::string text;
        m_text.feed(chunk, text);
        pass_on(m_mask.empty() ? text : m_mask.feed(text));
    }

    void pass_on(std::string_view text) {
        if (text.empty()) return;
        if (m_spec.filter) return emit(m_spec.filter(text));
        emit(text);
    }

    void emit(std::string_view chunk) {
        if (chunk.empty()) return;
        if (m_log.is_open() && !write_all(m_log.get(), chunk)) {
            m_log_error = std::strerror(errno);
            m_log.reset();  // keep running the child; the caller gets the error afterwards
        }
        if (m_spec.capture) m_result.output.append(chunk);
        if (m_spec.on_output) m_spec.on_output(chunk);
    }

    void reap() {
        int status = 0;
        pid_t rc;
        do {
            rc = ::waitpid(m_pid, &status, 0);
        } while (rc < 0 && errno == EINTR);
        m_reaped = true;
        if (rc != m_pid) return;  // ECHILD: reaped elsewhere, status unknown
        if (WIFEXITED(status)) {
            m_result.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            m_result.signal = WTERMSIG(status);
        }
    }

    const ProcessSpec& m_spec;
    pid_t m_pid;
    Fd m_output;
    Fd m_log;
    Fd m_exit_fd;
    bool m_reaped = false;
    std::optional<Clock::time_point> m_exited_at;
    std::optional<Clock::time_point> m_termed_at;
    std::optional<Clock::time_point> m_killed_at;
    std::string m_log_error;
    core::TerminalFilter m_text;
    core::SecretMask m_mask;
    ProcessResult m_result;
    std::array<char, 64 * 1024> m_buffer{};
};

}  // namespace

InheritedFd::InheritedFd(int fd, OnChild on_child) {
    static unsigned long next_id = 0;
    std::lock_guard<std::mutex> guard(inherited_mutex());
    m_id = ++next_id;
    inherited_list().push_back({m_id, fd, std::move(on_child)});
}

InheritedFd::~InheritedFd() {
    std::lock_guard<std::mutex> guard(inherited_mutex());
    auto& list = inherited_list();
    list.erase(std::remove_if(list.begin(), list.end(), [&](const Inherited& i) { return i.id == m_id; }), list.end());
}

std::string signal_name(int sig) {
    if (const char* abbrev = ::sigabbrev_np(sig)) return fmt::format("SIG{}", abbrev);
    return fmt::format("signal {}", sig);
}

std::string ProcessResult::describe() const {
    if (timed_out) return fmt::format("timed out after {:g}s (killed)", timeout_seconds);
    if (interrupted)
        return interrupt_signal != 0 ? fmt::format("interrupted by {}", signal_name(interrupt_signal))
                                     : std::string("interrupted");
    if (signal != 0) return fmt::format("killed by signal {} ({})", signal, signal_name(signal));
    return fmt::format("exit code {}", exit_code);
}

fs::path find_program(std::string_view name, std::string_view path_var) {
    auto is_executable_file = [](const fs::path& candidate) {
        struct stat st {};
        return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0;
    };
    if (name.empty()) return {};
    if (name.find('/') != std::string_view::npos)
        return is_executable_file(fs::path(name)) ? fs::path(name) : fs::path();
    for (const auto& dir : core::split(path_var, ':')) {
        if (dir.empty()) continue;  // an empty entry means ".", which we do not want to honour
        fs::path candidate = fs::path(dir) / name;
        if (is_executable_file(candidate)) return candidate;
    }
    return {};
}

fs::path find_program(std::string_view name, const EnvMap& env) {
    auto path = env.find("PATH");
    return find_program(name, path == env.end() ? std::string_view() : std::string_view(path->second));
}

namespace {

/// The debug log's account of a child: its argv, cwd, and the environment it gets where that
/// differs from bootstrap's own (secret values shown as ***, URL credentials redacted).
void log_start(const ProcessSpec& spec, const fs::path& program, pid_t pid) {
    if (!core::log::enabled(core::log::Level::debug)) return;
    std::string argv = program.string();
    for (size_t i = 1; i < spec.argv.size(); ++i) argv += " " + core::shell_quote(spec.argv[i]);
    core::log::debug("pid {} started: {}{}", pid, argv,
                     spec.cwd.empty() ? std::string() : " (cwd " + spec.cwd.string() + ")");
    const EnvMap own = current_environment();
    std::string changed;
    for (const auto& [name, value] : spec.env) {
        auto it = own.find(name);
        if (it == own.end() || it->second != value) changed += " " + core::log::shown_env(name, value);
    }
    for (const auto& [name, value] : own)
        if (!spec.env.contains(name)) changed += " -" + name;
    if (!changed.empty()) core::log::debug("pid {} environment (changed from bootstrap's):{}", pid, changed);
}

}  // namespace

Result<ProcessResult> run_process(const ProcessSpec& spec) {
    if (spec.argv.empty() || spec.argv.front().empty()) return fail(ErrorCode::process, "cannot run an empty command");
    if (int sig = core::interrupt_signal(); sig != 0)
        return fail(ErrorCode::interrupted,
                    fmt::format("not starting '{}': interrupted by {}", spec.argv.front(), signal_name(sig)));
    BS_TRY(fs::path program, resolve_program(spec));
    if (!spec.cwd.empty()) {
        std::error_code ec;
        if (!fs::is_directory(spec.cwd, ec))
            return fail(ErrorCode::process,
                        fmt::format("{}: the working directory does not exist", start_failure_prefix(spec, program)));
    }
    BS_TRY(Fd log, open_log(spec));
    std::optional<Pipe> terminal = spec.terminal ? make_terminal(spec.terminal_columns) : std::nullopt;
    if (spec.terminal && !terminal)
        core::log::debug("no pseudo-terminal for '{}': its output goes through a pipe", spec.argv.front());
    const bool on_terminal = terminal.has_value();
    Pipe pipe;
    if (on_terminal) {
        pipe = std::move(*terminal);
    } else {
        BS_TRY(pipe, make_pipe());
    }

    // Copies numbered above their places in the child (3, 4, ...), so that no dup2 there
    // overwrites one that is still to be placed; closefrom then closes the copies.
    const auto inherited = inherited_now();
    std::vector<Fd> copies;
    std::vector<int> inherit;
    for (const auto& i : inherited) {
        int copy = ::fcntl(i.fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1 + static_cast<int>(inherited.size()));
        if (copy < 0)
            return fail(ErrorCode::process,
                        fmt::format("{}: cannot pass descriptor {} on: {}", start_failure_prefix(spec, program), i.fd,
                                    std::strerror(errno)));
        copies.emplace_back(copy);
        inherit.push_back(copy);
    }

    const auto started = Clock::now();
    // Installers draw nothing on a terminal they think is dumb.
    EnvMap env = spec.env;
    if (on_terminal && (!env.count("TERM") || env["TERM"] == "dumb" || env["TERM"].empty())) env["TERM"] = "xterm";
    BS_TRY(pid_t pid, spawn_child(spec, program, env, pipe.write.get(), inherit));
    // Only the child's copies of the write end may remain, or EOF would never come.
    pipe.write.reset();
    copies.clear();
    tell_children(inherited, pid, true);
    log_start(spec, program, pid);

    ProcessResult result;
    std::string log_error;
    {
        Supervision supervision(spec, pid, std::move(pipe.read), std::move(log));
        result = supervision.run();
        log_error = supervision.log_error();
    }
    result.terminal = on_terminal;
    tell_children(inherited, pid, false);
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    core::log::debug("pid {} ({}): {} after {:.3f} s", pid, program.filename().string(), result.describe(),
                     result.seconds);
    if (!log_error.empty())
        return fail(
            ErrorCode::io,
            fmt::format("cannot write log {} of '{}': {}", spec.log_path.string(), spec.argv.front(), log_error),
            fmt::format("the child finished with {}", result.describe()));
    return result;
}

}  // namespace bootstrap::exec
