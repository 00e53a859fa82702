#pragma once
// An index's sha256 for an installed wheel, checked against bytes bootstrap has at hand before
// `lock` writes it: the artifact store's entry under that digest, or the sha256 uv computed of
// the bytes it downloaded and installed (pyenv/uv_cache.hpp). Nothing is downloaded to hash
// it (lock stays as fast as `uv pip compile --generate-hashes`, which also takes the index's
// word): a wheel no cache knows is locked with `hash_source = "index"`, saying only the index
// vouches for it.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "lockfile/index_page.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/manifest.hpp"
#include "steps/source_build.hpp"

namespace bootstrap::lockfile {

/// LockedPackage::hash_source values.
inline constexpr const char* k_hash_from_uv_cache = "uv-cache";
inline constexpr const char* k_hash_from_artifact_store = "artifact-store";
inline constexpr const char* k_hash_from_index = "index";
/// bootstrap downloaded the sdist to build it through the build cache and checked it to this
/// digest (steps/source_build.hpp).
inline constexpr const char* k_hash_from_build_cache = "build-cache";

/// Where bytes of installed wheels may be found.
struct BytesAtHand {
    std::optional<std::filesystem::path> uv_cache;  // uv's cache dir, as uv finds it with the lock's env
    const manifest::ArtifactStore* store = nullptr;
    /// What the venv's install steps built from sdists (steps/source_build.hpp), by name.
    const std::map<std::string, steps::SourceBuilt>* source_builds = nullptr;
};

/// What vouches for `file.sha256` (a wheel of `pkg` that `page_url` lists): the store or uv's
/// cache when bytes there hash to it, else the index alone. A step_failed error when bytes at
/// hand of that very file hash to something else (both digests, the page and the cache file
/// named).
[[nodiscard]] Result<std::string> check_index_hash(const BytesAtHand& at_hand, const manifest::Package& pkg,
                                                   const IndexFile& file, const std::string& page_url);

}  // namespace bootstrap::lockfile
