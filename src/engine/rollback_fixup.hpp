#pragma once
// Matching a reinstalled distribution's RECORD to the one a manifest recorded.
//
// A RECORD lists, besides the wheel's own files, metadata the installer wrote, and that depends
// on how the package was installed rather than on what was installed:
//   REQUESTED        pip writes it only for requirements named on its command line (rollback
//                    names every package it restores; the original may have been a dependency)
//   uv_cache.json    uv writes it only for wheels taken from a local path or --find-links
//   direct_url.json  PEP 610: the URL a wheel was installed from (a wheel restored from the
//                    artifact store names the store, the original named its build directory;
//                    a wheel restored by path has one, the original from an index had none)
// After a rollback install we try those variations and apply one only when it makes RECORD
// byte-for-byte what the target recorded, so nothing is changed on a guess.
//
// Also here: the files two distributions share. A rollback installs before it uninstalls (a
// failed install then changes nothing), so an extra that shares a file with a restored
// package (a renamed project, two builds of one module) would take that file with it; its
// RECORD first gives those rows up.

#include <filesystem>
#include <set>
#include <string>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

/// Make `dist_info`'s RECORD hash to `target.record_sha256` by varying the metadata above
/// (REQUESTED present or not, uv_cache.json dropped, direct_url.json's URL set to the target's
/// origin URL, or direct_url.json removed when the target records no URL). Returns true when RECORD matches (already, or after the change), false when no
/// variation does (nothing is changed then). Files are rewritten atomically, RECORD last.
[[nodiscard]] Result<bool> match_record(const fs::path& dist_info, const manifest::Package& target);

/// The paths `dist_info`'s RECORD lists, relative to its site-packages, lexically normalised.
[[nodiscard]] Result<std::set<std::string>> record_paths(const fs::path& dist_info);

/// Drop from `dist_info`'s RECORD the rows for `paths` (spelt as record_paths spells them), so
/// that uninstalling the distribution leaves those files to the one that now owns them too.
/// Returns how many rows went; RECORD is rewritten (atomically) only when some did.
[[nodiscard]] Result<size_t> disown_paths(const fs::path& dist_info, const std::set<std::string>& paths);

}  // namespace bootstrap::engine
