#pragma once
// An exclusive flock on a file that holds the owner's pid: the kernel drops it when the holder
// dies, so a crashed process never wedges anyone. Used for the venv lock and for build-cache keys.
//
// The flock belongs to the open file, not to a process: a child that inherits the descriptor
// holds the lock as long as it runs, even after the owner died (the venv lock is passed on so
// on purpose, state/venv_lock.hpp). The file then also lists those children, one `child PID` line
// each, so a waiter can name the process it waits for.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/fd.hpp"

namespace bootstrap::core {

/// Who holds a lock, as its file says. On a shared filesystem ($BOOTSTRAP_HOME on NFS or
/// Lustre for a fleet) the holder may run on another machine: the file names its host, and a
/// pid of another host is never taken for dead (only the lock itself says so).
struct LockHolder {
    long pid = 0;            // the process that took it; 0 when the file says nothing
    std::string host;        // the machine it runs on ("" in files from before hosts)
    bool pid_alive = false;  // true for another host's pid
    /// "pid 12" on this host, "pid 12 on n7" on another.
    [[nodiscard]] std::string describe() const;
    std::vector<long> live_children;  // recorded children that still run
    /// The process to name: the owner while it runs, else its first live child, else the owner.
    [[nodiscard]] long current() const;
};

/// Read the holder from a lock file's content (see the header comment).
[[nodiscard]] LockHolder parse_lock_holder(std::string_view content);

/// This machine's name (gethostname), as lock files record it.
[[nodiscard]] const std::string& this_host();

/// read a lock file and parse_lock_holder it (an unreadable file says nothing: pid 0).
[[nodiscard]] LockHolder read_lock_holder(const std::filesystem::path& path);

/// In a setgid directory (a cache a group shares, README "Many nodes"), give the group read
/// and write on the file or directory open as `fd` if we own it, whatever the umask.
void share_with_group(int fd, const std::filesystem::path& dir);

class FileLock {
public:
    /// Wait up to `timeout_s` seconds (polling, interruptible) for the lock on `path` (created,
    /// with its parent directories). `on_wait` is called once, with the holder's pid
    /// (LockHolder::current), if we have to wait. Errors: lock_timeout (message names `what`
    /// and the holder's pid; detail the file), interrupted, io.
    [[nodiscard]] static Result<FileLock> acquire(const std::filesystem::path& path, double timeout_s,
                                                  std::string_view what,
                                                  const std::function<void(long pid)>& on_wait = {});
    /// A shared flock on an existing `path`, without waiting and without writing: for a reader
    /// that only looks (a run that finds nothing to do). nullopt when the file does not exist
    /// or a writer holds the lock; then take the exclusive lock instead.
    [[nodiscard]] static Result<std::optional<FileLock>> try_shared(const std::filesystem::path& path);

    FileLock(FileLock&& other) noexcept = default;
    FileLock& operator=(FileLock&&) = delete;
    FileLock(const FileLock&) = delete;
    ~FileLock() = default;  // closing the descriptor releases the flock

    /// The descriptor that holds the flock (for passing it on to children).
    [[nodiscard]] int fd() const { return m_fd.get(); }

    /// Rewrite the lock file open as `fd` as our pid plus a `child PID` line per pid in
    /// `children` (best effort: the lock holds regardless).
    static void record_children(int fd, const std::vector<long>& children);

private:
    explicit FileLock(Fd fd) : m_fd(std::move(fd)) {}
    Fd m_fd;
};

}  // namespace bootstrap::core
