#pragma once
// An exclusive flock on a file that holds the owner's pid: the kernel drops it when the holder
// dies, so a crashed process never wedges anyone. Used for the venv lock and for build-cache keys.

#include <filesystem>
#include <functional>

#include "core/error.hpp"

namespace bootstrap::core {

class FileLock {
public:
    /// Wait up to `timeout_s` seconds (polling, interruptible) for the lock on `path` (created,
    /// with its parent directories). `on_wait` is called once, with the holder's pid, if we have
    /// to wait. Errors: lock_timeout (message names `what` and the holder's pid; detail the
    /// file), interrupted, io.
    [[nodiscard]] static Result<FileLock> acquire(const std::filesystem::path& path, double timeout_s,
                                                  std::string_view what,
                                                  const std::function<void(long pid)>& on_wait = {});
    FileLock(FileLock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
    FileLock& operator=(FileLock&&) = delete;
    FileLock(const FileLock&) = delete;
    ~FileLock();

private:
    explicit FileLock(int fd) : m_fd(fd) {}
    int m_fd = -1;
};

}  // namespace bootstrap::core
