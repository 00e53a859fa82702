#pragma once
// The shared library file a venv's process will load for a name (README pitfall P10): Python's
// nvidia-* wheels are loaded by path from site-packages, so the venv's copy wins over the
// system's. One answer for `doctor --symbol` and the `elf_symbol` verify clause.

#include <filesystem>
#include <string>
#include <vector>

#include "exec/environment.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

struct LoadedLibrary {
    fs::path file;      // empty when nothing matched
    std::string where;  // "the venv", "the system" or "the path given"
    /// What was looked at, in order ("<site>/nvidia/**/libcublasLt.so.13", "ldconfig -p",
    /// "/usr/lib/x86_64-linux-gnu"), for a message when nothing matched.
    std::vector<std::string> searched;
};

/// The file a process of the venv whose site-packages directories are `sites` loads for
/// `library`. An absolute path is that file (or, holding `*?[`, the first file its glob
/// matches); otherwise `library` is a glob under each site-packages ("**" spans directories,
/// the sorted first match wins), then its file name is looked up on the system (`ldconfig -p`
/// run with `env`, then the standard library directories; a glob file name matches there too).
[[nodiscard]] LoadedLibrary find_loaded_library(const std::vector<fs::path>& sites, const std::string& library,
                                                const exec::EnvMap& env);

/// Regular files under `root` matching `pattern` (slash-separated fnmatch components; "**"
/// spans any number of directories, symlinked directories are not followed), sorted.
[[nodiscard]] std::vector<fs::path> glob_files(const fs::path& root, const std::string& pattern);

}  // namespace bootstrap::pyenv
