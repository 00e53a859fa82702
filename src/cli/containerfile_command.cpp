// `containerfile`: a build context that runs a recipe as one image build step
// (image/containerfile.hpp).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/version.hpp"
#include "core/fs.hpp"
#include "exec/process.hpp"
#include "image/containerfile.hpp"
#include "lockfile/make.hpp"
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
    std::vector<std::string> secrets;
    std::vector<std::string> skip;
    std::vector<std::string> only;
};

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
    if (!loaded) return report_error(loaded.error());
    image::ContainerfileOptions options;
    options.output_dir = args.output;
    options.base_image = args.base;
    if (!args.arch.empty()) options.arch = args.arch;
    options.no_device = args.no_device;
    options.venv = args.venv;
    options.bootstrap_version = bootstrap_version();
    std::error_code ec;
    options.bootstrap_binary = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return report_error(
            Error{ErrorCode::io, "cannot find this bootstrap binary (/proc/self/exe): " + ec.message(), {}});
    if (loaded->venv.installer == recipe::InstallerKind::uv) {
        std::filesystem::path uv = args.uv;
        if (uv.empty()) {
            const char* path = std::getenv("PATH");
            uv = exec::find_program("uv", path ? path : "");
        }
        if (!uv.empty()) options.uv_binary = uv;  // the engine says so when uv is missing
    }
    if (args.locked || !args.lockfile.empty())
        options.lockfile =
            args.lockfile.empty() ? lockfile::default_lockfile_path(*loaded) : std::filesystem::path(args.lockfile);
    for (const auto& word : args.env) {
        auto kv = parse_env(word);
        if (!kv) return report_error(kv.error());
        options.env.push_back(*kv);
    }
    options.secrets = args.secrets;
    options.skip = args.skip;
    options.only = args.only;
    auto written = image::write_build_context(*loaded, options);
    if (!written) return report_error(written.error());
    const auto& spec = written->spec;
    const std::string dir = written->dir.string();
    fmt::print("wrote {}/{}: recipe '{}' for arch {}, venv {} in the image", dir, image::k_build_file, spec.recipe_name,
               spec.arch, spec.venv);
    if (!spec.lockfile_name.empty()) fmt::print(", locked by {}", spec.lockfile_name);
    fmt::print("\n");
    size_t files = 0;
    uint64_t bytes = 0;
    for (const auto& s : spec.sources) {
        files += s.files;
        bytes += s.bytes;
        fmt::print("  copied {} -> {} ({}: {} file{}, {})\n", s.host_path.string(), s.image_path, s.what, s.files,
                   s.files == 1 ? "" : "s", core::format_size(s.bytes));
        if (!s.left_out.empty()) {
            std::string list;
            for (size_t i = 0; i < s.left_out.size() && i < 6; ++i) list += (i ? ", " : "") + s.left_out[i];
            if (s.left_out.size() > 6) list += fmt::format(" and {} more", s.left_out.size() - 6);
            fmt::print("    left out: {}\n", list);
        }
    }
    if (!spec.sources.empty())
        fmt::print("  {} local input{} copied: {} files, {}\n", spec.sources.size(),
                   spec.sources.size() == 1 ? "" : "s", files, core::format_size(bytes));
    for (const auto& d : spec.downloads)
        fmt::print("  carried step '{}' source {} ({}, {})\n", d.step_id, d.url, core::format_size(d.bytes),
                   d.fetched ? "downloaded now" : "from this machine's cache");
    for (const auto& [name, value] : spec.env)
        if (std::none_of(args.env.begin(), args.env.end(),
                         [&name = name](const std::string& w) { return w == name || w.rfind(name + "=", 0) == 0; }))
            fmt::print("  the build sets {}={} (the recipe reads {{env.{}}})\n", name, value, name);
    std::string secrets;
    for (const auto& name : spec.secrets) {
        fmt::print("  the build reads {} from a build secret (FILE: a file holding its value)\n", name);
        secrets += fmt::format("--secret id={},src=FILE ", name);
    }
    // DOCKER_BUILDKIT=1: docker before 23.0 (Debian 12's is 20.10) builds with BuildKit, which
    // RUN --mount needs, only when asked; later ones use it anyway.
    fmt::print(
        "build it with any of:\n  DOCKER_BUILDKIT=1 docker build {2}-t IMAGE {0}\n  podman build {2}-t IMAGE {0}\n"
        "  buildah bud {2}-t IMAGE {0}\n"
        "(behind a TLS-inspecting proxy, add --secret id={1},src=CA.pem to give the build its CA)\n",
        dir, image::k_ca_secret, secrets);
    return 0;
}

}  // namespace

void set_containerfile_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<ContainerfileArgs>();
    auto* cmd =
        app.add_subcommand("containerfile", "Write an image build context that runs a recipe in one build step");
    cmd->add_option("recipe", args->recipe, "Recipe file (TOML)")->required();
    cmd->add_option("-o,--output", args->output, "The context directory to write (must not exist, or be empty)")
        ->required();
    auto* arch = cmd->add_option("--arch", args->arch, "The image's target CUDA arch (e.g. 9.0)");
    auto* no_device = cmd->add_flag("--no-device", args->no_device, "Target the recipe's [device] fallback_arch");
    arch->excludes(no_device);
    cmd->add_option("--base", args->base, "The base image")->capture_default_str();
    cmd->add_option("--venv", args->venv, "The venv's path in the image")->capture_default_str();
    cmd->add_flag("--locked", args->locked, "Copy the recipe's lockfile in and run --locked");
    cmd->add_option("--lockfile", args->lockfile, "The lockfile for --locked (implies --locked)");
    cmd->add_option("--uv", args->uv, "The uv binary to put in the image (default: uv on PATH)");
    cmd->add_option("--env", args->env,
                    "NAME=VALUE (or NAME: its value here) set for the recipe's run; written into the "
                    "Dockerfile, so secrets are refused")
        ->expected(1, -1);
    auto* only =
        cmd->add_option("--only", args->only, "The build runs only these step ids (as `run --only`)")->expected(1, -1);
    cmd->add_option("--skip", args->skip, "The build skips these step ids (as `run --skip`)")
        ->expected(1, -1)
        ->excludes(only);
    cmd->add_option("--secret", args->secrets,
                    "NAME: a secret variable the recipe reads ({env.NAME}), given to the build as a build secret "
                    "(--secret id=NAME,src=FILE), never written into the Dockerfile or a layer")
        ->expected(1, -1);
    cmd->footer(
        "The context holds Dockerfile (docker, podman and buildah find it), bootstrap/bin/ (bootstrap,\n"
        "uv), bootstrap/etc/ (the recipe, the lockfile) and sources/N/: everything on this machine the\n"
        "recipe reads (sync projects, build and pybind11 sources, local git repositories, find-links,\n"
        "a run step's cwd, paths a step's argv names, [vars] directories a step reads in), copied where\n"
        "the image's recipe will read it, without .git (but for git sources), venvs, __pycache__ and\n"
        "build trees; /, /etc, /usr, /var, /root, /proc, /sys, /dev, /boot and the home directory are\n"
        "never copied whole, nor any credential file (.ssh/id_*, .netrc, .aws/credentials, ...): refused,\n"
        "naming each. Every {env.NAME} the recipe reads is set in the RUN as it is here; an unset one\n"
        "is an error now. One RUN runs the recipe with cache mounts for\n"
        "$BOOTSTRAP_HOME and uv's cache, and an optional CA secret (--secret id=ca-bundle,src=FILE).\n"
        "The recipe is copied into the image: a URL with credentials in it, or a secret variable set to a\n"
        "value written in it, is refused. Read secrets as {env.NAME} and pass --secret NAME: the build\n"
        "gets them from build secrets (--secret id=NAME,src=FILE), never in a layer.\n"
        "In the image: the venv (--venv), its manifest and history in VENV/.bootstrap/, and\n"
        "/etc/bootstrap/{recipe.toml,manifest.json,env}. /etc/bootstrap/env keeps what the build ran with:\n"
        "the {env.NAME} values (defaults: the container's environment wins), the build secrets' names\n"
        "and the steps that read each (never a value), the venv, arch and --skip/--only; `plan`, `run`\n"
        "and `doctor` in the container read it, so `plan /etc/bootstrap/recipe.toml --check` passes there.\n"
        "Labels: io.bootstrap.recipe.name,\n"
        "io.bootstrap.recipe.digest, io.bootstrap.arch.\n"
        "Exit codes: 0 ok, 1 failed, 2 usage or invalid recipe.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_containerfile(*args); });
}

}  // namespace bootstrap::cli
