#pragma once
// Host facts for manifests: glibc, the GLIBCXX level of the libstdc++ that loads, gcc, nvcc and
// the NVIDIA driver. gcc and nvcc need a subprocess and the GLIBCXX scan reads a ~2 MB library,
// so those three are cached in a small file keyed on each tool's path, size and mtime: a
// repeated snapshot spawns nothing.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

/// Probe the host. `env` supplies PATH and CUDA_HOME (where gcc and nvcc are looked for) and is
/// the base of the children's environment. With a non-empty `cache_file`, cached answers are
/// used while its stamp matches, else the file is rewritten atomically (a failed write only
/// costs speed). A missing tool is "", not an error; only an interrupt fails.
[[nodiscard]] Result<Host> probe_host(const exec::EnvMap& env, const fs::path& cache_file);

/// "13.0" from `nvcc --version` ("Cuda compilation tools, release 13.0, V13.0.48"); "" if absent.
[[nodiscard]] std::string parse_nvcc_version(std::string_view output);

/// "550.54.15" from /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
/// Module  550.54.15  Tue Mar ..."); "" if absent.
[[nodiscard]] std::string parse_driver_version(std::string_view text);

/// "3.4.30": the highest `GLIBCXX_3.4[.N]` version string in a library's bytes; "" if none.
[[nodiscard]] std::string highest_glibcxx(std::string_view bytes);

}  // namespace bootstrap::manifest
