#pragma once
// Filesystem helpers: every write goes to a temporary sibling and is renamed into place.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::core {

/// Cheap identity of a file: when all fields match, its content is taken as unchanged.
struct FileStamp {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

namespace fs = std::filesystem;

/// Read a whole file; the error names the path.
[[nodiscard]] Result<std::string> read_file(const fs::path& path);

/// The end of a file: its bytes from `from` on, or only the last `max_bytes` of them when there
/// are more (a step's log may be gigabytes; its last lines are what an error shows). At most
/// `max_bytes` are read, even from a file that grows meanwhile.
[[nodiscard]] Result<std::string> read_file_tail(const fs::path& path, std::uint64_t from, std::uint64_t max_bytes);

/// Read a regular file of at most `max_bytes` bytes. Anything else is refused without blocking
/// or reading it (opened O_NONBLOCK, then fstat): a FIFO, a device (a symlink to /dev/zero), a
/// directory, a file of a kernel filesystem (/proc/kmsg), a larger file (io: "cannot read PATH:
/// not a regular file (a FIFO)", "cannot read PATH: larger than 64 MiB (70.0 MiB)"); a missing
/// file is not_found. For files other programs
/// wrote (a dist-info's METADATA and RECORD).
/// Reading stops with `interrupted` when SIGINT/SIGTERM arrives (core/interrupt.hpp).
[[nodiscard]] Result<std::string> read_regular_file(const fs::path& path, std::uint64_t max_bytes);

/// The bound of an input a user names (a recipe aside, which has its own): a training log, a
/// Megatron config, a manifest, a lockfile. Larger inputs are refused, never read into memory.
inline constexpr std::uint64_t k_max_user_input = std::uint64_t{1} << 30;

/// The kind of kernel filesystem `path` (or the open `fd`) is on, when its files are not data
/// but the kernel's interfaces (reading one may block forever, like /proc/kmsg, or never end):
/// "proc", "sysfs", "devpts", "devtmpfs" (a tmpfs mounted at /dev), "cgroup", "debugfs",
/// "tracefs", "securityfs", "bpf", "pstore", "efivarfs", "configfs", "selinuxfs", "fusectl".
/// nullopt for every other filesystem, and when it cannot be told.
[[nodiscard]] std::optional<std::string> kernel_filesystem(const fs::path& path);
/// The open file `fd`'s (devtmpfs not told apart: a regular file is never on it).
[[nodiscard]] std::optional<std::string> kernel_filesystem(int fd);

/// When a tree walked from `dir` would reach one of /proc, /sys or /dev (it is one of them, is
/// inside one, or is an ancestor of one): that directory. A source tree never includes them.
[[nodiscard]] std::optional<fs::path> reaches_kernel_tree(const fs::path& dir);

/// "a FIFO", "a character device", "a directory", ... for an st_mode that is not a regular file.
[[nodiscard]] std::string describe_file_type(unsigned mode);

/// Whether a file written is on disk before it takes its name. `synced` for bootstrap's own
/// records (journal, history, markers, lockfiles); `unsynced` for what may be lost in a power
/// cut without harm or is found out then: caches (read again), and a dist-info's installer
/// metadata (INSTALLER, REQUESTED, RECORD, written as uv and pip write them, without fsync;
/// a RECORD lost with its files is a broken or incomplete install that the next run repairs).
enum class Durability { synced, unsynced };

/// Write `content` to `path` atomically: temp file `<path>.tmp-<pid>-XXXXXX` in the same
/// directory with `mode`, fsync (unless `unsynced`), rename. Parent directories are created.
/// Never leaves a `*.tmp-*` behind, even on failure (a killed process's is found by
/// remove_dead_leftovers through its pid).
[[nodiscard]] Status write_file_atomic(const fs::path& path, std::string_view content, unsigned mode = 0644,
                                       Durability durability = Durability::synced);

/// Like write_file_atomic, but the file must not exist yet: the complete file appears under
/// `path` (temp file, fsync, link(2), which never replaces a file) or not at all. When `path`
/// exists it is left alone: the error (io) says so and `*exists` is set to true.
[[nodiscard]] Status write_file_exclusive(const fs::path& path, std::string_view content, bool* exists = nullptr);

/// Append `line` and a newline to a step or run log (parent directories created), in one
/// write(2) on an O_APPEND descriptor so that lines of concurrent writers never interleave.
/// Best effort: a log that cannot be written must not fail the step it describes.
void append_log_line(const fs::path& log, std::string_view line);

/// rename(2) that never replaces what is at `to` (renameat2 RENAME_NOREPLACE; plain rename where
/// the filesystem lacks the flag). The error names both paths.
[[nodiscard]] Status rename_no_replace(const fs::path& from, const fs::path& to);

/// Create a directory and its parents; the error names the path.
[[nodiscard]] Status create_directories(const fs::path& path);

/// A path as a shell would read it: a leading `~` or `~/`, `$HOME` or `${HOME}` is the home
/// directory `home` (nothing changes when `home` is empty).
[[nodiscard]] std::string expand_home(std::string_view path, std::string_view home);

/// Whether a process with this pid exists on this host: kill(pid, 0) succeeds, or fails with
/// EPERM (another user's). A pid <= 0 is never alive.
[[nodiscard]] bool process_alive(long pid);

/// The pid in a temporary name this program makes, or 0: `<name>.tmp-<pid>-XXXXXX`
/// (write_file_atomic) and `.<name>.tmp-<pid>` (extraction, compiles).
[[nodiscard]] long temp_name_pid(std::string_view name);

/// The pid right after `prefix` in `name` (`<prefix><pid>`, `<prefix><pid>-...` or
/// `<prefix><pid>.…`), or 0: `.src-<key>-<pid>` is pid_after(name, ".src-<key>-").
[[nodiscard]] long pid_after(std::string_view name, std::string_view prefix);

/// Remove (recursively) the entries of `dir` for which `pid_of(name)` names a process that no
/// longer exists on this host; never this process's own, never a live one's. Call it while
/// holding the lock that the writers of those names hold. Best effort: what cannot be read or
/// removed stays. Returns the paths removed.
std::vector<fs::path> remove_dead_leftovers(const fs::path& dir, const std::function<long(std::string_view)>& pid_of);

/// A size for people: "512 B", "1.5 KiB", "4 GiB" (powers of 1024; a whole number without a decimal).
[[nodiscard]] std::string format_size(uint64_t bytes);

/// A size as a recipe writes one: bytes ("1048576") or a number with a unit ("2GiB", "1.5 MB",
/// "500k"): B, KiB/MiB/GiB/TiB (powers of 1024), KB/MB/GB/TB and K/M/G/T (powers of 1000),
/// case-insensitive. Nothing for anything else, or for a size that does not fit 64 bits.
[[nodiscard]] std::optional<uint64_t> parse_size(std::string_view text);

/// A fresh, empty directory under the system temp dir, removed by the destructor.
class TempDir {
public:
    explicit TempDir(std::string_view prefix = "bootstrap");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

}  // namespace bootstrap::core
