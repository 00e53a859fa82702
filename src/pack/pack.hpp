#pragma once
// `pack` / `unpack`: a venv as one reproducible file, for bringing up many nodes from one build.
//
// A pack is a zstd-compressed tar: `bootstrap-pack.json` (where the venv was made, its
// interpreter, the symlinks that point outside it), `manifest.json` (a snapshot taken when
// packing) and `venv/` (the tree, with its `.bootstrap/` history and journal, without locks,
// logs and caches). Members are sorted, owners are 0 and every mtime is SOURCE_DATE_EPOCH (or
// 0), so the same venv packs to the same bytes. Unpacking extracts it safely into a staging
// directory beside the destination, checks that the interpreter exists here, recreates the
// outside links, rewrites the venv's old path in bin/, checks every package's version and
// RECORD digest against the manifest, and only then renames it into place.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pack/carried_sources.hpp"

namespace bootstrap::pack {

namespace fs = std::filesystem;

struct PackOptions {
    std::int64_t mtime = 0;  // every member's mtime
    double lock_timeout = 600;
    /// Copy each editable install's source tree into the pack (pack/carried_sources.hpp);
    /// without it they are only named, and `unpack` needs them at their paths.
    bool carry_editable = false;
};

struct PackResult {
    size_t files = 0;  // members of venv/ that are files
    size_t packages = 0;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    std::string sha256;  // of the pack file
    /// The editable installs whose sources lie outside the venv (carried: `carried` is set).
    std::vector<CarriedSource> local_sources;
    size_t carried_files = 0;  // files of the carried source trees
};

/// Pack `venv` into `out` (written atomically). Holds the venv's lock meanwhile, so no run
/// changes it under the pack.
[[nodiscard]] Result<PackResult> pack_venv(const fs::path& venv, const fs::path& out, const PackOptions& options);

struct UnpackResult {
    fs::path venv;                             // the destination, absolute
    std::string packed_from;                   // the venv path the pack was made from
    size_t packages = 0;                       // verified against the manifest
    size_t files = 0;                          // installed files whose RECORD hashes were checked
    size_t relocated = 0;                      // bin/ files whose text named the old path
    std::uint64_t bytes = 0;                   // file data extracted
    std::vector<CarriedSource> local_sources;  // as the pack lists them
    size_t repointed = 0;                      // editable installs pointed at their new place
};

/// Unpack `pack` into `dest`, which must not exist. Every package's version and RECORD digest
/// must be the manifest's and every installed file its RECORD's hash; a pack with a file changed
/// or listed twice is refused, naming it. An editable install whose source the pack does not
/// carry must find it at its packed path, else the unpack fails naming each one. On any error
/// nothing is left at `dest`.
[[nodiscard]] Result<UnpackResult> unpack_venv(const fs::path& pack, const fs::path& dest);

}  // namespace bootstrap::pack
