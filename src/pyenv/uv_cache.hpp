#pragma once
// What uv's cache says of the wheels it downloaded, read without uv: where the cache is, and
// the sha256 uv computed of a wheel's bytes while it downloaded them (lockfile/ checks an
// index's hash against it; rollback/uv_cache.hpp restores from the unpacked wheels).
//
// uv 0.13 keeps, per wheel from an index, `wheels-v<N>/<source>/<name>/<version>-<tags>.http`:
// msgpack, an array whose first three items are the archive's id, the hashes uv computed (an
// array of one-entry maps, {"Sha256": "<hex>"}; empty when it computed none) and the wheel's
// file name; uv's HTTP cache policy follows. Anything else is not read.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/environment.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

/// The cache directory uv uses with `env`: $UV_CACHE_DIR, else $XDG_CACHE_HOME/uv, else
/// $HOME/.cache/uv; nullopt when UV_NO_CACHE is set or none of them is. (A `cache-dir` set in a
/// uv.toml is not read: such a cache is simply not found.)
[[nodiscard]] std::optional<fs::path> uv_cache_dir(const exec::EnvMap& env);

/// The directories uv's cache at `cache` may keep `normalized_name`'s wheels in, existing or not:
/// `wheels-v<N>/pypi/<name>/` and `wheels-v<N>/<kind>/<hash>/<name>/` (kind: index, url, path).
[[nodiscard]] std::vector<fs::path> uv_wheel_dirs(const fs::path& cache, std::string_view normalized_name);

/// The same for any bucket whose name starts with `bucket_prefix` ("sdists-v": the sdists uv
/// downloaded and the wheels it built from them; pyenv/uv_sdist_cache.hpp).
[[nodiscard]] std::vector<fs::path> uv_bucket_dirs(const fs::path& cache, std::string_view bucket_prefix,
                                                   std::string_view normalized_name);

/// A wheel uv downloaded and hashed.
struct UvWheelRecord {
    std::string filename;  // the wheel's file name
    std::string sha256;    // lower-case hex, as uv computed it from the bytes
    fs::path pointer;      // the `.http` file that says so
};

/// The wheels of `normalized_name` at `version` whose sha256 uv's cache at `cache` records, in a
/// stable order. Nothing (never an error) when there are none or the cache cannot be read.
[[nodiscard]] std::vector<UvWheelRecord> uv_wheel_records(const fs::path& cache, std::string_view normalized_name,
                                                          std::string_view version);

/// The record in one `.http` pointer's bytes (nullopt when they are not the layout above or
/// hold no sha256).
[[nodiscard]] std::optional<UvWheelRecord> parse_uv_wheel_pointer(std::string_view bytes);

}  // namespace bootstrap::pyenv
