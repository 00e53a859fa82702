#pragma once
// Recipe + facts -> Plan: every step fully expanded (argv, cwd, environment changes) with a key
// that digests everything affecting its result: its own inputs and the facts it reads, never
// the text of earlier steps.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/facts.hpp"
#include "exec/environment.hpp"
#include "manifest/lockfile.hpp"
#include "pyenv/installer.hpp"
#include "pyenv/interpreter.hpp"
#include "recipe/recipe.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

struct PlanOptions {
    std::optional<fs::path> venv;  // --venv: overrides [venv] path
    bool recreate = false;         // --recreate: replace a venv made with another Python
    bool dry_run = false;          // `plan`: write nothing; show a missing installer by name
    /// `run --locked`: install steps install exactly the lock's pins for them, with hashes.
    std::optional<manifest::Lockfile> locked;
    /// `--arch 9.0`: the CUDA arch `{device.*}` placeholders stand for (wins over detection).
    std::optional<std::string> arch;
    /// `--no-device`: probe nothing; `{device.*}` uses the recipe's [device] fallback_arch.
    bool no_device = false;
};

struct Plan {
    const recipe::Recipe* recipe = nullptr;
    fs::path venv;
    fs::path venv_python;
    std::shared_ptr<const pyenv::Installer> installer;
    pyenv::NetworkOptions net;
    exec::EnvMap base_env;  // pass-through env with [env] set/unset applied
    std::vector<steps::ResolvedStep> steps;
    std::vector<std::string> notes;  // plan-level remarks (e.g. sync after install warning)
    std::vector<std::string> device_notices;  // the loud ones among `notes` (`run` shows them)
    /// What `{device.*}` stood for (the run's manifests keep it): cuda_archs, cuda_archs_from,
    /// gpus, driver_version (when known). Empty when no step uses a device placeholder (then
    /// nothing was probed).
    std::map<std::string, std::string> device_facts;

    /// "9.0 (probe 'driver')": the arches and why; "" when no step used `{device.*}`.
    [[nodiscard]] std::string device_origin() const;
};

/// Gather facts: environment, cpus, and the venv interpreter when `venv` holds one.
[[nodiscard]] Result<Facts> gather_facts(const fs::path& venv, bool update_caches);

/// Resolve the venv path alone (expanding [vars]/[env]); relative paths are taken from the
/// recipe file's directory.
[[nodiscard]] Result<fs::path> resolve_venv_path(const recipe::Recipe& recipe,
                                                 const PlanOptions& options, const Facts& facts);

/// Build the whole plan. Errors: an env var without value or default (invalid_recipe, naming
/// the variable and the location), a missing installer (not_found), a venv with the wrong
/// Python without --recreate (usage), a `{device.*}` placeholder with no arch to build for
/// (not_found, naming --arch and --no-device). Devices are probed only when (and the first
/// time) a `{device.*}` placeholder is expanded.
[[nodiscard]] Result<Plan> make_plan(const recipe::Recipe& recipe, const PlanOptions& options,
                                     const Facts& facts);

}  // namespace bootstrap::engine
