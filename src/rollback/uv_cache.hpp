#pragma once
// Restoring a package from the unpacked wheel uv keeps in its cache, without running uv: the
// way a rollback puts back exact pins faster than an installer can resolve them.
//
// uv's cache keeps each wheel it installed unpacked under `archive-v0/<id>/` (the wheel's files
// and its own dist-info, RECORD included), reached from `wheels-v<N>/<source>/<name>/
// <version>-<tags>` (a link; <source> is `pypi` or `index/<hash of the index URL>`). uv installs
// one by copying (or linking) those files into site-packages and writing INSTALLER ("uv"),
// REQUESTED for a package named on its command line, and RECORD: the wheel's rows and those,
// sorted by path, with a script in the venv's bin/ for each console or GUI entry point (uv's
// template: the venv's python in the shebang). A restore is planned only when the RECORD it would
// write hashes to exactly the target's record_sha256 (so every file, scripts included, is the
// one the target had); anything else — a wheel with a `.data/` directory, another installer, a
// script uv would write otherwise, a digest that differs — is left to the installer.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::rollback {

namespace fs = std::filesystem;

/// The cache directory uv uses with `env`: $UV_CACHE_DIR, else $XDG_CACHE_HOME/uv, else
/// $HOME/.cache/uv; nullopt when UV_NO_CACHE is set or none of them is. (A `cache-dir` set in a
/// uv.toml is not read: such a cache is simply not found, and uv restores those packages.)
[[nodiscard]] std::optional<fs::path> uv_cache_dir(const exec::EnvMap& env);

/// The unpacked wheels of `normalized_name` at `version` in the cache at `cache`, each a
/// directory (the archive a `wheels-v*/**/<name>/<version>-<tags>` entry points to), in a
/// stable order. Nothing (never an error) when the cache has none or cannot be read.
[[nodiscard]] std::vector<fs::path> cached_wheels(const fs::path& cache, std::string_view normalized_name,
                                                  std::string_view version);

/// Where a restore goes: the site-packages directory, the venv's bin/ and its python (the
/// scripts' shebang, spelt as uv spells it: `<venv>/bin/python`).
struct RestoreTarget {
    fs::path site_packages;
    fs::path scripts;
    fs::path python;
    bool hardlink = true;  // as uv's default link mode on Linux; false: copy (UV_LINK_MODE=copy)
};

/// A restore of one package from an unpacked wheel, planned and checked.
struct CachedRestore {
    fs::path wheel_dir;              // the unpacked wheel
    std::string dist_info;           // "name-1.0.dist-info", as in the wheel
    std::vector<std::string> files;  // the wheel's files (RECORD rows' paths), RECORD itself left out
    std::vector<std::pair<std::string, std::string>> scripts;  // {file name in bin/, content}
    std::string record_text;                                   // the RECORD written last; its digest is the target's
    bool requested = false;                                    // REQUESTED written
};

/// The restore of `target` from `wheel_dir` that leaves exactly the RECORD the target recorded;
/// nullopt (with `why` set) when the wheel cannot give it. An io error only for a wheel
/// directory that cannot be read.
[[nodiscard]] Result<std::optional<CachedRestore>> plan_cached_restore(const fs::path& wheel_dir,
                                                                       const manifest::Package& target,
                                                                       const RestoreTarget& where, std::string& why);

/// Link (or copy) the restore's files into `where.site_packages` (each file's permission bits
/// kept), write its scripts into `where.scripts` (0755), then INSTALLER, REQUESTED and RECORD
/// (atomically, RECORD last). The package must not be installed
/// now (its old files removed first). A failure part way leaves a dist-info without RECORD or a
/// RECORD naming files not all there: the caller runs it under the venv's `changing` marker
/// (engine/install_repair.hpp), whose repair removes such an install.
[[nodiscard]] Status install_cached(const CachedRestore& restore, const RestoreTarget& where);

}  // namespace bootstrap::rollback
