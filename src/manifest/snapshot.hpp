#pragma once
// Taking a snapshot: packages read straight from `*.dist-info` (no pip or uv subprocess), plus
// interpreter, torch, host and build-environment facts.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::manifest {

struct SnapshotRequest {
    fs::path venv;
    pyenv::InterpreterFacts python;  // from pyenv::venv_facts
    exec::EnvMap env;                // the caller's environment (build-relevant vars, PATH for tools)
    std::string label;
    std::string recipe_name;
    std::string recipe_digest;
    /// Host facts to record as given instead of probing (tests, or a caller that has them).
    std::optional<Host> host;
};

/// The build-relevant environment variables recorded in manifests (TORCH_CUDA_ARCH_LIST,
/// NVTE_CUDA_ARCHS, CMAKE_CUDA_ARCHITECTURES, MAX_JOBS, CUDA_HOME, CC, CXX, ...).
[[nodiscard]] const std::vector<std::string>& build_env_names();

/// One installed distribution as a snapshot records it (read now, no cache).
[[nodiscard]] Result<Package> read_package(const pyenv::Distribution& dist);

/// The origin a dist-info states: `direct_url_json` is the content of its PEP 610
/// `direct_url.json` ("" when there is none), `installer` its INSTALLER. Without the file a
/// uv/pip install is "index" (the engine adds which index), anything else "unknown". A URL's
/// credentials are redacted.
[[nodiscard]] Origin parse_origin(std::string_view direct_url_json, std::string_view installer);

/// torch's version, CUDA version and C++ ABI flag, read from the files of the `torch` package
/// under `site_packages` without importing it.
[[nodiscard]] Torch read_torch(const fs::path& site_packages);

/// Snapshot the venv. Host facts that need a subprocess (gcc, nvcc) are cached under
/// `<venv>/.bootstrap/host.facts`, keyed on the tools' stat, and each package's RECORD digest,
/// WHEEL tags and origin under `<venv>/.bootstrap/packages.cache`, keyed on its RECORD's stat,
/// so a repeated snapshot spawns nothing and reads little. Starts no Python. A broken dist-info
/// (no METADATA, a METADATA or RECORD that is not a regular file or is over 64 MiB) is listed
/// with Package::broken set, under the name and version of its directory.
[[nodiscard]] Result<Manifest> take_snapshot(const SnapshotRequest& request);

}  // namespace bootstrap::manifest
