#pragma once
// Broken installs: a `*.dist-info` that an installer left unusable (no METADATA after a full
// disk, say; see Distribution::broken). uv cannot install over one ("Failed to read metadata")
// and pip cannot uninstall one, so bootstrap removes it itself: the dist-info and the files its
// RECORD lists, inside site-packages only.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::pyenv {

/// The broken dist-infos of a venv (purelib, then platlib), by normalised name.
[[nodiscard]] Result<std::vector<Distribution>> find_broken_installs(const InterpreterFacts& facts);

struct BrokenRemoval {
    size_t files = 0;         // files its RECORD lists that were removed
    size_t left_outside = 0;  // RECORD rows outside site-packages (console scripts): left alone
};

/// Remove the broken `dist` found in `site_packages`: every file its RECORD lists that lies
/// inside site-packages (and, with a `.py`, its `__pycache__` bytecode), the directories that
/// leaves empty, then the dist-info itself. RECORD rows that are absolute, lead out of
/// site-packages (`../../../bin/x`) or pass through a symlink out of it are not touched. A RECORD
/// that cannot be read (missing, not a regular file) removes the dist-info only.
[[nodiscard]] Result<BrokenRemoval> remove_broken_install(const std::filesystem::path& site_packages,
                                                          const Distribution& dist);

/// find_broken_installs, then remove_broken_install each; one line per removal for the user:
/// "removed the broken install of wandb 0.22.0 (METADATA missing): its dist-info and the 12
/// files its RECORD lists".
[[nodiscard]] Result<std::vector<std::string>> remove_broken_installs(const InterpreterFacts& facts);

}  // namespace bootstrap::pyenv
