#pragma once
// What a tool is, for step keys: its `--version` line ("uv 0.9.5", "gcc (Debian 12.2.0-14)
// 12.2.0", "Cuda compilation tools, release 13.0, V13.0.48"), not its file's stat. A `touch`,
// a reinstall of the same release or another path to the same release changes nothing; another
// release changes the key.
//
// Asking a tool costs a process (milliseconds), so answers are cached by the file's stat
// (device, inode, size, mtime) in `$BOOTSTRAP_HOME/tool-versions.json`: a no-op run starts no
// process. A stat that changed is asked again. The cache is a cache: unreadable, it is a miss;
// unwritable, the answer still stands for this process.

#include <filesystem>
#include <map>
#include <string>

#include "core/error.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

class ToolVersions {
public:
    /// `cache_file` empty: answers live only in this object. `write` false (`plan`): the file
    /// is read, never written.
    ToolVersions(fs::path cache_file, bool write);

    /// The version line of `program` (an absolute path; `program --version` run once per stat
    /// of the file it reaches), or when
    /// it cannot say (missing, fails, prints nothing): "PATH (not found)" or the file's
    /// identity, "PATH SIZE MTIME" (so a key still changes when the file does). An interrupt
    /// while asking is an error.
    [[nodiscard]] Result<std::string> version(const std::string& program);

    /// Write the answers learnt since the file was read (best effort; a no-op when none).
    void save();

private:
    struct Entry {
        std::string stamp;
        std::string version;
    };
    void load();
    fs::path m_file;
    bool m_write;
    bool m_loaded = false;
    bool m_dirty = false;
    std::map<std::string, Entry> m_entries;  // by the program's path
};

/// The line of `--version` output that names the release: one with "release " (nvcc) or else
/// the first non-empty one, trimmed ("" for no output).
[[nodiscard]] std::string version_line(const std::string& output);

}  // namespace bootstrap::pyenv
