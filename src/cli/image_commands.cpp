// `containerfile`: a build context that runs a recipe as one image build step
// (engine/containerfile.hpp); `seal`: a venv's state reduced to what its inputs decide, the
// build step's last command (engine/seal.hpp).
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/version.hpp"
#include "engine/containerfile.hpp"
#include "engine/locking.hpp"
#include "engine/seal.hpp"
#include "exec/process.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct ContainerfileArgs {
    std::string recipe;
    std::string output;
    std::string arch;
    bool no_device = false;
    std::string base = "debian:bookworm-slim";
    std::string venv = "/opt/venv";
    bool locked = false;
    std::string lockfile;
    std::string uv;
    std::vector<std::string> env;
};

int fail_with(const Error& e) {
    TerminalStatus status;
    status.error(e);
    return exit_code_for(e);
}

/// `--env NAME=VALUE`, or `--env NAME` for this process's value of NAME.
Result<std::pair<std::string, std::string>> parse_env(const std::string& word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) return std::pair{word.substr(0, eq), word.substr(eq + 1)};
    const char* value = std::getenv(word.c_str());
    if (!value)
        return fail(ErrorCode::usage, fmt::format("--env {}: the variable is not set here (give NAME=VALUE)", word));
    return std::pair{word, std::string(value)};
}

int execute_containerfile(const ContainerfileArgs& args) {
    auto loaded = steps::load_recipe(args.recipe);
    if (!loaded) return fail_with(loaded.error());
    engine::ContainerfileOptions options;
    options.output_dir = args.output;
    options.base_image = args.base;
    if (!args.arch.empty()) options.arch = args.arch;
    options.no_device = args.no_device;
    options.venv = args.venv;
    options.bootstrap_version = bootstrap_version();
    std::error_code ec;
    options.bootstrap_binary = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return fail_with(Error{ErrorCode::io, "cannot find this bootstrap binary (/proc/self/exe): " + ec.message(), {}});
    if (loaded->venv.installer == recipe::InstallerKind::uv) {
        std::filesystem::path uv = args.uv;
        if (uv.empty()) {
            const char* path = std::getenv("PATH");
            uv = exec::find_program("uv", path ? path : "");
        }
        if (!uv.empty()) options.uv_binary = uv;  // the engine says so when uv is missing
    }
    if (args.locked || !args.lockfile.empty())
        options.lockfile = args.lockfile.empty() ? engine::default_lockfile_path(*loaded) : std::filesystem::path(args.lockfile);
    for (const auto& word : args.env) {
        auto kv = parse_env(word);
        if (!kv) return fail_with(kv.error());
        options.env.push_back(*kv);
    }
    auto written = engine::write_build_context(*loaded, options);
    if (!written) return fail_with(written.error());
    fmt::print("wrote {}/Containerfile: recipe '{}' for arch {}, venv {} in the image", written->dir.string(),
               written->spec.recipe_name, written->spec.arch, written->spec.venv);
    if (!written->spec.sources.empty()) fmt::print(", {} local source(s)", written->spec.sources.size());
    if (!written->spec.lockfile_name.empty()) fmt::print(", locked by {}", written->spec.lockfile_name);
    fmt::print("\nbuild it: buildah bud -t IMAGE {0} (or podman build / docker build -t IMAGE {0})\n",
               written->dir.string());
    return 0;
}

struct SealArgs {
    std::string venv;
    double lock_timeout = 600;
};

int execute_seal(const SealArgs& args) {
    const char* active = std::getenv("VIRTUAL_ENV");
    const std::string venv = !args.venv.empty() ? args.venv : active ? active : "";
    if (venv.empty()) return fail_with(Error{ErrorCode::usage, "no venv: pass --venv DIR (or activate one)", {}});
    auto sealed = engine::seal_venv(venv, args.lock_timeout);
    if (!sealed) return fail_with(sealed.error());
    fmt::print("sealed {}: removed {} path(s), reset {} journal entr{}\n", venv, sealed->removed.size(),
               sealed->journal_steps, sealed->journal_steps == 1 ? "y" : "ies");
    for (const auto& path : sealed->removed) fmt::print("  removed {}\n", path);
    return 0;
}

}  // namespace

void set_seal_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<SealArgs>();
    auto* cmd = app.add_subcommand(
        "seal", "Remove a venv's host-local state (lock, logs, caches, stat stamps, timings) before it is imaged");
    cmd->add_option("--venv", args->venv, "The venv (default: $VIRTUAL_ENV)");
    cmd->add_option("--lock-timeout", args->lock_timeout, "Seconds to wait for the venv lock")->capture_default_str();
    cmd->footer("Removes VENV/.bootstrap/{lock,logs/,*.cache,*.facts,torch-probe.json} and uv's\n"
                "*.dist-info/uv_cache.json (with its RECORD row), and resets the journal's RECORD stat stamps,\n"
                "venv_state, seconds and log paths. Keeps the history, the journal's steps, keys, owners and\n"
                "digests, and every installed file: `history`, `diff`, `doctor` and later runs work as before\n"
                "(a later run rehashes RECORDs and re-verifies). The Containerfile's build step ends with it, so\n"
                "two builds of the same inputs give the same venv layer.\n"
                "Exit codes: 0 ok, 1 failed, 2 usage.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_seal(*args); });
}

void set_containerfile_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<ContainerfileArgs>();
    auto* cmd = app.add_subcommand("containerfile",
                                   "Write an image build context that runs a recipe in one build step");
    cmd->add_option("recipe", args->recipe, "Recipe file (TOML)")->required();
    cmd->add_option("-o,--output", args->output, "The context directory to write (must not exist, or be empty)")
        ->required();
    auto* arch = cmd->add_option("--arch", args->arch, "The image's target CUDA arch (e.g. 9.0)");
    auto* no_device = cmd->add_flag("--no-device", args->no_device,
                                    "Target the recipe's [device] fallback_arch");
    arch->excludes(no_device);
    cmd->add_option("--base", args->base, "The base image")->capture_default_str();
    cmd->add_option("--venv", args->venv, "The venv's path in the image")->capture_default_str();
    cmd->add_flag("--locked", args->locked, "Copy the recipe's lockfile in and run --locked");
    cmd->add_option("--lockfile", args->lockfile, "The lockfile for --locked (implies --locked)");
    cmd->add_option("--uv", args->uv, "The uv binary to put in the image (default: uv on PATH)");
    cmd->add_option("--env", args->env,
                    "NAME=VALUE (or NAME: its value here) set for the recipe's run; written into the "
                    "Containerfile, so secrets are refused")
        ->expected(1, -1);
    cmd->footer("The context holds Containerfile, bootstrap/bin/ (bootstrap, uv), bootstrap/etc/ (the recipe,\n"
                "the lockfile) and sources/N/ (the recipe's local build sources). One RUN runs the recipe with\n"
                "cache mounts for $BOOTSTRAP_HOME and uv's cache. In the image: the venv (--venv), its\n"
                "manifest and history in VENV/.bootstrap/, and /etc/bootstrap/{recipe.toml,manifest.json}.\n"
                "Labels: io.bootstrap.recipe.name, io.bootstrap.recipe.digest, io.bootstrap.arch.\n"
                "Exit codes: 0 ok, 1 failed, 2 usage or invalid recipe.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_containerfile(*args); });
}

}  // namespace bootstrap::cli
