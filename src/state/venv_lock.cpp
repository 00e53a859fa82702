#include "state/venv_lock.hpp"

#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "state/layout.hpp"

namespace bootstrap::state {

/// The children running now, kept in the lock file (shared with the exec hook).
struct VenvLock::Children {
    std::mutex mutex;
    std::set<long> live;
    int fd = -1;

    void update(long pid, bool started) {
        std::lock_guard<std::mutex> guard(mutex);
        if (started) live.insert(pid);
        else live.erase(pid);
        core::FileLock::record_children(fd, std::vector<long>(live.begin(), live.end()));
    }
};

VenvLock::VenvLock(core::FileLock lock, std::shared_ptr<Children> children)
    : m_lock(std::move(lock)), m_children(std::move(children)) {
    m_children->fd = m_lock.fd();
    m_inherited = std::make_unique<exec::InheritedFd>(
        m_lock.fd(), [children = m_children](long pid, bool started) { children->update(pid, started); });
}

std::string VenvLock::describe_holder(const core::LockHolder& holder) {
    if (holder.pid == 0) return "another bootstrap process (it has not written its pid yet)";
    if (holder.pid_alive) return fmt::format("another bootstrap run ({})", holder.describe());
    if (!holder.live_children.empty())
        return fmt::format(
            "pid {}, a child that bootstrap run pid {} started and that outlived it "
            "(it inherited the lock)",
            holder.live_children.front(), holder.pid);
    return fmt::format("a process that inherited it from bootstrap run pid {}, which has exited", holder.pid);
}

std::string VenvLock::waiting_message(long pid, double timeout_s) {
    return fmt::format("waiting for the venv lock held by {} (up to {:.0f}s)",
                       pid > 0 ? fmt::format("pid {}", pid) : std::string("another bootstrap process"), timeout_s);
}

Result<std::optional<core::FileLock>> VenvLock::try_read(const std::filesystem::path& venv) {
    return core::FileLock::try_shared(state::Layout(venv).lock());
}

Result<VenvLock> VenvLock::acquire(const std::filesystem::path& venv, double timeout_s,
                                   const std::function<void(long)>& on_wait) {
    const std::filesystem::path file = state::Layout(venv).lock();
    auto lock = core::FileLock::acquire(file, timeout_s, "the venv " + venv.string(), [&](long pid) {
        if (on_wait) on_wait(pid);
    });
    if (!lock) {
        Error err = lock.error();
        if (err.code == ErrorCode::lock_timeout) {
            const core::LockHolder holder = core::read_lock_holder(file);
            err.message = fmt::format("the venv {} is locked by {}; gave up after {:.0f}s (--lock-timeout)",
                                      venv.string(), describe_holder(holder), timeout_s);
            if (!holder.pid_alive && holder.pid != 0)
                err.detail +=
                    "\nwait for it to finish (or end it) before running again: it may still be "
                    "changing the venv";
        }
        if (err.code == ErrorCode::interrupted) err.message = "interrupted while waiting for the venv lock";
        return tl::unexpected(err);
    }
    VenvLock held(std::move(*lock), std::make_shared<Children>());
    // A dead pid's temporary is a leftover; a live one's (a `doctor` writing the facts cache
    // meanwhile, say) is kept.
    auto leftover_pid = [](std::string_view name) {
        long pid = core::temp_name_pid(name);
        return pid != 0 ? pid : core::pid_after(name, state::Layout::k_recreate_trash_prefix);
    };
    const state::Layout layout(venv);
    for (const auto& dir : {layout.dir(), layout.history(), layout.locked()})
        for (auto& path : core::remove_dead_leftovers(dir, leftover_pid)) held.m_removed.push_back(std::move(path));
    return held;
}

}  // namespace bootstrap::state
