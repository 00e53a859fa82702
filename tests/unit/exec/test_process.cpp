#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../skip.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"

using namespace std::chrono_literals;
using bootstrap::ErrorCode;
using bootstrap::core::read_file;
using bootstrap::core::TempDir;
using bootstrap::exec::find_program;
using bootstrap::exec::ProcessResult;
using bootstrap::exec::ProcessSpec;
using bootstrap::exec::run_process;

namespace {

ProcessSpec shell(const std::string& script) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.capture = true;
    return spec;
}

ProcessResult run_ok(const ProcessSpec& spec) {
    auto result = run_process(spec);
    if (!result) FAIL(result.error().message);
    return *result;
}

// Gone, or a zombie waiting for init: either way it no longer runs.
bool process_gone(pid_t pid) {
    auto deadline = std::chrono::steady_clock::now() + 2s;
    while (true) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        if (!stat || !std::getline(stat, line)) return true;
        auto paren = line.rfind(')');
        if (paren != std::string::npos && paren + 2 < line.size() && (line[paren + 2] == 'Z' || line[paren + 2] == 'X'))
            return true;
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(20ms);
    }
}

pid_t read_pid(const std::filesystem::path& file) {
    auto text = read_file(file);
    REQUIRE(text);
    return static_cast<pid_t>(std::stol(*text));
}

}  // namespace

TEST_CASE("exit codes are reported") {
    auto ok = run_ok(shell("exit 0"));
    CHECK(ok.ok());
    CHECK(ok.exit_code == 0);
    CHECK(ok.signal == 0);

    auto three = run_ok(shell("exit 3"));
    CHECK_FALSE(three.ok());
    CHECK(three.exit_code == 3);
    CHECK(three.describe() == "exit code 3");
    CHECK(three.seconds >= 0);
    CHECK(three.seconds < 5);
}

TEST_CASE("a child killed by a signal reports it") {
    auto result = run_ok(shell("kill -9 $$"));
    CHECK_FALSE(result.ok());
    CHECK(result.signal == SIGKILL);
    CHECK(result.describe() == "killed by signal 9 (SIGKILL)");
}

TEST_CASE("stdout and stderr are captured and logged through one pipe") {
    TempDir dir("bs-exec");
    auto spec = shell("echo out; echo err >&2; echo more");
    spec.log_path = dir.path() / "logs" / "nested" / "step.log";

    auto first = run_ok(spec);
    CHECK(first.output == "out\nerr\nmore\n");
    CHECK(read_file(spec.log_path).value() == "out\nerr\nmore\n");

    SECTION("append_log appends") {
        run_ok(spec);
        CHECK(read_file(spec.log_path).value() == "out\nerr\nmore\nout\nerr\nmore\n");
    }
    SECTION("append_log=false truncates") {
        spec.append_log = false;
        spec.argv = {"/bin/sh", "-c", "echo fresh"};
        run_ok(spec);
        CHECK(read_file(spec.log_path).value() == "fresh\n");
    }
}

TEST_CASE("on a pseudo-terminal the child sees a terminal of the width asked, its output arrives as text") {
    TempDir dir("bs-exec");
    auto spec = shell(
        "test -t 1 && echo 'stdout tty'; test -t 2 && echo 'stderr tty' >&2; test -t 0 || echo "
        "'stdin not'; stty -F /proc/self/fd/1 size 2>&1; echo \"TERM=$TERM\"; printf 'a\\nb\\rc\\n'");
    spec.terminal = true;
    spec.terminal_columns = 123;
    spec.log_path = dir.path() / "step.log";
    auto result = run_ok(spec);
    if (!result.terminal) BS_SKIP("no pseudo-terminal here (no /dev/ptmx)");
    // Raw: '\n' stays '\n' (no "\r\n"); the child's '\r' is a line end in the text.
    CHECK(result.output == "stdout tty\nstderr tty\nstdin not\n50 123\nTERM=xterm\na\nb\nc\n");
    CHECK(read_file(spec.log_path).value() == result.output);

    SECTION("a TERM the child has is kept") {
        spec.env["TERM"] = "screen";
        CHECK(run_ok(spec).output.find("TERM=screen\n") != std::string::npos);
    }
    SECTION("through a pipe the child sees none") {
        spec.terminal = false;
        auto piped = run_ok(spec);
        CHECK_FALSE(piped.terminal);
        CHECK(piped.output.starts_with("stdin not\nstty: "));
        CHECK(piped.output.ends_with("\nTERM=\na\nb\nc\n"));
    }
}

TEST_CASE("a filter turns the output before the log, the capture and on_output see it, and ends it") {
    TempDir dir("bs-exec");
    auto spec = shell("printf 'one\\ntwo'");
    spec.log_path = dir.path() / "step.log";
    std::string seen;
    spec.on_output = [&](std::string_view chunk) { seen.append(chunk); };
    int ends = 0;
    spec.filter = [&](std::string_view chunk) -> std::string {
        if (chunk.empty()) {
            ++ends;
            return "[end]\n";
        }
        std::string upper(chunk);
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return upper;
    };
    auto result = run_ok(spec);
    CHECK(result.output == "ONE\nTWO[end]\n");
    CHECK(seen == result.output);
    CHECK(read_file(spec.log_path).value() == result.output);
    CHECK(ends == 1);
}

TEST_CASE("output is not kept unless capture is set, and on_output sees every chunk") {
    auto spec = shell("echo hello; echo world >&2");
    spec.capture = false;
    std::string seen;
    int calls = 0;
    spec.on_output = [&](std::string_view chunk) {
        seen.append(chunk);
        ++calls;
    };
    auto result = run_ok(spec);
    CHECK(result.output.empty());
    CHECK(seen == "hello\nworld\n");
    CHECK(calls >= 1);
}

TEST_CASE("secret values a child was given are masked in its log, capture and live output") {
    TempDir dir("bs-exec");
    auto spec =
        shell("echo \"t=$HF_TOKEN\"; printf 'split tok-'; sleep 0.2; printf '12345\\n'; echo $MIRROR; printf tok-1");
    spec.env["HF_TOKEN"] = "tok-12345";
    spec.env["MIRROR"] = "https://u:pw-6789@mirror/simple";
    spec.log_path = dir.path() / "step.log";
    std::string seen;
    spec.on_output = [&](std::string_view chunk) { seen.append(chunk); };
    auto result = run_ok(spec);
    // "tok-1" ends the output while it could still have become the token: masked.
    const std::string expected = "t=***\nsplit ***\nhttps://u:***@mirror/simple\n***";
    CHECK(result.output == expected);
    CHECK(seen == expected);
    CHECK(read_file(spec.log_path).value() == expected);
}

TEST_CASE("a child's escape sequences and controls reach neither the log, the capture nor on_output") {
    // The attacks: OSC 52 (clipboard write), OSC 0 (title), CSI 2J, C1 CSI as UTF-8 and
    // as a byte, an OSC never ended, a bell; on the pipe and on the pseudo-terminal.
    TempDir dir("bs-exec");
    auto spec = shell(
        "printf 'a\\033]52;c;cm0gLXJm\\007b\\033]0;pwned\\033\\\\c\\033[2Jd\\302\\2332Je\\23331mf\\007\\n'; "
        "printf '\\033]0;no end\\nnext\\tline\\r\\n'");
    spec.log_path = dir.path() / "step.log";
    std::string seen;
    spec.on_output = [&](std::string_view chunk) { seen.append(chunk); };
    const std::string expected = "abcdef\n\nnext\tline\n";  // the unended title ends at its line
    SECTION("on the pipe") {
        auto result = run_ok(spec);
        CHECK(result.output == expected);
    }
    SECTION("on the pseudo-terminal, with the transcript's filter") {
        spec.terminal = true;
        spec.filter = [](std::string_view chunk) { return std::string(chunk); };
        auto result = run_ok(spec);
        CHECK(result.output == "abcdef\n\nnext line\r\n");  // '\r' is the transcript's to read
    }
    SECTION("on the pseudo-terminal, without one") {
        spec.terminal = true;
        CHECK(run_ok(spec).output == expected);
    }
    CHECK(seen == read_file(spec.log_path).value());
    CHECK(seen.find_first_of("\x1b\x07") == std::string::npos);
}

TEST_CASE("a secret split by an escape sequence is masked as the user would read it") {
    TempDir dir("bs-exec");
    auto spec = shell("printf 'key sup\\033[0mer-secret-77\\n'");
    spec.env["API_TOKEN"] = "super-secret-77";
    spec.log_path = dir.path() / "step.log";
    std::string seen;
    spec.on_output = [&](std::string_view chunk) { seen.append(chunk); };
    SECTION("on the pipe") {}
    SECTION("on the pseudo-terminal") {
        spec.terminal = true;
        spec.filter = [](std::string_view chunk) { return std::string(chunk); };
    }
    auto result = run_ok(spec);
    CHECK(result.output == "key ***\n");
    CHECK(seen == "key ***\n");
    CHECK(read_file(spec.log_path).value() == "key ***\n");
}

TEST_CASE("large output is read completely") {
    auto result = run_ok(shell("head -c 1000000 /dev/zero | tr '\\0' x; echo end"));
    CHECK(result.ok());
    CHECK(result.output.size() == 1000004);
}

TEST_CASE("the child's environment is exactly spec.env") {
    REQUIRE(::setenv("BS_PARENT_ONLY", "leak", 1) == 0);
    ProcessSpec spec;
    spec.argv = {"/usr/bin/env"};
    spec.env = {{"A", "1"}, {"B", "x y"}, {"EMPTY", ""}};
    spec.capture = true;
    auto result = run_ok(spec);
    ::unsetenv("BS_PARENT_ONLY");
    CHECK(result.ok());
    CHECK(result.output == "A=1\nB=x y\nEMPTY=\n");
}

TEST_CASE("cwd is honoured") {
    TempDir dir("bs-exec");
    ProcessSpec spec;
    spec.argv = {"/bin/pwd"};
    spec.cwd = dir.path();
    spec.capture = true;
    auto result = run_ok(spec);
    CHECK(result.output == std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_CASE("a missing cwd is a start failure naming it") {
    auto spec = shell("true");
    spec.cwd = "/nonexistent/bs-dir";
    auto result = run_process(spec);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::process);
    CHECK(result.error().message.find("/nonexistent/bs-dir") != std::string::npos);
}

TEST_CASE("stdin is /dev/null") {
    auto spec = shell("cat; readlink /proc/self/fd/0");
    spec.timeout = 5000ms;
    auto result = run_ok(spec);
    CHECK_FALSE(result.timed_out);
    CHECK(result.ok());
    CHECK(result.output == "/dev/null\n");
}

TEST_CASE("the child runs in its own process group and inherits no stray fds") {
    int stray = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
    REQUIRE(stray >= 0);
    auto result =
        run_ok(shell("read -r pid comm state ppid pgid rest < /proc/$$/stat; "
                     "echo \"$pid $pgid\"; ls /proc/$$/fd"));
    ::close(stray);
    std::string pid = result.output.substr(0, result.output.find(' '));
    CHECK(result.output == pid + " " + pid + "\n0\n1\n2\n");
    CHECK(pid != std::to_string(::getpgrp()));
}

TEST_CASE("the child leads a session of its own: no controlling terminal to open") {
    // Field 6 of /proc/PID/stat is the session id, field 7 the controlling terminal (0: none).
    auto result =
        run_ok(shell("read -r pid comm state ppid pgid sid tty rest < /proc/$$/stat; "
                     "echo \"$pid $pgid $sid $tty\""));
    std::string pid = result.output.substr(0, result.output.find(' '));
    CHECK(result.output == pid + " " + pid + " " + pid + " 0\n");
    CHECK(pid != std::to_string(::getsid(0)));
}

TEST_CASE("a registered descriptor reaches every child at 3, 4, ... and outlives us there") {
    // Two pipes whose write ends are registered: the child writes to each at its place.
    int a[2], b[2];
    REQUIRE(::pipe2(a, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(b, O_CLOEXEC) == 0);
    std::vector<std::pair<long, bool>> seen;
    {
        bootstrap::exec::InheritedFd first(a[1], [&](long pid, bool started) { seen.emplace_back(pid, started); });
        bootstrap::exec::InheritedFd second(b[1]);
        auto result = run_ok(shell("echo one >&3; echo two >&4; echo $$; ls /proc/$$/fd"));
        std::string pid = result.output.substr(0, result.output.find('\n'));
        CHECK(result.output == pid + "\n0\n1\n2\n3\n4\n");
        REQUIRE(seen.size() == 2);
        CHECK(seen[0] == std::pair<long, bool>{std::stol(pid), true});
        CHECK(seen[1] == std::pair<long, bool>{std::stol(pid), false});
        char buf[16] = {};
        CHECK(::read(a[0], buf, sizeof buf) == 4);
        CHECK(std::string(buf) == "one\n");
        char buf2[16] = {};
        CHECK(::read(b[0], buf2, sizeof buf2) == 4);
        CHECK(std::string(buf2) == "two\n");
    }
    // Unregistered: back to stdio only.
    auto result = run_ok(shell("ls /proc/$$/fd"));
    CHECK(result.output == "0\n1\n2\n");
    CHECK(seen.size() == 2);
    for (int fd : {a[0], a[1], b[0], b[1]}) ::close(fd);
}

TEST_CASE("the child does not inherit ignored signal dispositions") {
    auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
    auto old_int = std::signal(SIGINT, SIG_IGN);
    auto result = run_ok(shell("grep SigIgn /proc/$$/status"));
    std::signal(SIGPIPE, old_pipe);
    std::signal(SIGINT, old_int);
    REQUIRE(bootstrap::core::starts_with(result.output, "SigIgn:\t"));
    auto ignored = std::stoull(result.output.substr(8), nullptr, 16);
    // Only the classic signals 1..31: glibc's posix_spawn ignores its internal RT signals.
    CHECK((ignored & 0x7fffffffULL) == 0);
    CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
}

TEST_CASE("a timeout kills the child and its grandchildren") {
    TempDir dir("bs-exec");
    auto pid_file = dir.path() / "grandchild.pid";
    auto spec = shell("sleep 30 & echo $! > '" + pid_file.string() + "'; sleep 30");
    spec.timeout = 300ms;
    spec.kill_grace = 2000ms;
    auto result = run_ok(spec);
    CHECK(result.timed_out);
    CHECK_FALSE(result.ok());
    CHECK(result.signal == SIGTERM);
    CHECK(result.seconds < 15.0);  // ~0.3 s; generous for a loaded machine, well under sleep 30
    CHECK(result.describe() == "timed out after 0.3s (killed)");
    CHECK(process_gone(read_pid(pid_file)));
}

TEST_CASE("a child ignoring SIGTERM gets SIGKILL after kill_grace") {
    auto spec = shell("trap '' TERM; sleep 30");
    spec.timeout = 200ms;
    spec.kill_grace = 300ms;
    auto result = run_ok(spec);
    CHECK(result.timed_out);
    CHECK(result.signal == SIGKILL);
    CHECK(result.seconds >= 0.45);
    CHECK(result.seconds < 15.0);  // ~0.5 s; without the SIGKILL it would be 30 s
}

TEST_CASE("an interrupt kills the child and is reported") {
    TempDir dir("bs-exec");
    auto pid_file = dir.path() / "grandchild.pid";
    // Sleeps short enough that a broken interrupt path fails in 20 s rather than hanging, long
    // enough that the bound below leaves room for a loaded machine.
    auto spec = shell("sleep 20 & echo $! > '" + pid_file.string() + "'; sleep 20");
    std::thread interrupter([] {
        std::this_thread::sleep_for(200ms);
        bootstrap::core::set_interrupt_signal(SIGINT);
    });
    auto result = run_process(spec);
    interrupter.join();
    bootstrap::core::set_interrupt_signal(0);
    REQUIRE(result);
    CHECK(result->interrupted);
    CHECK(result->interrupt_signal == SIGINT);
    CHECK_FALSE(result->timed_out);
    CHECK_FALSE(result->ok());
    CHECK(result->seconds < 10.0);  // ~0.2 s
    CHECK(result->describe() == "interrupted by SIGINT");
    CHECK(process_gone(read_pid(pid_file)));
}

TEST_CASE("nothing is started while an interrupt is pending") {
    TempDir dir("bs-exec");
    auto marker = dir.path() / "ran";
    bootstrap::core::set_interrupt_signal(SIGTERM);
    auto result = run_process(shell("touch '" + marker.string() + "'"));
    bootstrap::core::set_interrupt_signal(0);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::interrupted);
    CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("a background grandchild holding the pipe does not hang the run") {
    TempDir dir("bs-exec");
    auto pid_file = dir.path() / "grandchild.pid";
    auto spec = shell("sleep 30 & echo $! > '" + pid_file.string() + "'; echo started; exit 4");
    spec.orphan_grace = 300ms;
    auto result = run_ok(spec);
    CHECK(result.exit_code == 4);
    CHECK_FALSE(result.timed_out);
    CHECK(result.output == "started\n");
    CHECK(result.seconds < 15.0);  // ~0.3 s (orphan_grace); waiting for the pipe would be 30 s
    CHECK(process_gone(read_pid(pid_file)));
}

TEST_CASE("argv[0] is looked up on the child's PATH, not the parent's") {
    SECTION("not found names the program and the PATH searched") {
        ProcessSpec spec;
        spec.argv = {"bs-no-such-program"};
        spec.env = {{"PATH", "/usr/bin:/bin"}};
        auto result = run_process(spec);
        REQUIRE_FALSE(result);
        CHECK(result.error().code == ErrorCode::not_found);
        CHECK(result.error().message == "cannot run 'bs-no-such-program': not found on PATH (/usr/bin:/bin)");
    }
    SECTION("the parent's PATH is not used") {
        ProcessSpec spec;
        spec.argv = {"sh", "-c", "true"};
        spec.env = {{"PATH", "/nonexistent"}};
        auto result = run_process(spec);
        REQUIRE_FALSE(result);
        CHECK(result.error().code == ErrorCode::not_found);
    }
    SECTION("found on the child's PATH") {
        ProcessSpec spec;
        spec.argv = {"sh", "-c", "exit 7"};
        spec.env = {{"PATH", "/nonexistent:/bin"}};
        auto result = run_process(spec);
        REQUIRE(result);
        CHECK(result->exit_code == 7);
    }
}

TEST_CASE("a program that cannot be executed is a process error naming it") {
    TempDir dir("bs-exec");
    auto script = dir.path() / "not-executable";
    REQUIRE(bootstrap::core::write_file_atomic(script, "#!/bin/sh\nexit 0\n"));
    ::chmod(script.c_str(), 0644);
    ProcessSpec spec;
    spec.argv = {script.string()};
    auto result = run_process(spec);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::process);
    CHECK(result.error().message.find(script.string()) != std::string::npos);
    CHECK(result.error().message.find("Permission denied") != std::string::npos);
}

TEST_CASE("find_program returns the first executable regular file") {
    TempDir dir("bs-exec");
    auto a = dir.path() / "a";
    auto b = dir.path() / "b";
    std::filesystem::create_directories(a / "tool");  // a directory named like the program
    REQUIRE(bootstrap::core::write_file_atomic(b / "tool", "x"));
    ::chmod((b / "tool").c_str(), 0644);  // not executable
    std::string path = ":" + a.string() + ":" + b.string() + ":/bin";
    CHECK(find_program("tool", path).empty());
    ::chmod((b / "tool").c_str(), 0755);
    CHECK(find_program("tool", path) == b / "tool");
    CHECK(find_program("sh", path) == "/bin/sh");
    CHECK(find_program("sh", "").empty());
    CHECK(find_program("/bin/sh", "").string() == "/bin/sh");
}

TEST_CASE("find_program searches the PATH of the environment it is given") {
    TempDir dir("bs-exec");
    REQUIRE(bootstrap::core::write_file_atomic(dir.path() / "tool", "x"));
    ::chmod((dir.path() / "tool").c_str(), 0755);
    const bootstrap::exec::EnvMap env{{"PATH", dir.path().string() + ":/bin"}, {"HOME", "/"}};
    CHECK(find_program("tool", env) == dir.path() / "tool");
    CHECK(find_program("sh", env) == "/bin/sh");
    CHECK(find_program("tool", bootstrap::exec::EnvMap{{"HOME", "/"}}).empty());  // no PATH
    CHECK(find_program("/bin/sh", bootstrap::exec::EnvMap{}) == "/bin/sh");
}

TEST_CASE("describe: timeout and interrupt take precedence over the raw status") {
    ProcessResult r;
    r.exit_code = 0;
    CHECK(r.describe() == "exit code 0");
    r.signal = SIGTERM;
    CHECK(r.describe() == "killed by signal 15 (SIGTERM)");
    r.timed_out = true;
    r.timeout_seconds = 5;
    CHECK(r.describe() == "timed out after 5s (killed)");
    r.timed_out = false;
    r.interrupted = true;
    CHECK(r.describe() == "interrupted");
    r.interrupt_signal = SIGINT;
    CHECK(r.describe() == "interrupted by SIGINT");
}
