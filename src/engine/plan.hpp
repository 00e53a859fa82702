#pragma once
// Recipe + facts -> Plan: every step fully expanded (argv, cwd, environment changes) with a key
// that digests everything affecting its result: its own inputs and the facts it reads, never
// the text of earlier steps.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
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

/// Which steps a run acts on: `--from ID`, `--only ID..`, `--skip ID..` (all steps by default).
struct StepSelection {
    std::optional<std::string> from;
    std::vector<std::string> only;
    std::vector<std::string> skip;

    /// Is step `i` of `ids` (the recipe's step ids, in order) selected?
    [[nodiscard]] bool includes(const std::vector<std::string>& ids, size_t i) const;
    /// Every id the selection names is a step of `ids`; else a usage error naming the option
    /// and the closest id.
    [[nodiscard]] Status check(const std::vector<std::string>& ids) const;
};

struct PlanOptions {
    std::optional<fs::path> venv;  // --venv: overrides [venv] path
    bool recreate = false;         // --recreate: replace a venv made with another Python
    bool dry_run = false;          // `plan`: write nothing; show a missing installer by name
    /// Keep what tools said of their versions in $BOOTSTRAP_HOME/tool-versions.json (`run`;
    /// pyenv/tool_version.hpp). Off, they are asked again by the next process.
    bool cache_tool_versions = false;
    /// `run --locked`: install steps install exactly the lock's pins for them, with hashes.
    std::optional<manifest::Lockfile> locked;
    /// `--arch 9.0`: the CUDA arch `{device.*}` placeholders stand for (wins over detection).
    std::optional<std::string> arch;
    /// `--no-device`: probe nothing; `{device.*}` uses the recipe's [device] fallback_arch.
    bool no_device = false;
    /// The steps a run acts on. The others are planned too (`plan` shows them), but their
    /// `{device.*}` values are left unknown: devices are probed only for a selected step.
    StepSelection selection;
    /// false: probe no device at all (`lock`, which runs nothing); a `{device.*}` value is then
    /// unknown unless --arch or --no-device answers it.
    bool probe_devices = true;
    /// `--retry-optional`: an optional step that failed for good runs again while its key holds.
    bool retry_optional = false;
    /// Pins two install steps disagree on (engine::pin_conflicts) are kept in Plan::pin_conflicts
    /// (`doctor --recipe` reports them) instead of failing the plan.
    bool collect_pin_conflicts = false;
    /// `--exact`: a run that passed removes the distributions no step accounts for
    /// (engine::unowned_extras), as `uv pip sync` would.
    bool exact = false;
    /// Check that the local files and directories steps read exist (steps::check_local_input);
    /// off for a plan of a recipe as another machine will see it (an image's build context).
    bool check_local_inputs = true;
    /// false: the plan is for another machine (an image's build), so this machine's interpreters
    /// are not asked whether they run (steps::PlanContext::this_machine).
    bool this_machine = true;
};

struct Plan {
    const recipe::Recipe* recipe = nullptr;
    fs::path venv;
    fs::path venv_python;
    std::shared_ptr<const pyenv::Installer> installer;
    pyenv::NetworkOptions net;
    exec::EnvMap base_env;  // pass-through env with [env] set/unset applied
    std::vector<steps::ResolvedStep> steps;
    std::vector<bool> selected;   // per step: the options' selection includes it
    bool retry_optional = false;  // PlanOptions::retry_optional
    /// --locked: each locked package's recorded indexes (its origin in this run's manifests).
    std::map<std::string, std::vector<std::string>> locked_indexes;
    /// --locked with locked steps left out (--skip/--only/--from): the locked packages only
    /// their closures hold, which the lock check does not require (engine/locked_selection.hpp).
    std::set<std::string> locked_left_out;
    std::vector<std::string> notes;    // plan-level remarks (e.g. sync after install warning)
    std::vector<std::string> notices;  // the loud ones among `notes` (`run` shows them)
    /// With PlanOptions::collect_pin_conflicts: pins two install steps disagree on.
    std::vector<Error> pin_conflicts;
    /// What `{device.*}` stood for (the run's manifests keep it): cuda_archs, cuda_archs_from,
    /// gpus, driver_version (when known). Empty when no step uses a device placeholder (then
    /// nothing was probed).
    std::map<std::string, std::string> device_facts;
    /// Every `{env.NAME}` the recipe read, and the [vars] values known (an image's build context
    /// passes the variables on and carries the directories: image/containerfile.hpp).
    std::map<std::string, EnvRead> env_read;
    std::map<std::string, std::string> vars;

    /// "9.0 (probe 'driver')": the arches and why; "" when no step used `{device.*}`.
    [[nodiscard]] std::string device_origin() const;
};

/// Gather facts: environment, cpus, and the venv interpreter when `venv` holds one.
[[nodiscard]] Result<Facts> gather_facts(const fs::path& venv, bool update_caches);

/// Resolve the venv path alone (expanding [vars]/[env]); relative paths are taken from the
/// recipe file's directory.
[[nodiscard]] Result<fs::path> resolve_venv_path(const recipe::Recipe& recipe, const PlanOptions& options,
                                                 const Facts& facts);

/// Build the whole plan. Errors: an env var without value or default (invalid_recipe, naming
/// the variable and the location), a missing installer (not_found), a venv with the wrong
/// Python without --recreate (usage), a `{device.*}` placeholder with no arch to build for
/// (not_found, naming --arch and --no-device). Devices are probed only when (and the first
/// time) a `{device.*}` placeholder is expanded.
[[nodiscard]] Result<Plan> make_plan(const recipe::Recipe& recipe, const PlanOptions& options, const Facts& facts);

}  // namespace bootstrap::engine
