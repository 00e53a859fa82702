#pragma once
// One mutating run per venv: a core::FileLock on `<venv>/.bootstrap/lock`, holding the owner's
// pid. The kernel drops the lock when the holder dies, so a crashed run never wedges the venv.

#include <filesystem>
#include <functional>

#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace bootstrap::engine {

class VenvLock {
public:
    /// Wait up to `timeout_s` seconds (polling, interruptible) for the lock. The lock_timeout
    /// error names the holder's pid; `on_wait` is called once if we have to wait.
    [[nodiscard]] static Result<VenvLock> acquire(const std::filesystem::path& venv, double timeout_s,
                                                  const std::function<void(long pid)>& on_wait = {});

private:
    explicit VenvLock(core::FileLock lock) : m_lock(std::move(lock)) {}
    core::FileLock m_lock;
};

}  // namespace bootstrap::engine
