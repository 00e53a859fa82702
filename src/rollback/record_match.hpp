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

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::rollback {

namespace fs = std::filesystem;

/// Make `dist_info`'s RECORD hash to `target.record_sha256` by varying the metadata above
/// (REQUESTED present or not, uv_cache.json dropped, direct_url.json's URL set to the target's
/// origin URL, or direct_url.json removed when the target records no URL). Returns true when RECORD matches (already, or after the change), false when no
/// variation does (nothing is changed then). Files are rewritten atomically, RECORD last.
[[nodiscard]] Result<bool> match_record(const fs::path& dist_info, const manifest::Package& target);

}  // namespace bootstrap::rollback
