#pragma once
// Comparing two manifests: what was added, removed, upgraded, downgraded or reinstalled (same
// version, different files), plus changes of the interpreter, torch and host facts.

#include <map>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

struct PackageChange {
    enum class Kind { added, removed, upgraded, downgraded, reinstalled };
    Kind kind;
    std::string name;
    std::string from;  // version before ("" when added)
    std::string to;    // version after ("" when removed)
};
[[nodiscard]] const char* to_string(PackageChange::Kind kind);

struct FactChange {
    std::string field;  // "python.version", "torch.cuda", "host.nvcc", "build_env.MAX_JOBS", ...
    std::string from;
    std::string to;
};

struct ManifestDiff {
    std::vector<PackageChange> packages;  // sorted by name
    std::vector<FactChange> facts;
    [[nodiscard]] bool empty() const { return packages.empty() && facts.empty(); }
    /// "2 added, 1 upgraded, 1 reinstalled, 1 fact changed" (or "no change").
    [[nodiscard]] std::string summary() const;
};

/// The facts two manifests are compared on, flat: "python.version", "torch.cuda", "host.glibc",
/// ..., "build_env.TORCH_CUDA_ARCH_LIST", "device.cuda_archs" (not the venv path, the label or
/// the run block).
[[nodiscard]] std::map<std::string, std::string> environment_facts(const Manifest& m);

/// Do two installs of one version hold the same files? Within one venv, any RECORD difference
/// counts. Across venvs the console scripts' shebangs name each venv's own interpreter, so the
/// portable digests (without those rows) are compared when both manifests have them; older
/// manifests without them fall back to the exact digest.
[[nodiscard]] bool same_files(const Package& a, const Package& b, bool across_venvs);

/// Same-version packages are "reinstalled" when their RECORD digests differ; between manifests
/// of two venvs (different `venv` paths) the digests without the venv's scripts are compared
/// (Package::record_sha256_portable), when both manifests have them.
[[nodiscard]] ManifestDiff diff(const Manifest& before, const Manifest& after);

/// Human-readable lines, ASCII markers: "+ regex 2024.1.0" (added), "- foo 1.0" (removed),
/// "^ demo-core 1.0.0 -> 2.0.0" (upgraded), "v demo-core 2.0.0 -> 1.0.0" (downgraded),
/// "~ torch 2.11.0 (reinstalled: files differ)", then facts: "python.version: 3.11.7 -> 3.12.1".
[[nodiscard]] std::string format_diff(const ManifestDiff& d);
/// JSON document for `diff --json`.
[[nodiscard]] std::string diff_json(const ManifestDiff& d);

}  // namespace bootstrap::manifest
