#pragma once
// A manifest: what a venv holds, exactly — every installed distribution with its origin and the
// digest of its RECORD, plus the interpreter, torch, host and build-environment facts. Written
// as deterministic JSON (sorted keys, no timestamps outside the `run` block).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::manifest {

namespace fs = std::filesystem;

inline constexpr int k_manifest_schema = 1;

/// Where a distribution came from: PEP 610 `direct_url.json` when present, else the index the
/// installing step used (annotated by the engine), else unknown.
/// Where an installed distribution came from (PEP 610's direct_url.json, or an index).
enum class OriginKind { index, url, vcs, local, editable, unknown };

/// "index", "url", "vcs", "local", "editable", "unknown": the JSON (manifests, lockfiles,
/// caches) and what is shown.
[[nodiscard]] const char* to_string(OriginKind kind);
/// The kind a JSON string names; anything else (a newer bootstrap's kind) is unknown.
[[nodiscard]] OriginKind parse_origin_kind(std::string_view text);

struct Origin {
    OriginKind kind = OriginKind::unknown;
    std::string url;                      // archive / vcs / file URL (direct_url.json), "" for index
    std::string vcs;                      // "git", ... (vcs only)
    std::string commit;                   // vcs commit id
    std::vector<std::string> index_urls;  // index origins: --index-url first, then extras
    std::string step;                     // id of the recipe step that installed it, if known
    std::string artifact_sha256;          // wheel kept in the artifact store (local/built packages)
    std::string archive_hash;             // direct_url.json archive_info hash, "sha256=<hex>", if given
    friend bool operator==(const Origin&, const Origin&) = default;
};

struct Package {
    std::string name;          // PEP 503 normalised (the map key)
    std::string display_name;  // as written in METADATA
    std::string version;
    std::string installer;      // INSTALLER file ("uv", "pip"), "" if none
    bool requested = false;     // REQUESTED present
    std::string wheel_tag;      // WHEEL "Tag:" values joined with ",", e.g. "py3-none-any"
    std::string record_sha256;  // sha256 of RECORD (pyenv::record_digest): exactly these files
    /// sha256 of RECORD less the venv's scripts (pyenv::portable_record_text_digest), whose
    /// shebangs name the venv: compares packages across venvs. "" in manifests older than it.
    std::string record_sha256_portable;
    Origin origin;
    /// Why the install is unusable, "" when it is whole: "METADATA missing" (an install cut
    /// short, by a full disk say), "RECORD is not a regular file (a FIFO)". Name and version
    /// then come from the dist-info directory's name. Written only when set, so manifests
    /// from before it read as whole.
    std::string broken;
    friend bool operator==(const Package&, const Package&) = default;
};

struct Interpreter {
    std::string version;         // "3.11.7"
    std::string implementation;  // "cpython"
    std::string ext_suffix;
    std::string soabi;
    std::string platform;
    friend bool operator==(const Interpreter&, const Interpreter&) = default;
};

struct Torch {
    std::string version;    // torch/version.py __version__
    std::string cuda;       // torch/version.py cuda ("13.0"), "" for CPU builds
    std::string cxx11_abi;  // "1"/"0" where readable, else ""
    friend bool operator==(const Torch&, const Torch&) = default;
};

struct Host {
    std::string glibc;    // "2.36"
    std::string glibcxx;  // highest GLIBCXX_x.y.z of the libstdc++ that loads
    std::string gcc;      // "12.2.0", "" if absent
    std::string nvcc;     // "13.0", "" if absent
    std::string driver;   // CUDA driver version if any, else ""
    friend bool operator==(const Host&, const Host&) = default;
};

/// Only in history entries written by `run`: the one block that may hold times.
struct RunInfo {
    std::string run_id;
    std::string phase;  // "before" / "after" / "rollback"
    std::string time;   // ISO 8601 UTC
    bool ok = true;
    friend bool operator==(const RunInfo&, const RunInfo&) = default;
};

struct Manifest {
    int schema = k_manifest_schema;
    std::string label;
    std::string venv;                         // absolute path
    std::map<std::string, Package> packages;  // by normalised name
    Interpreter python;
    std::optional<Torch> torch;
    Host host;
    std::map<std::string, std::string> build_env;  // TORCH_CUDA_ARCH_LIST and friends, when set
    std::string recipe_name;
    std::string recipe_digest;
    std::map<std::string, std::string> device;  // a run's {device.*} facts: cuda_archs, gpus, ...
    std::optional<RunInfo> run;
};

/// Serialise deterministically: sorted keys, 2-space indent, trailing newline.
[[nodiscard]] std::string to_json(const Manifest& m);

/// Parse; `source` (a path) names the file in errors. A newer schema or a corrupt file is a
/// clear error: "SOURCE: manifest schema 2 is newer than this bootstrap understands (1); upgrade
/// bootstrap" / "SOURCE: not a valid manifest: <what>".
[[nodiscard]] Result<Manifest> from_json(std::string_view text, const std::string& source);

/// Load a manifest file.
[[nodiscard]] Result<Manifest> load_manifest(const fs::path& file);

/// Write a manifest file atomically.
[[nodiscard]] Status save_manifest(const fs::path& file, const Manifest& m);

}  // namespace bootstrap::manifest
