#include "cli/plan_options.hpp"

#include <CLI/CLI.hpp>

#include "lockfile/make.hpp"
#include "lockfile/pylock.hpp"
#include "manifest/lockfile.hpp"
#include "recipe/image_defaults.hpp"

namespace bootstrap::cli {

namespace {

/// In an image (recipe/image_defaults.hpp), for the image's own recipe: the venv, arch and step
/// selection its build ran with, where the command line gives none of its own.
Status apply_image_plan_defaults(const PlanArgs& args, const recipe::Recipe& recipe, engine::PlanOptions& options) {
    BS_TRY(auto defaults, recipe::image_defaults());
    if (!defaults || defaults->recipe_digest != recipe.source_digest) return {};
    if (args.venv.empty() && defaults->venv) options.venv = *defaults->venv;
    if (args.arch.empty() && !args.no_device) {
        if (defaults->arch) options.arch = *defaults->arch;
        options.no_device = defaults->no_device;
    }
    if (args.from.empty() && args.only.empty() && args.skip.empty()) {
        options.selection.only = defaults->only;
        options.selection.skip = defaults->skip;
    }
    return {};
}

}  // namespace

void add_plan_options(CLI::App& cmd, PlanArgs& args) {
    cmd.add_option("--venv", args.venv, "Use this venv instead of the recipe's [venv] path");
    cmd.add_option("--from", args.from, "Start at this step id (earlier steps are not run)");
    cmd.add_option("--only", args.only, "Run only these step ids")->expected(1, -1);
    cmd.add_option("--skip", args.skip, "Do not run these step ids")->expected(1, -1);
    cmd.add_flag("--recreate", args.recreate, "Replace a venv that was made with another Python");
    auto* arch = cmd.add_option("--arch", args.arch,
                                "CUDA arch that {device.*} placeholders stand for (e.g. 9.0); no GPU is probed");
    cmd.add_flag("--no-device", args.no_device, "Probe no GPU: {device.*} uses the recipe's [device] fallback_arch")
        ->excludes(arch);
    cmd.add_flag("--locked", args.locked,
                 "Install exactly the lockfile's pins with hash checking (default lockfile: "
                 "lockfiles/<name>.lock.json beside the recipe, or beside its directory, else pylock.<name>.toml "
                 "there) and fail on any drift (not on what only --skip'ped steps lock; a kept build against it "
                 "is refused)");
    cmd.add_option("--lockfile", args.lockfile,
                   "The lockfile for --locked (implies --locked): bootstrap's JSON, or a PEP 751 pylock.toml (a .toml "
                   "file), also one another tool wrote");
    cmd.add_flag("--exact", args.exact,
                 "Remove the distributions no step installs (installed by hand, or by a step since taken out of "
                 "the recipe) once every step passed, as `uv pip sync` would");
    cmd.add_flag("--retry-optional", args.retry_optional,
                 "Try again the optional steps that failed in a way a retry cannot change (they are "
                 "otherwise skipped until the step changes)");
}

Result<engine::PlanOptions> plan_options(const PlanArgs& args, const recipe::Recipe& recipe) {
    engine::PlanOptions options;
    if (!args.venv.empty()) options.venv = args.venv;
    options.recreate = args.recreate;
    if (!args.arch.empty()) options.arch = args.arch;
    options.no_device = args.no_device;
    if (!args.from.empty()) options.selection.from = args.from;
    options.selection.only = args.only;
    options.selection.skip = args.skip;
    BS_CHECK(apply_image_plan_defaults(args, recipe, options));
    options.retry_optional = args.retry_optional;
    options.exact = args.exact;
    if (args.locked || !args.lockfile.empty()) {
        auto path =
            args.lockfile.empty() ? lockfile::default_lockfile_path(recipe) : std::filesystem::path(args.lockfile);
        // Only a pylock written (`lock --format pylock`): that one is the default.
        std::error_code ec;
        if (args.lockfile.empty() && !std::filesystem::exists(path, ec)) {
            auto pylock = lockfile::pylock_path_in(path.parent_path(), recipe.name);
            if (std::filesystem::exists(pylock, ec)) path = pylock;
        }
        BS_TRY(auto lock, lockfile::load_any_lockfile(path));
        options.locked = std::move(lock);
    }
    return options;
}

}  // namespace bootstrap::cli
