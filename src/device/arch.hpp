#pragma once
// CUDA compute capabilities as values: parsing ("9.0", "sm_90"), the TORCH_CUDA_ARCH_LIST grammar
// of torch's extension builder, the strings derived for build systems, which arch a build targets
// (detected, given with --arch, or the recipe's fallback) and which compiled code runs where.
//
// Compatibility rules (CUDA programming guide, "binary compatibility"):
//   SASS (cubin) sm_XY runs on a device X.Z with Z >= Y (same major only);
//   PTX compute_XY is JIT-compiled by the driver on any device >= X.Y;
//   an 'a' (arch-specific) target runs only on exactly that arch;
//   an 'f' (family-specific) target runs within its major, like SASS.

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::device {

struct Arch {
    int major = 0;
    int minor = 0;
    char suffix = 0;  // 0, 'a' (arch-specific) or 'f' (family-specific)

    /// "9.0", "9.0a".
    [[nodiscard]] std::string dotted() const;
    /// "90", "90a" (CMake / NVTE / sm_ numbering).
    [[nodiscard]] std::string digits() const;
    friend bool operator==(const Arch&, const Arch&) = default;
    friend auto operator<=>(const Arch&, const Arch&) = default;
};

/// A compute capability as a user or a tool writes it: "9.0", "9.0a", "90", "sm_90", "compute_90a".
/// Fails (usage) naming the text and the accepted forms.
[[nodiscard]] Result<Arch> parse_arch(std::string_view text);

/// One item of TORCH_CUDA_ARCH_LIST: an arch, optionally with "+PTX".
struct ArchListEntry {
    Arch arch;
    bool ptx = false;
    /// "9.0", "9.0+PTX", "9.0a".
    [[nodiscard]] std::string text() const;
    friend bool operator==(const ArchListEntry&, const ArchListEntry&) = default;
};

/// Parse TORCH_CUDA_ARCH_LIST as torch's extension builder reads it: items separated by ';' or
/// spaces, each `X.Y`, `X.Ya`, either with `+PTX`, or a name (Hopper, Ampere, Ada, ...) expanded
/// with torch's table. Commas, empty items, lowercase "+ptx" and unknown names fail (usage) with
/// a message that says what to write instead.
[[nodiscard]] Result<std::vector<ArchListEntry>> parse_torch_arch_list(std::string_view list);

/// Entries joined with ';'.
[[nodiscard]] std::string format_torch_arch_list(const std::vector<ArchListEntry>& entries);

/// The named arches of torch.utils.cpp_extension (name, expansion), longest names first.
[[nodiscard]] const std::vector<std::pair<std::string, std::string>>& torch_named_arches();

/// Strings a build step needs, derived from the target arches.
struct DerivedArchs {
    std::string arch;             // "9.0": the first arch given (GPU 0 when detected)
    std::string torch_arch_list;  // "9.0", "9.0+PTX", "8.9;9.0" (distinct, ascending)
    std::string nvte_archs;       // "90", "89;90"  (NVTE_CUDA_ARCHS)
    std::string cmake_archs;      // "90", "89;90"  (CMAKE_CUDA_ARCHITECTURES)
};

/// Derive the strings for `archs` (one per GPU, in device order; duplicates allowed). With `ptx`,
/// the highest arch also gets "+PTX" (as torch does for its own default list). Empty strings
/// for an empty input.
[[nodiscard]] DerivedArchs derive_archs(const std::vector<Arch>& archs, bool ptx);

enum class ArchSource { detected, given, fallback };
[[nodiscard]] std::string_view to_string(ArchSource source);

/// What the user asked for on the command line and in the recipe.
struct ArchRequest {
    std::optional<std::string> given;          // --arch 9.0
    bool no_device = false;                    // --no-device
    std::optional<std::string> fallback_arch;  // [device] fallback_arch
    bool ptx = false;                          // [device] ptx = true
    /// False when nothing was probed (`run`/`plan` with --arch): no "not confirmed" or
    /// "overrides" notice, since there is nothing to compare with.
    bool probed = true;
};

/// The arches a build targets and why.
struct ArchChoice {
    ArchSource source = ArchSource::detected;
    std::vector<Arch> archs;
    std::string origin;                // "probe 'driver'", "--arch 9.0", "[device] fallback_arch"
    std::vector<std::string> notices;  // loud lines for the plan: not detected, overridden
    DerivedArchs derived;
};

/// Decide the target arches: --arch wins (noting any detected arch it overrides, or that no GPU
/// confirms it, unless nothing was probed), then
/// --no-device with the recipe's fallback_arch, then the detected GPUs (`detected_by` names the
/// probe). Fails with not_found when there is nothing to build for, explaining both options;
/// with usage for --no-device without a fallback_arch or an unparsable arch.
[[nodiscard]] Result<ArchChoice> choose_archs(const std::vector<Arch>& detected, std::string_view detected_by,
                                              const ArchRequest& request);

/// The error for "a step needs {device.*} and there is no arch": names --arch and --no-device.
[[nodiscard]] Error no_arch_error(std::string_view why);

/// SASS built for `code` runs on `device` (rules in the header comment).
[[nodiscard]] bool sass_runs_on(const Arch& code, const Arch& device);
/// PTX built for `code` can be JIT-compiled on `device`.
[[nodiscard]] bool ptx_runs_on(const Arch& code, const Arch& device);

/// A compiled target: "sm_90" (SASS) or "compute_90" (PTX).
struct CudaTarget {
    Arch arch;
    bool ptx = false;
    [[nodiscard]] std::string text() const;
    [[nodiscard]] bool runs_on(const Arch& device) const {
        return ptx ? ptx_runs_on(arch, device) : sass_runs_on(arch, device);
    }
};

/// Parse torch._C._cuda_getArchFlags() ("sm_75 sm_90 compute_120", also ';' separated);
/// tokens that are not sm_/compute_ targets are skipped.
[[nodiscard]] std::vector<CudaTarget> parse_arch_flags(std::string_view flags);

/// torch's compiled targets include code that runs on `device`; else (usage) an error naming
/// torch's list and what would have been needed.
[[nodiscard]] Status check_torch_covers(const std::vector<std::string>& torch_arch_flags, const Arch& device);

/// "13.0" from `nvcc --version` output ("Cuda compilation tools, release 13.0, V13.0.88").
[[nodiscard]] Result<std::string> parse_nvcc_release(std::string_view nvcc_version_output);

/// nvcc's release equals torch.version.cuda (major.minor); else (usage) an error naming both.
/// An empty `torch_cuda` means a CPU-only torch, which is an error too.
[[nodiscard]] Status check_nvcc_matches_torch(std::string_view nvcc_release, std::string_view torch_cuda);

/// The virtual arches in `nvcc --list-gpu-arch` output (lines "compute_90"), ascending.
[[nodiscard]] std::vector<Arch> parse_nvcc_gpu_archs(std::string_view output);

/// Every entry's arch is one nvcc can compile for ('a'/'f' variants by their base arch);
/// else (usage) an error naming the entries and nvcc's list.
[[nodiscard]] Status check_archs_supported_by_nvcc(const std::vector<ArchListEntry>& entries,
                                                   const std::vector<Arch>& nvcc_archs);

}  // namespace bootstrap::device
