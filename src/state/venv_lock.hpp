#pragma once
// One mutating run per venv: a core::FileLock on `<venv>/.bootstrap/lock`, holding the owner's
// pid. The kernel drops the lock when the last holder of the open file goes away, so a crashed
// run never wedges the venv; what it was writing (`journal.json.tmp-<pid>-*`, ...) is removed
// by the next holder.
//
// Every child started while the lock is held (installers, run steps, probes) inherits the
// locked descriptor: if bootstrap is killed (SIGKILL, an OOM kill) while uv still installs, the
// orphaned uv keeps the venv locked until it exits, and the next run waits for it instead of
// installing beside it. The lock file lists those children (`child PID` lines), so a waiter
// names the orphan rather than the dead run.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file_lock.hpp"
#include "exec/process.hpp"

namespace bootstrap::state {

class VenvLock {
public:
    /// Wait up to `timeout_s` seconds (polling, interruptible) for the lock. `on_wait` is called
    /// once if we have to wait, with the holder's pid: the run's, or once that run is gone, the
    /// child of it that still holds the lock. The lock_timeout error says which. Once held, the
    /// temporaries of dead processes in `.bootstrap/`, `.bootstrap/history/` and
    /// `.bootstrap/locked/` are removed (never a live process's).
    [[nodiscard]] static Result<VenvLock> acquire(const std::filesystem::path& venv, double timeout_s,
                                                  const std::function<void(long pid)>& on_wait = {});

    /// A shared lock on the venv's lock file, taken without waiting and without writing: a run
    /// that only confirms every step holds (engine/runner.cpp) leaves the venv untouched, its
    /// lock file's mtime included. nullopt when there is no lock file yet or a run holds it.
    [[nodiscard]] static Result<std::optional<core::FileLock>> try_read(const std::filesystem::path& venv);

    /// What a run says while it waits: "waiting for the venv lock held by pid 12 (up to 600s)"; a
    /// holder that has not written its pid yet (0) is "another bootstrap process".
    [[nodiscard]] static std::string waiting_message(long pid, double timeout_s);

    /// "another bootstrap run (pid 12)", or "pid 34, a child that bootstrap run pid 12 started
    /// and that outlived it (it inherited the lock)", or "a process that inherited it from
    /// bootstrap run pid 12, which has exited".
    [[nodiscard]] static std::string describe_holder(const core::LockHolder& holder);

    /// What acquire() removed.
    [[nodiscard]] const std::vector<std::filesystem::path>& removed_leftovers() const { return m_removed; }

private:
    struct Children;
    VenvLock(core::FileLock lock, std::shared_ptr<Children> children);
    core::FileLock m_lock;
    std::shared_ptr<Children> m_children;
    std::unique_ptr<exec::InheritedFd> m_inherited;
    std::vector<std::filesystem::path> m_removed;
};

}  // namespace bootstrap::state
