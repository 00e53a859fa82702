#include "engine/lock.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"

namespace bootstrap::engine {

Result<VenvLock> VenvLock::acquire(const std::filesystem::path& venv, double timeout_s,
                                   const std::function<void(long)>& on_wait) {
    long holder = 0;
    auto lock = core::FileLock::acquire(venv / ".bootstrap" / "lock", timeout_s, "the venv " + venv.string(),
                                        [&](long pid) {
                                            holder = pid;
                                            if (on_wait) on_wait(pid);
                                        });
    if (!lock) {
        Error err = lock.error();
        if (err.code == ErrorCode::lock_timeout)
            err.message = fmt::format("the venv {} is locked by another bootstrap run (pid {}); gave up after "
                                      "{:.0f}s (--lock-timeout)",
                                      venv.string(), holder, timeout_s);
        if (err.code == ErrorCode::interrupted) err.message = "interrupted while waiting for the venv lock";
        return tl::unexpected(err);
    }
    VenvLock held(std::move(*lock));
    // A dead pid's temporary is a leftover; a live one's (a `doctor` writing the facts cache
    // meanwhile, say) is kept.
    auto leftover_pid = [](std::string_view name) {
        long pid = core::temp_name_pid(name);
        return pid != 0 ? pid : core::pid_after(name, "recreate-trash-");
    };
    const auto state = venv / ".bootstrap";
    for (const auto& dir : {state, state / "history", state / "locked"})
        for (auto& path : core::remove_dead_leftovers(dir, leftover_pid))
            held.m_removed.push_back(std::move(path));
    return held;
}

}  // namespace bootstrap::engine
