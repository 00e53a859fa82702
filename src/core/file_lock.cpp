#include "core/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

namespace {
long read_pid(int fd) {
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    return n > 0 ? parse_leading_int<long>(trim(buf)).value_or(0) : 0;
}
}  // namespace

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, double timeout_s, std::string_view what,
                                   const std::function<void(long)>& on_wait) {
    BS_CHECK(core::create_directories(path.parent_path()));
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(ErrorCode::io, fmt::format("cannot open lock file {}: {}", path.string(), std::strerror(errno)));
    const auto start = std::chrono::steady_clock::now();
    bool told = false;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int err = errno;
            ::close(fd);
            return fail(ErrorCode::io, fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
        }
        long pid = read_pid(fd);
        if (!told && on_wait) {
            on_wait(pid);
            told = true;
        }
        double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (interrupt_signal() != 0) {
            ::close(fd);
            return fail(ErrorCode::interrupted, fmt::format("interrupted while waiting for the lock on {}", what));
        }
        if (waited >= timeout_s) {
            ::close(fd);
            return fail(ErrorCode::lock_timeout,
                        fmt::format("{} is locked by another bootstrap process (pid {}); gave up after {:.0f}s",
                                    what, pid, timeout_s),
                        fmt::format("lock file: {}", path.string()));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The lock itself holds; only the pid shown to a waiter is missing.
    }
    return FileLock(fd);
}

FileLock::~FileLock() {
    if (m_fd >= 0) ::close(m_fd);  // closing releases the flock
}

}  // namespace bootstrap::core
