#pragma once
// Lockfiles: exact versions, the sha256 of each wheel, and its origin, made from the venv a run
// left; `run --locked` installs exactly that with hash checking and refuses drift.
//
// Schema 2 also says, per recipe step, whether the lock covers it (it had passed when the lock
// was made) and, for an install step, every locked package its requirements need (their
// closure in the locked venv): a locked run installs a step's whole closure, so each step's
// verify holds in an empty venv, whichever later step reinstalled or upgraded a dependency.

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/key.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

// v2: per-step coverage and closures ("steps"). A v1 lock credited each package only to the
// last step that installed it, which cannot rebuild a venv from nothing.
inline constexpr int k_lockfile_schema = 2;

struct LockedPackage {
    std::string name;  // normalised
    std::string version;
    std::string wheel;   // the wheel's file name on its index or in the artifact store; "" when
                         // no step installed it (seeded by venv creation: locked by version)
    std::string sha256;  // of the wheel file; "" when `wheel` is
    Origin origin;
    // The fields below have `{}` so an aggregate initialiser may stop at `origin`
    // (-Wmissing-field-initializers).
    std::string url{};    // the wheel's URL on its index, credentials stripped; "" when unknown
    std::string index{};  // the index it was found on (as recorded: credentials `***`); "" when none
    /// What vouches for `sha256` (lockfile/hash_check.hpp): "uv-cache" or "artifact-store" (bytes
    /// at hand hashed to it), "index" (only the index's page says so); "" in older lockfiles.
    std::string hash_source{};
    /// A wheel the lock names by path: a pylock's `path` (made absolute against the lock's
    /// directory), or the artifact store's file when bootstrap wrote the lock. Not in the JSON.
    std::string path{};
    /// A pylock's `marker` for the package: installed only where it holds. Not in the JSON.
    std::string marker{};
    /// sha256 of the other wheels a pylock lists for it (one per platform, say): the installer
    /// may take any of them. Not in the JSON.
    std::vector<std::string> more_sha256{};
    /// Installed from an sdist (the index had no wheel of it for this venv): its file name;
    /// `sha256` and `url` are then the sdist's (the installer checks its bytes, then builds it)
    /// and `wheel` is "". "" for a wheel.
    std::string sdist{};
    /// The wheel built from that sdist when the lock was made (k_built_note says what it is
    /// worth): its file name, and its sha256 when uv's cache kept it.
    std::string built_wheel{};
    std::string built_sha256{};
    /// The build-cache key the wheel was built under (steps/source_build.hpp), "" when uv built
    /// it: a locked run on a node whose key is the same installs that cache entry.
    std::string built_key{};
    /// Where the lock names the package ("FILE:LINE"), for messages; "" when unknown. Not written.
    std::string at{};
};

/// What a lock says of `built_wheel`/`built_sha256`.
inline constexpr const char* k_built_note =
    "the wheel built from the sdist when this lock was made; a rebuilt compiled wheel is not "
    "byte-identical (another machine, compiler or build dependency), so a locked run checks the "
    "sdist's sha256 and the rebuilt wheel's name and version, not this digest";

/// What the lock says of one recipe step.
struct LockedStep {
    bool covered = true;  // it had passed when the lock was made
    bool optional = false;
    std::string why;  // not covered: "not run", "failed on 2026-12-01: ...", ...
    /// Install steps: the locked packages its requirements need (normalised names, sorted).
    std::vector<std::string> packages;
    /// What the step meant when the lock was made (recipe/meaning.hpp); empty in older locks.
    std::vector<core::KeyInput> inputs{};
};

struct Lockfile {
    int schema = k_lockfile_schema;
    fs::path file;  // where it was read from (for messages; not written)
    std::string recipe_name;
    std::string recipe_digest;
    /// The recipe's meaning beyond its steps' (recipe/meaning.hpp): a lock that records it is
    /// stale only when what its steps do changed (engine/lock_meaning.hpp); an older one, when
    /// any byte of the recipe did.
    std::vector<core::KeyInput> recipe_inputs{};
    std::string python_version;
    std::string platform;
    std::map<std::string, LockedPackage> packages;
    std::map<std::string, LockedStep> steps;  // by step id (schema >= 2)
    /// A pylock.toml another tool wrote (its `created-by`): no recipe digest, no steps; a locked
    /// run gives every package to the recipe's first install step (engine/locked_plan.hpp).
    /// "" for bootstrap's own lockfiles, JSON or pylock.
    std::string foreign_tool{};
    /// PEP 751 `requires-python` and `environments` (bootstrap writes the interpreter's minor
    /// version and platform); a locked run checks them against the venv. Not in the JSON.
    std::string requires_python{};
    std::vector<std::string> environments{};
};

[[nodiscard]] std::string to_json(const Lockfile& lock);
[[nodiscard]] Result<Lockfile> load_lockfile(const fs::path& file);
[[nodiscard]] Status save_lockfile(const fs::path& file, const Lockfile& lock);

/// Requirement lines with hashes for the packages a step owns ("name==1.0 --hash=sha256:...",
/// one --hash per wheel the lock allows). Packages in `artifact_paths` (a stored artifact, a
/// pylock's wheel by path) are given by that path. Written only from checked values
/// (pyenv::hashed_requirement_line): an error naming the package when one cannot be.
[[nodiscard]] Result<std::string> locked_requirements(const std::vector<const LockedPackage*>& packages,
                                                      const std::map<std::string, fs::path>& artifact_paths);

/// Differences between a venv and its lock: "demo-core is 2.0.0, locked 1.0.0", "regex is not
/// locked", "wandb is locked but not installed". Empty when they match. A locked package
/// without a version (a pylock's source tree) is checked by name only, and one with a marker
/// only when it is installed.
[[nodiscard]] std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv);
/// The same, where the packages named in `not_required` (those only the steps a `--locked` run
/// leaves out lock: engine/locked_selection.hpp) need not be installed; one that is installed
/// must still have its locked version.
[[nodiscard]] std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv,
                                                  const std::set<std::string>& not_required);

}  // namespace bootstrap::manifest
