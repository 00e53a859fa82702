#pragma once
// "Built for": the CUDA arch a venv (an image's venv) was built for, against the GPUs of the node
// it runs on. An image is built on a machine without a GPU, for the arch given with --arch; on
// the node nothing else says that an H200 build landed on an A100 until a kernel fails to load.
//
// Both sides come in as values (the CLI reads the history and probes the device): the arch the
// newest history manifest recorded (`device.cuda_archs`, TORCH_CUDA_ARCH_LIST as the run derived
// it, and `device.cuda_archs_from`, where it came from), and the GPUs a probe saw or --arch.
// Without a recorded arch the built extensions' fatbins tell what the venv carries.
//
// Which code runs where is inspect::cuda_code_runs_on: SASS sm_XY on X.Z with Z >= Y, an 'a'
// target only on exactly X.Y, PTX compute_XY (JIT) on any device >= X.Y.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::doctor {

/// One compiled target of a TORCH_CUDA_ARCH_LIST item: "9.0" is SASS sm_90, "9.0+PTX" adds PTX
/// compute_90, "9.0a" is SASS sm_90a.
struct CodeTarget {
    int major = 0;
    int minor = 0;
    char suffix = 0;  // 0, 'a' or 'f'
    bool ptx = false;
    /// "sm_90", "sm_90a", "compute_90".
    [[nodiscard]] std::string text() const;
    /// Code for this target runs on a device of compute capability major.minor.
    [[nodiscard]] bool runs_on(int device_major, int device_minor) const;
    friend bool operator==(const CodeTarget&, const CodeTarget&) = default;
};

/// The targets of a numeric TORCH_CUDA_ARCH_LIST as bootstrap records it ("8.9;9.0+PTX",
/// spaces also separate). Fails (usage) naming the item that is not `X.Y[a|f][+PTX]`.
[[nodiscard]] Result<std::vector<CodeTarget>> parse_recorded_archs(std::string_view list);

/// The arch a run recorded in the venv's history.
struct RecordedArch {
    std::string archs;               // device.cuda_archs: "9.0", "8.9;9.0+PTX"
    std::string origin;              // device.cuda_archs_from: "--arch 9.0", "probe 'driver'", ...
    std::string gpus;                // device.gpus: what that run saw; "" when it probed nothing
    std::filesystem::path manifest;  // the history entry that recorded it
};

/// A GPU of the node doctor runs on.
struct NodeGpu {
    std::string name;  // "NVIDIA A100-SXM4-80GB"; may be empty (--arch, an old nvidia-smi)
    int major = 0;
    int minor = 0;
};

/// The node's side: the GPUs a probe saw, or the arch given with --arch.
struct NodeDevice {
    std::vector<NodeGpu> gpus;       // empty: no GPU detected
    std::string origin;              // "probe 'nvidia-smi'", "--arch 8.0"
    std::vector<std::string> notes;  // why no probe saw a GPU, one line per probe
};

}  // namespace bootstrap::doctor
