#pragma once
// Comparing two manifests: what was added, removed, upgraded, downgraded or reinstalled (same
// version, different files), plus changes of the interpreter, torch and host facts.

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
