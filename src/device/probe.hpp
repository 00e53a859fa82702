#pragma once
// Device probes: four independent answers to "which GPUs are here, with which compute
// capability". None of them is trusted alone (an nvidia-smi once said 8.9 on an H200, SEED P1):
// the recipe's `[device] probes` order decides which answer counts, the others are cross-checks,
// and every disagreement becomes a warning that shows both values.
//
//   driver      dlopen(libcuda.so.1): cuInit, cuDriverGetVersion, cuDeviceGetCount, per device
//               cuDeviceGetName and cuDeviceGetAttribute 75/76 (compute capability major/minor)
//   nvml        dlopen(libnvidia-ml.so.1): nvmlInit_v2, names, nvmlDeviceGetCudaComputeCapability
//   nvidia-smi  --query-gpu=name,compute_cap,driver_version; an nvidia-smi that does not know
//               compute_cap ("not a valid field", exit 2) answers "unknown", never an error
//   torch       the venv's python: torch.version.cuda, torch._C._cuda_getArchFlags() (readable
//               without a GPU), and per device get_device_properties when CUDA is available
//
// A probe never fails: it returns an answer that is `available` or says why not.
// Environment overrides (for tests and unusual installs): BOOTSTRAP_LIBCUDA and BOOTSTRAP_LIBNVML
// name the library to dlopen instead of libcuda.so.1 / libnvidia-ml.so.1.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "device/arch.hpp"
#include "exec/environment.hpp"

namespace bootstrap::device {

namespace fs = std::filesystem;

struct GpuInfo {
    int index = 0;
    std::string name;  // "NVIDIA H200"; may be empty (nvidia-smi without the field)
    int major = 0;
    int minor = 0;
    [[nodiscard]] Arch arch() const { return Arch{major, minor, 0}; }
};

struct ProbeAnswer {
    std::string probe;               // "driver", "nvml", "nvidia-smi", "torch"
    bool available = false;          // the probe ran and answered (it may still see no GPU)
    std::string unavailable_reason;  // when not available: why, in one line
    std::vector<GpuInfo> gpus;
    std::string driver_version;                 // "580.65.06" (nvml, nvidia-smi)
    std::string cuda_version;                   // driver: the CUDA version it supports ("13.0");
                                                // torch: torch.version.cuda ("13.0", empty for a CPU build)
    std::string torch_version;                  // torch.__version__
    std::vector<std::string> torch_arch_flags;  // "sm_90", "compute_120", from _cuda_getArchFlags
    std::vector<std::string> notes;             // facts worth showing ("CUDA not available")
    std::string library;                        // what was dlopened / executed
    /// What the probed program printed besides its answer (torch: Python warnings such as
    /// pynvml's deprecation, libtorch's lines on stderr), deduplicated, at most 20. Kept out of
    /// the answer; `notes` says how many, and probe_torch logs them at info (`-v`).
    std::vector<std::string> warnings;
};

/// The probes bootstrap knows, in the default order (torch first: it is what the build uses).
[[nodiscard]] const std::vector<std::string>& known_probes();

/// The library path for the driver probe: $BOOTSTRAP_LIBCUDA in `env`, else "libcuda.so.1".
[[nodiscard]] std::string libcuda_path(const exec::EnvMap& env);
/// The library path for the NVML probe: $BOOTSTRAP_LIBNVML in `env`, else "libnvidia-ml.so.1".
[[nodiscard]] std::string libnvml_path(const exec::EnvMap& env);

/// The CUDA driver API through dlopen; dlclosed before returning.
[[nodiscard]] ProbeAnswer probe_driver(const std::string& libcuda = "libcuda.so.1");

/// NVML through dlopen; nvmlShutdown and dlclose before returning.
[[nodiscard]] ProbeAnswer probe_nvml(const std::string& libnvml = "libnvidia-ml.so.1");

/// `nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader`, found on
/// env's PATH and run with `env`.
[[nodiscard]] ProbeAnswer probe_nvidia_smi(const exec::EnvMap& env);

/// Parse nvidia-smi's CSV lines ("NVIDIA H200, 9.0, 580.65.06"); the answer for `output` and
/// exit code as probe_nvidia_smi would give it.
[[nodiscard]] ProbeAnswer parse_nvidia_smi(std::string_view output, int exit_code);

/// torch as the venv's interpreter (`python`) sees it, run with `env`.
[[nodiscard]] ProbeAnswer probe_torch(const fs::path& python, const exec::EnvMap& env);

/// Parse the key=value lines the torch probe script prints; `warning=` lines and lines that are
/// not the script's (stderr shares the pipe) go to `warnings`, never into the answer.
[[nodiscard]] ProbeAnswer parse_torch_probe(std::string_view output);

/// What torch's answer depends on outside the venv, as text lines for a cache key: the driver's
/// and NVML's answers in `native` (CUDA and driver versions, each GPU's capability and name, or
/// why unavailable) and the variables of `env` torch reads to find CUDA and number the GPUs or
/// that decide which torch is imported (CUDA_*, NVIDIA_*, TORCH_*, PYTORCH_*, PYTHON*,
/// LD_LIBRARY_PATH, LD_PRELOAD; secret-named values as their sha256).
[[nodiscard]] std::string torch_view(const std::vector<ProbeAnswer>& native, const exec::EnvMap& env);

/// How `detect` asks torch: (the venv's python, env, torch_view of the live driver and NVML
/// answers). An empty function: probe_torch. The engine passes one that caches the answer.
using TorchProbe = std::function<ProbeAnswer(const fs::path& python, const exec::EnvMap& env, const std::string& view)>;

struct DeviceReport {
    std::vector<std::string> order;     // the probes consulted, in precedence order
    std::vector<ProbeAnswer> answers;   // every probe run: `order` first, then cross-checks
    std::optional<size_t> chosen;       // index into answers: first in `order` that sees a GPU
    std::vector<std::string> warnings;  // disagreements (both values), unknown probe names

    [[nodiscard]] const ProbeAnswer* chosen_answer() const { return chosen ? &answers[*chosen] : nullptr; }
    [[nodiscard]] const ProbeAnswer* find(std::string_view probe) const;
    /// The chosen answer's arches in device order (empty when no probe saw a GPU).
    [[nodiscard]] std::vector<Arch> archs() const;
};

/// Run every known probe (those not in `order` as cross-checks only; torch after the others,
/// through `torch` when given) and pick the answer of the first probe in `order` (default:
/// known_probes()) that sees a GPU. `venv` empty: the torch probe is unavailable. Fails only when
/// interrupted or `order` names an unknown probe (usage).
[[nodiscard]] Result<DeviceReport> detect(const std::vector<std::string>& order, const fs::path& venv,
                                          const exec::EnvMap& env, const TorchProbe& torch = {});

/// The warnings `detect` adds: each available answer whose GPUs (count or compute
/// capabilities) differ from the chosen one's, showing both.
[[nodiscard]] std::vector<std::string> disagreements(const std::vector<ProbeAnswer>& answers, size_t chosen);

}  // namespace bootstrap::device
