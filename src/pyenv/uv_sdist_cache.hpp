#pragma once
// What uv's cache says of an sdist it downloaded and built, read without uv (as
// pyenv/uv_cache.hpp reads its wheels): uv 0.13 keeps, per sdist from an index,
// `sdists-v<N>/<source>/[<hash>/]<name>/<version>/revision.{http,rev}` (msgpack; the revision's
// id and the hashes uv computed of the sdist's bytes, {"Sha256": "<hex>"}) and, in the
// revision's directory `<version>/<id>/`, the wheels it built from it (`*.whl`). Anything else
// is not read.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

/// An sdist uv downloaded, hashed and built.
struct UvSdistBuild {
    std::string sdist_sha256;      // lower-case hex, as uv computed it from the bytes
    std::vector<fs::path> wheels;  // the wheels uv built from it (sorted)
    fs::path pointer;              // the revision file that says so
};

/// The sdists of `normalized_name` at `version` whose sha256 uv's cache at `cache` records, in a
/// stable order. Nothing (never an error) when there are none or the cache cannot be read.
[[nodiscard]] std::vector<UvSdistBuild> uv_sdist_builds(const fs::path& cache, std::string_view normalized_name,
                                                        std::string_view version);

/// The sha256 a revision file's bytes record (its first `Sha256` entry), nullopt when none.
[[nodiscard]] std::optional<std::string> sha256_in_uv_revision(std::string_view bytes);

}  // namespace bootstrap::pyenv
