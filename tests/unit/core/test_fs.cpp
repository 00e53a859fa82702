#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "core/sha256.hpp"

#include <sys/stat.h>
#include <unistd.h>

using namespace bootstrap::core;

TEST_CASE("write_file_atomic writes and leaves no temporaries") {
    TempDir dir("bs-test");
    auto p = dir.path() / "sub" / "f.json";
    REQUIRE(write_file_atomic(p, "hello"));
    CHECK(read_file(p).value() == "hello");
    REQUIRE(write_file_atomic(p, "again"));
    CHECK(read_file(p).value() == "again");
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(p.parent_path())) ++entries;
    CHECK(entries == 1);
}

TEST_CASE("read_file names the missing path") {
    auto r = read_file("/nonexistent/x");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::not_found);
    CHECK(r.error().message.find("/nonexistent/x") != std::string::npos);
}

TEST_CASE("read_file_tail reads only the end of a file, from an offset") {
    TempDir dir("bs-test");
    auto p = dir.path() / "step.log";
    REQUIRE(write_file_atomic(p, "0123456789"));
    CHECK(read_file_tail(p, 0, 4).value() == "6789");       // the last 4 bytes only
    CHECK(read_file_tail(p, 3, 100).value() == "3456789");  // from the offset
    CHECK(read_file_tail(p, 8, 4).value() == "89");         // the later of the two
    CHECK(read_file_tail(p, 20, 4).value().empty());        // past the end
    CHECK(read_file_tail(dir.path() / "none", 0, 4).error().code == bootstrap::ErrorCode::not_found);
    CHECK_FALSE(read_file_tail(dir.path(), 0, 4));  // a directory
}

TEST_CASE("sha256 of a known string") {
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

namespace {

// A pid that no process has: a child that has exited and been reaped.
long dead_pid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

}  // namespace

TEST_CASE("temporary names carry the writer's pid") {
    CHECK(temp_name_pid("journal.json.tmp-4242-aB3dEf") == 4242);
    CHECK(temp_name_pid(".pkg.tmp-77") == 77);
    CHECK(temp_name_pid(".x.so.tmp-12.log") == 12);
    CHECK(temp_name_pid("journal.json") == 0);
    CHECK(temp_name_pid("journal.json.tmp-") == 0);
    CHECK(temp_name_pid("notes.tmp-abc") == 0);
    CHECK(temp_name_pid("a.tmp-12x") == 0);
    CHECK(pid_after(".src-abc-123", ".src-abc-") == 123);
    CHECK(pid_after("..src-abc-123.tmp-123", "..src-abc-") == 123);
    CHECK(pid_after(".src-abd-123", ".src-abc-") == 0);
    CHECK(pid_after(".src-abc-", ".src-abc-") == 0);
}

TEST_CASE("process_alive: ourselves yes, a reaped child no") {
    CHECK(process_alive(::getpid()));
    CHECK(process_alive(1));  // init: another user's process still counts (EPERM)
    CHECK_FALSE(process_alive(dead_pid()));
    CHECK_FALSE(process_alive(0));
    CHECK_FALSE(process_alive(-5));
}

TEST_CASE("remove_dead_leftovers removes a dead writer's temporaries, never a live one's") {
    TempDir dir("bs-test");
    long dead = dead_pid();
    long live = ::getppid();  // alive while this test runs
    auto dead_file = dir.path() / fmt::format("journal.json.tmp-{}-AbCdEf", dead);
    auto dead_dir = dir.path() / fmt::format(".pkg.tmp-{}", dead);
    auto live_file = dir.path() / fmt::format("journal.json.tmp-{}-AbCdEf", live);
    auto own_file = dir.path() / fmt::format("journal.json.tmp-{}-AbCdEf", ::getpid());
    auto plain = dir.path() / "journal.json";
    for (const auto& p : {dead_file, live_file, own_file, plain}) REQUIRE(write_file_atomic(p, "x"));
    REQUIRE(write_file_atomic(dead_dir / "sub" / "f", "x"));

    auto removed = remove_dead_leftovers(dir.path(), temp_name_pid);
    std::sort(removed.begin(), removed.end());
    std::vector<fs::path> expected{dead_file, dead_dir};
    std::sort(expected.begin(), expected.end());
    CHECK(removed == expected);
    CHECK_FALSE(fs::exists(dead_file));
    CHECK_FALSE(fs::exists(dead_dir));
    CHECK(fs::exists(live_file));
    CHECK(fs::exists(own_file));
    CHECK(fs::exists(plain));
    CHECK(remove_dead_leftovers(dir.path() / "missing", temp_name_pid).empty());
}

TEST_CASE("a writer killed mid-write leaves a temporary that names it, and it is removed") {
    TempDir dir("bs-test");
    auto target = dir.path() / "journal.json";
    pid_t child = ::fork();
    if (child == 0) {
        // The file-size limit kills the child (SIGXFSZ) inside write_file_atomic's write.
        rlimit one{1, 1}, no_core{0, 0};
        ::setrlimit(RLIMIT_FSIZE, &one);
        ::setrlimit(RLIMIT_CORE, &no_core);
        (void)write_file_atomic(target, std::string(4096, 'x'));
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    std::vector<fs::path> left;
    for (auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path());
    REQUIRE(left.size() == 1);
    CHECK(temp_name_pid(left[0].filename().string()) == child);
    CHECK(left[0].filename().string().starts_with(fmt::format("journal.json.tmp-{}-", child)));
    CHECK(remove_dead_leftovers(dir.path(), temp_name_pid) == left);
    CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("sizes are read as a recipe writes them and shown in binary units") {
    CHECK(parse_size("1048576") == 1048576u);
    CHECK(parse_size("2GiB") == 2ull << 30);
    CHECK(parse_size("2 gib") == 2ull << 30);
    CHECK(parse_size("1.5MiB") == 1572864u);
    CHECK(parse_size("500k") == 500000u);
    CHECK(parse_size("3 MB") == 3000000u);
    CHECK(parse_size("64B") == 64u);
    CHECK(parse_size("18446744073709551615") == UINT64_MAX);
    CHECK_FALSE(parse_size(""));
    CHECK_FALSE(parse_size("GiB"));
    CHECK_FALSE(parse_size("-1"));
    CHECK_FALSE(parse_size(" 5"));
    CHECK_FALSE(parse_size("5 parsecs"));
    CHECK_FALSE(parse_size("1.2.3 MB"));
    CHECK_FALSE(parse_size("18446744073709551616"));
    CHECK_FALSE(parse_size("20000000TiB"));
    CHECK(format_size(0) == "0 B");
    CHECK(format_size(1023) == "1023 B");
    CHECK(format_size(1536) == "1.5 KiB");
    CHECK(format_size(4ull << 30) == "4 GiB");
}

TEST_CASE("read_regular_file refuses FIFOs, devices, directories and large files at once") {
    TempDir dir("bs-test");
    auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    auto r = read_regular_file(fifo, 1024);  // no writer: a plain open would block forever
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::io);
    CHECK(r.error().message == "cannot read " + fifo.string() + ": not a regular file (a FIFO)");

    auto zero = dir.path() / "zero";
    fs::create_symlink("/dev/zero", zero);
    r = read_regular_file(zero, 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "cannot read " + zero.string() + ": not a regular file (a character device)");

    r = read_regular_file(dir.path(), 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not a regular file (a directory)") != std::string::npos);

    auto big = dir.path() / "big";
    REQUIRE(write_file_atomic(big, std::string(2048, 'x')));
    r = read_regular_file(big, 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "cannot read " + big.string() + ": larger than 1 KiB (2 KiB)");
    CHECK(read_regular_file(big, 2048).value() == std::string(2048, 'x'));

    r = read_regular_file(dir.path() / "missing", 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::not_found);
}

TEST_CASE("format_size") {
    CHECK(format_size(900) == "900 B");
    CHECK(format_size(64ull << 20) == "64 MiB");
    CHECK(format_size(70ull << 20) == "70 MiB");
    CHECK(format_size((3ull << 20) / 2) == "1.5 MiB");
    CHECK(format_size(3ull << 30) == "3 GiB");
}

TEST_CASE("write_file_exclusive never replaces a file") {
    TempDir dir("bs-test");
    auto p = dir.path() / "sub" / "entry.json";
    bool exists = true;
    REQUIRE(write_file_exclusive(p, "first", &exists));
    CHECK_FALSE(exists);
    auto again = write_file_exclusive(p, "second", &exists);
    REQUIRE_FALSE(again);
    CHECK(exists);
    CHECK(again.error().message == "cannot create " + p.string() + ": it already exists");
    CHECK(read_file(p).value() == "first");
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(p.parent_path())) ++entries;
    CHECK(entries == 1);  // no temporaries left behind
}

TEST_CASE("a lock file names its holder, or the child that outlived it") {
    const long self = ::getpid();
    auto h = parse_lock_holder(std::to_string(self) + "\n");
    CHECK(h.pid == self);
    CHECK(h.pid_alive);
    CHECK(h.current() == self);

    // A dead owner (pid numbers are never this high) with a live and a dead child.
    h = parse_lock_holder("2147483000\nchild 2147483001\nchild " + std::to_string(self) + "\n");
    CHECK(h.pid == 2147483000);
    CHECK_FALSE(h.pid_alive);
    CHECK(h.live_children == std::vector<long>{self});
    CHECK(h.current() == self);

    h = parse_lock_holder("2147483000\nchild 2147483001\n");
    CHECK(h.live_children.empty());
    CHECK(h.current() == 2147483000);
    // A holder on another machine (a shared filesystem): its pids cannot be checked here, so
    // they count as running, and the description names the host.
    h = parse_lock_holder("2147483000\nhost other-node-7\nchild 2147483001\n");
    CHECK(h.host == "other-node-7");
    CHECK(h.pid_alive);
    CHECK(h.live_children == std::vector<long>{2147483001});
    CHECK(h.describe() == "pid 2147483000 on other-node-7");
    h = parse_lock_holder("2147483000\nhost " + this_host() + "\n");
    CHECK_FALSE(h.pid_alive);
    CHECK(h.describe() == "pid 2147483000");
    CHECK(parse_lock_holder("").pid == 0);
    CHECK(parse_lock_holder("garbage\nchild x\n").pid == 0);
}

TEST_CASE("a lock stays held by a child that inherited its descriptor") {
    TempDir dir("bs-test");
    auto path = dir.path() / "lock";
    auto lock = FileLock::acquire(path, 1, "test");
    REQUIRE(lock);
    FileLock::record_children(lock->fd(), {4242});
    CHECK(read_file(path).value() == std::to_string(::getpid()) + "\nhost " + this_host() + "\nchild 4242\n");
    auto second = FileLock::acquire(path, 0.1, "the test lock");
    REQUIRE_FALSE(second);
    CHECK(second.error().code == bootstrap::ErrorCode::lock_timeout);
}

TEST_CASE("append_log_line appends whole lines, creating the directory") {
    TempDir dir("bs-log");
    const auto log = dir.path() / "logs" / "step.log";
    append_log_line(log, "first");
    append_log_line(log, "second line");
    CHECK(read_file(log).value() == "first\nsecond line\n");
    append_log_line({}, "nowhere");                       // no log: nothing happens
    append_log_line(dir.path() / "logs", "a directory");  // unwritable: best effort, no throw
    CHECK(read_file(log).value() == "first\nsecond line\n");
}

TEST_CASE("kernel filesystems are told apart from data, and never read as a file", "[fs]") {
    CHECK(bootstrap::core::kernel_filesystem("/proc/self/status") == std::optional<std::string>("proc"));
    CHECK(bootstrap::core::kernel_filesystem("/sys") == std::optional<std::string>("sysfs"));
    bootstrap::core::TempDir dir("bs-kernel-fs");
    CHECK_FALSE(bootstrap::core::kernel_filesystem(dir.path()));
    CHECK(bootstrap::core::reaches_kernel_tree("/") == std::optional<std::filesystem::path>("/proc"));
    CHECK(bootstrap::core::reaches_kernel_tree("/dev/shm") == std::optional<std::filesystem::path>("/dev"));
    CHECK(bootstrap::core::reaches_kernel_tree("/sys/class/..") == std::optional<std::filesystem::path>("/sys"));
    CHECK_FALSE(bootstrap::core::reaches_kernel_tree(dir.path()));
    auto read = bootstrap::core::read_regular_file("/proc/self/status", 1 << 20);
    REQUIRE_FALSE(read);
    CHECK(read.error().message.find("kernel's proc filesystem") != std::string::npos);
}
