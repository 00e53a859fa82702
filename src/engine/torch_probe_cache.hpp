#pragma once
// The device probe's torch answer, kept in the venv so a re-run with the same torch starts no
// Python: importing torch costs seconds and hundreds of MB, and a no-op run must cost neither.
//
// `<venv>/.bootstrap/torch-probe.json` holds the answer and the key it was asked under
// (torch_probe_key): torch's RECORD stamp (a reinstall, upgrade or removal rewrites it), the
// nvidia-* distributions' RECORD stamps (the CUDA runtime torch loads to see the GPUs), the
// interpreter's identity, and device::torch_view: the driver's and NVML's live answers (a driver
// upgrade, other GPUs, another node sharing the venv) and the environment torch reads
// (CUDA_VISIBLE_DEVICES, ...). Any difference is a miss. Only available answers are kept: a torch
// that fails to import may be fixed by installing something else, which its key cannot see.

#include <filesystem>
#include <optional>
#include <string>

#include "device/probe.hpp"
#include "exec/environment.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

/// `<venv>/.bootstrap/torch-probe.json`.
[[nodiscard]] fs::path torch_probe_cache_path(const fs::path& venv);

/// The key text for the venv's torch (one line per input, see the header comment), or nullopt
/// when no `torch-*.dist-info/RECORD` is in site-packages (nothing would notice a change).
[[nodiscard]] std::optional<std::string> torch_probe_key(const fs::path& venv, const pyenv::InterpreterFacts& python,
                                                         const std::string& view);

/// device::probe_torch(python, env), answered from the cache when its key still holds; a fresh
/// available answer is written back (atomically) when `write`. Without `python` facts or a
/// torch RECORD the probe runs every time.
[[nodiscard]] device::ProbeAnswer cached_probe_torch(const fs::path& venv, const pyenv::InterpreterFacts* python,
                                                     const fs::path& interpreter, const exec::EnvMap& env,
                                                     const std::string& view, bool write);

}  // namespace bootstrap::engine
