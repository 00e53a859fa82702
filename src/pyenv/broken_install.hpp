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
#include "pyenv/record_files.hpp"

namespace bootstrap::pyenv {

/// The venv's site-packages directories: purelib, and platlib when it is another that exists.
[[nodiscard]] std::vector<std::filesystem::path> sites_of(const InterpreterFacts& facts);

/// The broken dist-infos of a venv (purelib, then platlib), by normalised name.
[[nodiscard]] Result<std::vector<Distribution>> find_broken_installs(const InterpreterFacts& facts);

struct BrokenRemoval {
    size_t files = 0;         // files its RECORD lists that were removed
    size_t left_outside = 0;  // RECORD rows outside site-packages (console scripts): left alone
};

/// Remove `dist` (broken, incomplete, or whole: a rollback's restore removes the installed
/// version too) found in `site_packages`: every file its RECORD lists that lies
/// inside site-packages (and, with a `.py`, its `__pycache__` bytecode), the directories that
/// leaves empty, then the dist-info itself. RECORD rows that are absolute, lead out of
/// site-packages (`../../../bin/x`) or pass through a symlink out of it are not touched. A RECORD
/// that cannot be read (missing, not a regular file) removes the dist-info only.
[[nodiscard]] Result<BrokenRemoval> remove_install(const std::filesystem::path& site_packages,
                                                   const Distribution& dist);

/// find_broken_installs, then remove_install each; one line per removal for the user:
/// "removed the broken install of wandb 0.22.0 (METADATA missing): its dist-info and the 12
/// files its RECORD lists".
[[nodiscard]] Result<std::vector<std::string>> remove_broken_installs(const InterpreterFacts& facts);

/// A dist-info whose METADATA is whole but whose RECORD names files that are missing or differ:
/// what an installer leaves when it is stopped while copying a wheel's files (Ctrl-C, a killed
/// job, a timeout). Installers take the metadata at its word (uv and pip then skip it), so every
/// later import of it fails until it is removed and installed again.
struct IncompleteInstall {
    Distribution dist;
    std::filesystem::path site;  // the site-packages it is in
    RecordFileCheck check;
};

/// The incomplete installs of the venv at `venv` (purelib, then platlib): a file its RECORD
/// names is missing, is not a regular file or has another size, or RECORD itself is missing
/// (a dist-info copied before it). Files are not hashed: a copy cut
/// short leaves a file missing or short, and a same-size difference is somebody's edit (or two
/// distributions sharing a path), which doctor's files check reports instead. Broken dist-infos
/// (find_broken_installs) are not listed here. Stops early, with what it found, on an interrupt.
[[nodiscard]] Result<std::vector<IncompleteInstall>> find_incomplete_installs(const InterpreterFacts& facts,
                                                                              const std::filesystem::path& venv);

/// find_incomplete_installs, then remove_install each, so that the step that installs it
/// installs it again; one line per removal: "removed the incomplete install of pandas 2.3.3
/// (235 of the 1509 files its RECORD names are missing, ...): its dist-info and the 1274 files
/// left".
[[nodiscard]] Result<std::vector<std::string>> remove_incomplete_installs(const InterpreterFacts& facts,
                                                                          const std::filesystem::path& venv);

/// The files an older RECORD of a distribution (`record_text`, kept before an install began)
/// names that no distribution now in `site` claims: what an uninstall stopped half-way leaves
/// behind (uv removes the dist-info's files first, then the package's), importable stale modules
/// that no RECORD would ever remove. Removed inside site-packages only, as
/// remove_install removes; returns how many files went.
[[nodiscard]] Result<size_t> remove_unclaimed_files(const std::filesystem::path& site, std::string_view record_text);

}  // namespace bootstrap::pyenv
