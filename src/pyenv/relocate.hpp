#pragma once
// A venv's own path in its bin/ scripts (shebangs, activate*): where a venv was made, and
// rewriting that path after a copy, a move or an unpack (README pitfall P4).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

/// The file's text when it is a small (<= 1 MiB) regular text file (no NUL in it), else nullopt.
[[nodiscard]] std::optional<std::string> read_script_text(const fs::path& file);

/// Occurrences of `prefix` in `text` as a whole path (followed by a path end or the text end).
[[nodiscard]] std::vector<size_t> prefix_positions(const std::string& text, const std::string& prefix);

/// The venv path a venv was made at, from its activate script's VIRTUAL_ENV= line (not_found
/// when there is none).
[[nodiscard]] Result<fs::path> detect_venv_origin(const fs::path& venv);

struct RelocateReport {
    fs::path old_prefix;
    std::vector<fs::path> rewritten;  // files whose text changed
};

/// Rewrite `old_prefix` to `new_prefix` (default: the venv's own absolute path) in the text
/// files of bin/ (shebangs, activate* scripts), each atomically (temp + rename) with its mode
/// kept; binaries and symlinks are left alone, and so are paths elsewhere (*.pth files).
/// `old_prefix` empty: detected with detect_venv_origin. `new_prefix` lets a venv be fixed up
/// in a staging directory before it is renamed to where it will live (`unpack`). A directory
/// without a pyvenv.cfg is refused (a usage error naming it), and nothing is rewritten.
[[nodiscard]] Result<RelocateReport> relocate_venv(const fs::path& venv, fs::path old_prefix,
                                                   const fs::path& new_prefix = {});

}  // namespace bootstrap::pyenv
