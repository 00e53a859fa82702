#pragma once
// Filesystem helpers: every write goes to a temporary sibling and is renamed into place.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace bootstrap::core {

namespace fs = std::filesystem;

/// Read a whole file; the error names the path.
[[nodiscard]] Result<std::string> read_file(const fs::path& path);

/// Write `content` to `path` atomically: temp file in the same directory, fsync, rename.
/// Parent directories are created. Never leaves a `*.tmp-*` behind, even on failure.
[[nodiscard]] Status write_file_atomic(const fs::path& path, std::string_view content);

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
