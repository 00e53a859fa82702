#pragma once
// One home per step kind. Each kind lives in its own file (steps/kind_<name>.cpp) and hands the
// engine one `Kind`: how a recipe step expands into a ResolvedStep (argv, payload), what else
// goes into its key, how it runs, and its hooks for the skip rule. The engine treats every
// kind alike through this table. A kind's TOML keys live in its file too: its `parse` reads
// them (through recipe::StepReader) into its own recipe::KindFields struct. Adding a kind is
// its file plus one registration line in steps/kinds.cpp (its payload, if it needs one, goes
// in OtherSpec: resolved_step.hpp).

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.hpp"
#include "core/key.hpp"
#include "device/arch.hpp"
#include "exec/environment.hpp"
#include "net/download.hpp"
#include "pyenv/installer.hpp"
#include "pyenv/interpreter.hpp"
#include "recipe/recipe.hpp"
#include "recipe/step_reader.hpp"
#include "steps/executor.hpp"
#include "steps/recipe_kinds.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// `run --locked`: what an install step installs instead of its packages: its whole locked
/// closure, pinned and hashed, without resolution.
struct LockedInstall {
    std::vector<pyenv::Requirement> requirements;  // every pin
    std::vector<LockedBatch> batches;              // one installer command each
};

/// What a kind's expansion may ask of the plan being built (engine/plan.cpp implements it).
class PlanContext {
public:
    virtual ~PlanContext() = default;

    /// Expand a recipe value; a value known only after an earlier step marks `step` incomplete.
    [[nodiscard]] virtual Result<std::string> text(const recipe::Text& t, ResolvedStep& step) = 0;
    [[nodiscard]] Result<std::vector<std::string>> texts(const std::vector<recipe::Text>& ts, ResolvedStep& step);
    /// A local path from the recipe: `~` expanded, relative ones taken from the recipe's dir.
    [[nodiscard]] virtual std::string local_path(const std::string& raw) const = 0;
    /// `run --locked`: what the install step `s` installs; nullopt without --locked. An error
    /// when a package it needs cannot be installed from the lock (a local wheel no longer kept).
    /// `own_urls`: the step's own index URLs (they may carry the credentials its origins need).
    [[nodiscard]] virtual Result<std::optional<LockedInstall>> locked(const recipe::Step& s,
                                                                      const std::vector<std::string>& own_urls) = 0;
    /// `run --locked`: every locked package as `name==version` (empty without --locked).
    [[nodiscard]] virtual std::vector<std::string> locked_pins() const = 0;
    /// A plan-level remark ("`uv sync` is exact ...").
    virtual void add_note(std::string note) = 0;

    const recipe::Recipe* recipe = nullptr;
    fs::path venv;
    fs::path venv_python;
    std::shared_ptr<const pyenv::Installer> installer;
    pyenv::NetworkOptions net;                           // what the child gets
    pyenv::NetworkOptions key_net;                       // the same command built with these is what the key sees
    const exec::EnvMap* base_env = nullptr;              // pass-through env with [env] applied
    const exec::EnvMap* env = nullptr;                   // the caller's complete environment
    const pyenv::InterpreterFacts* python = nullptr;     // null until the venv exists
    fs::path home;                                       // $BOOTSTRAP_HOME
    bool dry_run = false;                                // `plan`: show a missing program by name
    bool recreate = false;                               // --recreate
    bool locked_run = false;                             // --locked
    bool check_local_inputs = true;                      // check_local_input checks (engine::PlanOptions)
    bool this_machine = true;                            // the run is here: check its interpreters
    const std::vector<ResolvedStep>* earlier = nullptr;  // the steps planned before this one
};

/// What a kind's expansion produced besides the step itself: the installer command it runs
/// (empty when the kind sets argv itself) and that command as the key sees it (built with
/// PlanContext::key_net).
struct Expansion {
    pyenv::Command command;
    pyenv::Command key_command;
};

/// Requirements whose being satisfied by the venv makes running a step unnecessary.
struct Satisfiable {
    std::vector<pyenv::Requirement> requirements;
    bool pre = false;  // pre-releases satisfy them
};

/// What a step asks the venv to hold by name (an install step's `packages`): the skip rule holds
/// a step that ran to them, the plan checks pins between steps against them, a lock gives the
/// step their closure. Null `requirements`: the kind asks for no packages by name.
struct Owned {
    const std::vector<pyenv::Requirement>* requirements = nullptr;
    bool pre = false;         // pre-releases satisfy them
    bool deliberate = false;  // `upgrade` or `allow_conflicts`: it overrides earlier pins on purpose
    bool upgrade = false;     // `upgrade = true`
};

/// Versions other steps chose on purpose that a step's resolution keeps (README pitfall P10),
/// written to `file` right before the step runs (engine/runner_record.cpp). Null `file`: none.
struct Overrides {
    const std::optional<fs::path>* file = nullptr;
    const std::vector<std::pair<std::string, std::string>>* earlier = nullptr;  // {step id, name}
    const std::vector<LaterOverride>* later = nullptr;                          // uv only
    /// `run --locked`: every locked pin instead (a build's wheel install resolves to the lock).
    const std::vector<std::string>* locked_pins = nullptr;
    /// A failure of the step is its resolution's: its error notes what it kept.
    bool resolves = false;
};

/// What `plan` shows of a step beyond the fields every step has: whole lines, without the
/// listing's two-space indent, in the places they go.
struct Description {
    std::vector<std::string> before_argv;  // "indexes: ...", "source: ..."
    std::vector<std::string> after_argv;   // "then: ..." (a --locked install's later commands)
    std::vector<std::string> after_env;    // "creates: ...", "unless: ..."
    std::vector<std::string> explain;      // `plan --explain`, last: "build key: ..."
};

/// What `plan` asks a description for.
struct DescribeAsk {
    bool explain = false;  // --explain: also what only a costlier look tells (a build's cache key now)
    fs::path venv;
};

/// How a key names a tool the step runs or builds with (a program path): by what it is, its
/// version line (pyenv/tool_version.hpp), or in a bootstrap-step-v3 key by its file's stat.
using ToolName = std::function<std::string(const std::string& program)>;

/// A step kind: its data and hooks. Plain function pointers: a kind has no state.
struct Kind {
    std::string_view name;  // as a recipe writes it: kind = "install"
    /// Read the kind's own keys from the step's table (the common ones are read already).
    std::shared_ptr<const recipe::KindFields> (*parse)(recipe::StepReader& rd);
    size_t spec;  // k_spec_index<its payload type>: execute() refuses a step without it
    /// Fill `step` (argv, cwd, spec, note) from the recipe step.
    Status (*expand)(const recipe::Step& s, ResolvedStep& step, PlanContext& ctx, Expansion& out);
    /// Once the step's child environment is composed (may be null).
    void (*environment_known)(ResolvedStep& step, const PlanContext& ctx) = nullptr;
    /// Add what only this kind has to the step key (after the common inputs and the installer);
    /// tools through `tool`.
    void (*key_inputs)(const ResolvedStep& step, core::KeyBuilder& key, const ToolName& tool);
    /// Run the step's action (not its verify clauses).
    Result<Outcome> (*execute)(const ResolvedStep& step, StepContext& ctx);
    /// Skip rule: files the step promises (a stat each decides whether it still holds).
    std::vector<std::string> (*promised_files)(const ResolvedStep& step) = nullptr;
    /// Skip rule: requirements that, when the venv satisfies them, make running the step
    /// unnecessary even when it never ran (null, or nullopt: no such shortcut).
    std::optional<Satisfiable> (*satisfiable)(const ResolvedStep& step) = nullptr;

    /// The arches the step's `{device.*}` values stood for (may be null).
    void (*arches_used)(ResolvedStep& step, const device::ArchChoice& archs) = nullptr;

    // What the plan, the run, the lock, images and the CLI ask of a step without knowing its
    // kind (each may be null: the kind has none). Callers use the functions below.
    Owned (*owned)(const ResolvedStep& step) = nullptr;
    Overrides (*overrides)(const ResolvedStep& step) = nullptr;
    /// The index settings its installer is asked for, as configured (credentials included:
    /// never shown); find-links directories too.
    const pyenv::InstallRequest* (*index_request)(const ResolvedStep& step) = nullptr;
    /// The indexes its packages come from, redacted: recorded as their origin.
    std::vector<std::string> (*index_urls)(const ResolvedStep& step) = nullptr;
    void (*describe)(const ResolvedStep& step, const DescribeAsk& ask, Description& out) = nullptr;
    /// Members of the step's object in `plan --json`.
    void (*describe_json)(const ResolvedStep& step, nlohmann::json& out) = nullptr;
    /// A second command the step runs besides argv (run's `unless`): its program is found on
    /// the child's PATH, and taken from the venv, as argv's is.
    std::vector<std::string>* (*other_argv)(ResolvedStep& step) = nullptr;
    /// A source archive the step fetches by URL and sha256 (an image's build context carries
    /// it); nullopt when it fetches none or its URL is known only later.
    std::optional<net::DownloadRequest> (*archive)(const ResolvedStep& step) = nullptr;

    bool runs_installer = false;    // its children are uv/pip: the installer's version and the
                                    // inherited settings that change what it installs
                                    // (uv_input/pip_input) are in the key; the installer's
                                    // cause line heads a failure
    bool shows_downloads = false;   // its installer runs on a pseudo-terminal: the run shows
                                    // bytes downloaded (pyenv/download_progress.hpp)
    bool network_attempts = false;  // default attempts: [network] attempts
    bool needs_venv = false;        // works in a venv that must exist (or be made) first
    bool venv_environment = false;  // children see the venv as `launch` sets it up
    bool makes_venv = false;        // running it changes the interpreter: re-plan after
    bool build_env = false;         // it compiles: the inherited variables a build reads
                                    // (core::EnvUse::build_input) are in the key
};

/// The registered kind named `name`, or nullptr.
[[nodiscard]] const Kind* find_kind(std::string_view name);

/// The registered kind named `name`: every step of a plan has one (make_plan refuses any
/// other); an unknown name is an internal error that stops the process, never a default kind.
[[nodiscard]] const Kind& kind_of(std::string_view name);

/// Every registered kind, in the order messages list them.
[[nodiscard]] const std::vector<const Kind*>& kinds();

/// The hooks above for one step (through kind_of(step.kind); none: empty).
[[nodiscard]] Owned owned_of(const ResolvedStep& step);
[[nodiscard]] Overrides overrides_of(const ResolvedStep& step);
[[nodiscard]] const pyenv::InstallRequest* index_request_of(const ResolvedStep& step);
[[nodiscard]] Description describe_step(const ResolvedStep& step, const DescribeAsk& ask);
void describe_step_json(const ResolvedStep& step, nlohmann::json& out);
[[nodiscard]] std::optional<net::DownloadRequest> archive_of(const ResolvedStep& step);

/// The index URLs the steps' recipe entries configure, credentials included (what
/// pyenv::known_index_urls matches redacted URLs against).
[[nodiscard]] std::vector<std::string> configured_index_urls(const std::vector<ResolvedStep>& steps);

/// A program as a file for keys: its real path, size and mtime ("PROG (not found)").
[[nodiscard]] std::string program_identity(const std::string& program);

/// The program `program` names on `env`'s PATH (as given when it has a slash or is not found).
[[nodiscard]] std::string on_path(const std::string& program, const exec::EnvMap& env);

/// What earlier install steps of the plan override on purpose (`upgrade`, or `allow_conflicts`
/// past another package's pin), as {step id, normalised name}: a later install step's
/// resolution, and a build step's install of its wheel, keep those versions (README pitfall
/// P10: a later step depending on torch re-resolved torch's exact cuBLAS pin and undid the
/// upgrade). Names in `own` (what the step asks for itself) are its own choice; none with
/// `no_deps` or a `--locked` run. (kind_install.cpp)
[[nodiscard]] std::vector<std::pair<std::string, std::string>> earlier_overrides(
    const std::vector<pyenv::Requirement>& own, bool no_deps, const PlanContext& ctx);

/// Record that the step reads `path` from this machine (ResolvedStep::local_inputs); a value not
/// known yet, or a URL, is not recorded. (kinds.cpp)
void add_local_input(ResolvedStep& out, const std::string& path, bool directory, std::string_view what,
                     const recipe::SourceLoc& loc, bool repository = false);

/// A local file or directory a step reads (a sync step's project, a pybind11 source), recorded
/// with add_local_input and checked
/// when the plan is made, before anything runs. Missing, it is an error naming `field`'s
/// file:line, unless an earlier `run` step may create it or the step is optional (then a note
/// in `out`). Values not known yet are not checked. (kinds.cpp)
[[nodiscard]] Status check_local_input(const recipe::Step& s, const recipe::Text& field, const std::string& path,
                                       std::string_view what, bool directory, ResolvedStep& out,
                                       const PlanContext& ctx);

}  // namespace bootstrap::steps
