#include "core/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

namespace {

std::string read_content(int fd) {
    char buf[4096];
    ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

/// The whole content: pid, then child lines (short: one line per running child).
bool write_content(int fd, const std::string& text) {
    return ::ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

}  // namespace

void share_with_group(int fd, const std::filesystem::path& dir) {
    struct stat parent {};
    struct stat st {};
    if (::stat(dir.c_str(), &parent) != 0 || (parent.st_mode & S_ISGID) == 0) return;
    if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) return;
    const mode_t want = (st.st_mode & 07777) | S_IRGRP | S_IWGRP | (S_ISDIR(st.st_mode) ? S_IXGRP : 0);
    if (want != (st.st_mode & 07777)) (void)::fchmod(fd, want);
}

long LockHolder::current() const {
    if (pid_alive || live_children.empty()) return pid;
    return live_children.front();
}

const std::string& this_host() {
    static const std::string host = [] {
        char name[256] = {};
        if (::gethostname(name, sizeof name - 1) != 0) return std::string();
        return std::string(name);
    }();
    return host;
}

std::string LockHolder::describe() const {
    if (host.empty() || host == this_host()) return fmt::format("pid {}", current());
    return fmt::format("pid {} on {}", current(), host);
}

LockHolder parse_lock_holder(std::string_view content) {
    LockHolder h;
    bool first = true;
    std::vector<long> children;
    for (const auto& raw : split(content, '\n')) {
        std::string_view line = trim(raw);
        if (line.empty()) continue;
        if (consume_prefix(line, "host ")) {
            if (line.size() <= 255 && line.find_first_of(" \t\r") == std::string_view::npos) h.host = std::string(line);
            continue;
        }
        const bool child = consume_prefix(line, "child ");
        const long pid = parse_int<long>(line).value_or(0);
        if (pid <= 0) continue;
        if (child) {
            children.push_back(pid);
        } else if (first) {
            h.pid = pid;
            first = false;
        }
    }
    // Another machine's pids cannot be looked up here: they count as running.
    const bool local = h.host.empty() || h.host == this_host();
    h.pid_alive = h.pid > 0 && (!local || process_alive(h.pid));
    for (long pid : children)
        if (!local || process_alive(pid)) h.live_children.push_back(pid);
    return h;
}

namespace {

/// What a lock file says about its holder.
std::string holder_text(const std::vector<long>& children) {
    std::string text = std::to_string(::getpid()) + "\nhost " + this_host() + "\n";
    for (long pid : children) text += "child " + std::to_string(pid) + "\n";
    return text;
}

}  // namespace

LockHolder read_lock_holder(const std::filesystem::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) return {};
    return parse_lock_holder(read_content(fd.get()));
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, double timeout_s, std::string_view what,
                                   const std::function<void(long)>& on_wait) {
    BS_CHECK(core::create_directories(path.parent_path()));
    // Mode 0666 less the umask, plus group write in a setgid directory (a cache a group
    // shares): another user must be able to take the lock too. A lock file we may not write
    // (another user's, with umask 022) is locked read-only: flock needs no write access, and
    // only the holder's pid shown to waiters is missing.
    Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
    if (fd) {
        share_with_group(fd.get(), path.parent_path());
    } else if (errno == EACCES) {
        fd = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    }
    if (!fd)
        return fail(ErrorCode::io, fmt::format("cannot open lock file {}: {}", path.string(), std::strerror(errno)),
                    "the directory must be writable by every user of the cache: make it group-writable and "
                    "setgid (chmod 2775) and use umask 002");
    const auto start = std::chrono::steady_clock::now();
    bool told = false;
    // flock(2): on Linux's NFS client it is carried out as a POSIX byte-range lock that the
    // server arbitrates between machines (NFSv4 leases release a dead client's locks), and
    // Lustre arbitrates it across nodes when mounted with `-o flock`.
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == ENOLCK || errno == ENOSYS || errno == EOPNOTSUPP)
            return fail(ErrorCode::io,
                        fmt::format("cannot lock {}: {}; this filesystem offers no locks between processes "
                                    "(NFS mounted with nolock, Lustre without -o flock): put $BOOTSTRAP_HOME "
                                    "and venvs on one that does",
                                    path.string(), std::strerror(errno)));
        if (errno != EWOULDBLOCK && errno != EINTR)
            return fail(ErrorCode::io, fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
        // Held only by readers (try_shared: a run finding nothing to do): they let go within
        // milliseconds, and the file names none of them.
        const bool readers_only = ::flock(fd.get(), LOCK_SH | LOCK_NB) == 0;
        if (readers_only) ::flock(fd.get(), LOCK_UN);
        const LockHolder holder = parse_lock_holder(read_content(fd.get()));
        long pid = holder.current();
        if (!told && on_wait && !readers_only) {
            on_wait(pid);
            told = true;
        }
        double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("interrupted while waiting for the lock on {}", what));
        if (waited >= timeout_s)
            return fail(ErrorCode::lock_timeout,
                        fmt::format("{} is locked by another bootstrap process ({}); gave up after {:.0f}s", what,
                                    holder.describe(), timeout_s),
                        fmt::format("lock file: {}", path.string()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // The lock itself holds even when this fails; only the pid shown to a waiter is missing.
    (void)write_content(fd.get(), holder_text({}));
    return FileLock(std::move(fd));
}

Result<std::optional<FileLock>> FileLock::try_shared(const std::filesystem::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        if (errno == ENOENT || errno == ENOTDIR) return std::optional<FileLock>();
        return fail(ErrorCode::io, fmt::format("cannot open lock file {}: {}", path.string(), std::strerror(errno)));
    }
    if (::flock(fd.get(), LOCK_SH | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK || errno == EINTR || errno == ENOLCK || errno == ENOSYS || errno == EOPNOTSUPP)
            return std::optional<FileLock>();  // held, or no locks here: the exclusive path says why
        return fail(ErrorCode::io, fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
    }
    return std::optional<FileLock>(FileLock(std::move(fd)));
}

void FileLock::record_children(int fd, const std::vector<long>& children) {
    if (fd < 0) return;
    (void)write_content(fd, holder_text(children));
}

}  // namespace bootstrap::core
