#pragma once
// The CUDA toolchain a build will use, asked directly: nvcc's release and the arches it can
// compile for, and whether the venv's torch extension builder accepts a TORCH_CUDA_ARCH_LIST.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "device/arch.hpp"
#include "exec/environment.hpp"

namespace bootstrap::device {

namespace fs = std::filesystem;

/// The nvcc torch's extension builder would use: $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, nvcc
/// on env's PATH, /usr/local/cuda/bin/nvcc; the first that exists. Empty path when none does.
[[nodiscard]] fs::path find_nvcc(const exec::EnvMap& env);

/// "13.0", from `nvcc --version` (process when nvcc fails or prints no release).
[[nodiscard]] Result<std::string> nvcc_release(const fs::path& nvcc, const exec::EnvMap& env);

/// The virtual arches from `nvcc --list-gpu-arch`, ascending.
[[nodiscard]] Result<std::vector<Arch>> nvcc_gpu_archs(const fs::path& nvcc, const exec::EnvMap& env);

/// Ask the venv's torch (torch.utils.cpp_extension._get_cuda_arch_flags, with
/// TORCH_CUDA_ARCH_LIST=`list`) whether it accepts the list; its -gencode flags when it does.
/// Fails with usage and torch's own message when it rejects the list, with process when torch
/// (or setuptools, which cpp_extension imports) cannot be imported.
[[nodiscard]] Result<std::vector<std::string>> torch_arch_flags_for(const fs::path& python, std::string_view list,
                                                                    const exec::EnvMap& env);

}  // namespace bootstrap::device
