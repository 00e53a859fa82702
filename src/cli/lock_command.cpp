#include <chrono>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "lockfile/make.hpp"
#include "lockfile/page_fetch.hpp"
#include "lockfile/pylock.hpp"
#include "lockfile/relock.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct LockArgs {
    std::string recipe;
    std::string venv;
    std::string output;
    std::string arch;
    bool no_device = false;
    bool allow_extras = false;
    bool record_inputs = false;
    double timeout = 600;
    std::string format = "json";  // json, pylock or both
};

/// Where each format goes: `-o` names the file of the one format asked for (with `both`, the
/// JSON one, and the pylock goes beside it); otherwise both go to the lockfiles directory.
std::vector<std::pair<std::filesystem::path, bool>> lock_outputs(const LockArgs& args, const recipe::Recipe& recipe) {
    const auto json =
        args.output.empty() ? lockfile::default_lockfile_path(recipe) : std::filesystem::path(args.output);
    const auto pylock = args.output.empty() || args.format == "both"
                            ? lockfile::pylock_path_in(json.parent_path(), recipe.name)
                            : std::filesystem::path(args.output);
    std::vector<std::pair<std::filesystem::path, bool>> out;  // (path, is pylock)
    if (args.format != "pylock") out.emplace_back(json, false);
    if (args.format != "json") out.emplace_back(pylock, true);
    return out;
}

/// --record-inputs: the lockfile rewritten in its own format, with the recipe's meaning.
int record_inputs(const LockArgs& args, const recipe::Recipe& recipe) {
    const auto file =
        args.output.empty() ? lockfile::default_lockfile_path(recipe) : std::filesystem::path(args.output);
    auto lock = lockfile::with_recorded_inputs(recipe, file);
    if (!lock) return report_error(lock.error());
    auto saved = lockfile::is_pylock_name(file) ? core::write_file_atomic(file, lockfile::to_pylock(*lock))
                                                : manifest::save_lockfile(file, *lock);
    if (!saved) return report_error(saved.error());
    fmt::print(stderr, "recorded what the {} steps of {} do in {}\n", recipe.steps.size(), recipe.name, file.string());
    return 0;
}

int execute_lock(const LockArgs& args) {
    auto loaded = steps::load_recipe(args.recipe);
    if (!loaded) return report_error(loaded.error());
    if (args.record_inputs) return record_inputs(args, *loaded);
    engine::PlanOptions options;
    if (!args.venv.empty()) options.venv = args.venv;
    if (!args.arch.empty()) options.arch = args.arch;
    options.no_device = args.no_device;
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(args.timeout));
    auto fetch = [&](const std::string& url) -> Result<lockfile::FetchedPage> {
        auto page = lockfile::fetch_project_page(url, deadline);
        if (!page && page.error().code == ErrorCode::timeout)
            return fail(ErrorCode::timeout,
                        fmt::format("lock ran out of its time ({:g} s, --timeout) while fetching {}", args.timeout,
                                    core::redact_url(url)),
                        "an index that slow needs a longer --timeout; nothing was written");
        return page;
    };
    lockfile::LockPolicy policy;
    policy.allow_extras = args.allow_extras;
    std::vector<std::string> notes;
    auto lock = lockfile::make_lockfile(*loaded, options, fetch, policy, &notes);
    if (!lock) return report_error(lock.error());
    std::vector<std::string> written;
    for (const auto& [path, pylock] : lock_outputs(args, *loaded)) {
        auto saved =
            pylock ? core::write_file_atomic(path, lockfile::to_pylock(*lock)) : manifest::save_lockfile(path, *lock);
        if (!saved) return report_error(saved.error());
        written.push_back(path.string());
    }
    fmt::print(stderr, "locked {} packages of {} into {}\n", lock->packages.size(), loaded->name,
               core::join(written, " and "));
    for (const auto& note : notes) fmt::print(stderr, "{}\n", note);
    // A partial bring-up locks what ran; a --locked run refuses the rest (optional ones it skips).
    for (const auto& recipe_step : loaded->steps)
        if (auto it = lock->steps.find(recipe_step.id); it != lock->steps.end() && !it->second.covered)
            fmt::print(stderr, "not covered: step '{}'{}: {}\n", recipe_step.id,
                       it->second.optional ? " (optional)" : "", it->second.why);
    return 0;
}

}  // namespace

void set_lock_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LockArgs>();
    auto* cmd = app.add_subcommand(
        "lock",
        "Write a lockfile (exact versions, wheel sha256 (or, for a package built from an sdist, the sdist's and "
        "the built wheel's and its build-cache key), origins, each step's packages) from the venv a run "
        "left; steps that have not passed are recorded as not covered. Refused (exit 1) while a step that passed "
        "would run again (the venv is off the recipe's fixed point) or a distribution no step installs is there");
    cmd->add_option("recipe", args->recipe, "Recipe file (TOML)")->required();
    cmd->add_option("--venv", args->venv, "Use this venv instead of the recipe's [venv] path");
    cmd->add_option(
        "-o,--output", args->output,
        "Lockfile path (default: lockfiles/<name>.lock.json beside the recipe, or beside its directory when only that one "
        "exists; a pylock goes to pylock.<name>.toml there, or beside -o's file with --format both)");
    cmd->add_option("--format", args->format,
                    "json (bootstrap's lockfile), pylock (PEP 751 pylock.toml, which uv and pip read too; bootstrap's "
                    "own facts under [tool.bootstrap]) or both")
        ->capture_default_str()
        ->check(CLI::IsMember({"json", "pylock", "both"}));
    // The recipe is planned to map its steps to packages, probing no GPU: a {device.*} value is
    // needed only when an install step's packages use one (then give the arch the run used).
    auto* arch = cmd->add_option(
        "--arch", args->arch,
        "CUDA arch that {device.*} placeholders stand for (e.g. 9.0), needed only when an install step's packages use one; no GPU is probed");
    cmd->add_flag("--no-device", args->no_device, "Probe no GPU: {device.*} uses the recipe's [device] fallback_arch")
        ->excludes(arch);
    cmd->add_flag("--allow-extras", args->allow_extras,
                  "Lock although the venv holds distributions no step installs (installed by hand): they are left "
                  "out of the lock, each named");
    cmd->add_flag("--record-inputs", args->record_inputs,
                  "Run nothing and read no venv: add what the recipe's steps do (what a --locked run checks, so that "
                  "a comment does not make the lock stale) to the lockfile (-o, or the default) of an older "
                  "bootstrap, while the recipe's bytes are still those it was locked from");
    cmd->add_option("--timeout", args->timeout,
                    "Seconds the whole lock may take, index pages included (then it stops and writes nothing)")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 30.0 * 86400));
    cmd->callback([args, &outcome] { outcome.exit_code = execute_lock(*args); });
}

}  // namespace bootstrap::cli
