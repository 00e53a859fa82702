#pragma once
// Taking a snapshot: packages read straight from `*.dist-info` (no pip or uv subprocess), plus
// interpreter, torch, host and build-environment facts.

#include <filesystem>
#include <map>
#include <string>

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
};

/// The build-relevant environment variables recorded in manifests (TORCH_CUDA_ARCH_LIST,
/// NVTE_CUDA_ARCHS, CMAKE_CUDA_ARCHITECTURES, MAX_JOBS, CUDA_HOME, CC, CXX, ...).
[[nodiscard]] const std::vector<std::string>& build_env_names();

/// Snapshot the venv. Host facts that need a subprocess (gcc, nvcc) are cached under
/// `<venv>/.bootstrap/host.facts`, keyed on the tools' stat, so repeated snapshots stay fast.
[[nodiscard]] Result<Manifest> take_snapshot(const SnapshotRequest& request);

}  // namespace bootstrap::manifest
