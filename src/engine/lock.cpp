#include "engine/lock.hpp"

#include <fmt/format.h>

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
    return VenvLock(std::move(*lock));
}

}  // namespace bootstrap::engine
