#pragma once
// Lockfiles: exact versions, the sha256 of each wheel, and its origin, made from a successful
// run; `run --locked` installs exactly that with hash checking and refuses drift.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

inline constexpr int k_lockfile_schema = 1;

struct LockedPackage {
    std::string name;     // normalised
    std::string version;
    std::string wheel;    // the wheel's file name on its index or in the artifact store; "" when
                          // no step installed it (seeded by venv creation: locked by version)
    std::string sha256;   // of the wheel file; "" when `wheel` is
    Origin origin;
};

struct Lockfile {
    int schema = k_lockfile_schema;
    std::string recipe_name;
    std::string recipe_digest;
    std::string python_version;
    std::string platform;
    std::map<std::string, LockedPackage> packages;
};

[[nodiscard]] std::string to_json(const Lockfile& lock);
[[nodiscard]] Result<Lockfile> load_lockfile(const fs::path& file);
[[nodiscard]] Status save_lockfile(const fs::path& file, const Lockfile& lock);

/// Requirement lines with hashes for the packages a step owns ("name==1.0 --hash=sha256:...").
/// Packages with a stored artifact are given by the artifact's path.
[[nodiscard]] std::string locked_requirements(const std::vector<const LockedPackage*>& packages,
                                              const std::map<std::string, fs::path>& artifact_paths);

/// Differences between a venv and its lock: "demo-core is 2.0.0, locked 1.0.0", "regex is not
/// locked", "wandb is locked but not installed". Empty when they match.
[[nodiscard]] std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv);

}  // namespace bootstrap::manifest
