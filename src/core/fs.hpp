#pragma once
// Filesystem helpers: every write goes to a temporary sibling and is renamed into place.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace bootstrap::core {

namespace fs = std::filesystem;

/// Read a whole file; the error names the path.
[[nodiscard]] Result<std::string> read_file(const fs::path& path);

/// Read a regular file of at most `max_bytes` bytes. Anything else is refused without blocking
/// or reading it (opened O_NONBLOCK, then fstat): a FIFO, a device (a symlink to /dev/zero), a
/// directory, a larger file (io: "cannot read PATH: not a regular file (a FIFO)", "cannot read
/// PATH: larger than 64 MiB (70.0 MiB)"); a missing file is not_found. For files other programs
/// wrote (a dist-info's METADATA and RECORD).
[[nodiscard]] Result<std::string> read_regular_file(const fs::path& path, std::uint64_t max_bytes);

/// "a FIFO", "a character device", "a directory", ... for an st_mode that is not a regular file.
[[nodiscard]] std::string describe_file_type(unsigned mode);

/// "64 MiB", "1.5 GiB", "900 bytes".
[[nodiscard]] std::string format_size(std::uint64_t bytes);

/// Write `content` to `path` atomically: temp file in the same directory, fsync, rename.
/// Parent directories are created. Never leaves a `*.tmp-*` behind, even on failure.
[[nodiscard]] Status write_file_atomic(const fs::path& path, std::string_view content);

/// Like write_file_atomic, but the file must not exist yet: the complete file appears under
/// `path` (temp file, fsync, link(2), which never replaces a file) or not at all. When `path`
/// exists it is left alone: the error (io) says so and `*exists` is set to true.
[[nodiscard]] Status write_file_exclusive(const fs::path& path, std::string_view content,
                                          bool* exists = nullptr);

/// Create a directory and its parents; the error names the path.
[[nodiscard]] Status create_directories(const fs::path& path);

/// A path as a shell would read it: a leading `~` or `~/`, `$HOME` or `${HOME}` is the home
/// directory `home` (nothing changes when `home` is empty).
[[nodiscard]] std::string expand_home(std::string_view path, std::string_view home);

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
