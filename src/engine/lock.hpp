#pragma once
// One mutating run per venv: a core::FileLock on `<venv>/.bootstrap/lock`, holding the owner's
// pid. The kernel drops the lock when the holder dies, so a crashed run never wedges the venv;
// what it was writing (`journal.json.tmp-<pid>-*`, ...) is removed by the next holder.

#include <filesystem>
#include <functional>
#include <vector>

#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace bootstrap::engine {

class VenvLock {
public:
    /// Wait up to `timeout_s` seconds (polling, interruptible) for the lock. The lock_timeout
    /// error names the holder's pid; `on_wait` is called once if we have to wait. Once held, the
    /// temporaries of dead processes in `.bootstrap/`, `.bootstrap/history/` and
    /// `.bootstrap/locked/` are removed (never a live process's).
    [[nodiscard]] static Result<VenvLock> acquire(const std::filesystem::path& venv, double timeout_s,
                                                  const std::function<void(long pid)>& on_wait = {});

    /// What acquire() removed.
    [[nodiscard]] const std::vector<std::filesystem::path>& removed_leftovers() const {
        return m_removed;
    }

private:
    explicit VenvLock(core::FileLock lock) : m_lock(std::move(lock)) {}
    core::FileLock m_lock;
    std::vector<std::filesystem::path> m_removed;
};

}  // namespace bootstrap::engine
