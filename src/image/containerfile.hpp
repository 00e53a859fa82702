#pragma once
// `bootstrap containerfile`: a build context in which a recipe runs as one image build step.
// The Dockerfile (docker, podman and buildah all find it by that name) copies bootstrap (and uv),
// the recipe and what it reads from this machine in, runs the recipe in one RUN with cache
// mounts for $BOOTSTRAP_HOME and uv's cache (rebuilds reuse the build cache; the caches stay out
// of the image), and leaves the venv, its manifest and history, and the recipe at fixed paths
// (k_image_etc, ContainerfileOptions::venv). Behind a TLS-inspecting proxy the build is given
// the proxy's CA as an optional build secret (k_ca_secret), never written into the image. It
// uses no BuildKit syntax beyond `RUN --mount=type=cache|secret`, which all three accept.
// Reproducible: `ARG SOURCE_DATE_EPOCH=0` dates what the run records, .pyc files are compiled
// hash-based, and the RUN ends with `bootstrap seal` (image/seal.hpp), so two builds of the
// same context from clean caches (`--timestamp 0`) give the same venv layer.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "recipe/image_defaults.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {
struct Plan;
}

namespace bootstrap::image {

namespace fs = std::filesystem;

/// Where the image keeps the recipe, the lockfile and the manifest.
inline constexpr const char* k_image_etc = "/etc/bootstrap";
/// The optional build secret holding a CA bundle (`--secret id=ca-bundle,src=FILE`): the RUN's
/// TLS clients (uv, pip, git, libcurl) trust it; it is mounted only for the RUN.
inline constexpr const char* k_ca_secret = "ca-bundle";
/// The cache mounts' targets (never part of the image).
inline constexpr const char* k_image_home = "/var/cache/bootstrap";
inline constexpr const char* k_image_uv_cache = "/var/cache/uv";

struct ContainerfileOptions {
    fs::path output_dir;  // -o DIR: must not exist, or be empty
    std::string base_image = "debian:bookworm-slim";
    std::optional<std::string> arch;    // --arch 9.0
    bool no_device = false;             // --no-device: the recipe's fallback_arch
    std::string venv = "/opt/venv";     // the venv's path in the image
    fs::path bootstrap_binary;          // copied to /usr/local/bin/bootstrap
    std::optional<fs::path> uv_binary;  // copied to /usr/local/bin/uv (required: installer uv)
    std::optional<fs::path> lockfile;   // --locked: copied, and the run is --locked
    /// Variables the RUN sets (`--env NAME=VALUE`): written into the Containerfile, so a
    /// secret-named one or a value with URL credentials is refused.
    std::vector<std::pair<std::string, std::string>> env;
    /// Build secrets (`--secret NAME`): variables the RUN reads from a secret mount
    /// (k_secret_dir/NAME), given to the build as `--secret id=NAME,src=FILE`; never written
    /// into the Dockerfile or a layer. Each must be a secret name (core::is_secret_name, or the
    /// recipe's `[env] secret`), so the image's run masks it as well.
    std::vector<std::string> secrets;
    std::string bootstrap_version;  // for the header comment and a label
    /// The plan options the RUN passes (`--skip`, `--only`), kept in the image's defaults so
    /// that `plan` and `run` in the container select the same steps.
    std::vector<std::string> skip;
    std::vector<std::string> only;
};

/// Where BuildKit, buildah and podman mount a `RUN --mount=type=secret,id=ID` (as ID inside).
inline constexpr const char* k_secret_dir = "/run/secrets";

/// Something on this machine the recipe reads (a sync project, a build's source tree or git
/// repository, a pybind11 source, find-links, a `[vars]` directory), copied into the context
/// and by the Dockerfile to the path the recipe will see in the image.
struct ContextSource {
    std::string what;    // "step 'megatron-deps' project", "[vars] megatron"
    fs::path host_path;  // where it is on this machine
    bool directory = true;
    bool repository = false;   // a git repository: .git is copied too
    std::string context_path;  // relative to the context: "sources/0" or "sources/0/helpers.cpp"
    std::string image_path;    // where the recipe will look for it in the image
    size_t files = 0;          // what was copied: files and symlinks
    uint64_t bytes = 0;
    std::vector<std::string> left_out;  // what a directory's copy left out ("venv .venv", ".git")
};

/// A `url` source's archive, fetched (or found in this machine's $BOOTSTRAP_HOME) when the context
/// is written and put where the image's run finds it already downloaded: the build needs neither
/// the network nor libcurl for it (a bare base has no libcurl).
struct ContextDownload {
    std::string step_id;
    std::string url;  // redacted
    std::string sha256;
    std::string context_path;  // "bootstrap/downloads/<sha256>/<name>"
    uint64_t bytes = 0;
    bool fetched = false;  // false: it was in this machine's $BOOTSTRAP_HOME already
};

/// Where the context's downloads are bind-mounted for the RUN (never part of the image).
inline constexpr const char* k_image_downloads = "/run/bootstrap-downloads";

/// The most a context may copy of the machine's files (all sources together): a recipe whose
/// variable names `/` or a home directory is an error, not a full disk.
inline constexpr uint64_t k_max_context_bytes = 16ull << 30;
inline constexpr size_t k_max_context_files = 1000000;

/// Everything the Containerfile text is made of (render_containerfile is a pure function of it).
struct ContainerfileSpec {
    std::string base_image;
    std::string recipe_name;
    std::string recipe_digest;           // sha256 hex of the recipe file
    std::string arch;                    // "9.0", or "none" when the recipe has no fallback_arch
    std::vector<std::string> arch_args;  // {"--arch", "9.0"} or {"--no-device"}
    std::string venv;
    bool with_uv = false;
    std::string lockfile_name;  // "" without --locked
    std::vector<ContextSource> sources;
    std::vector<ContextDownload> downloads;
    /// The RUN's variables: `--env` ones, then the `{env.NAME}` values the recipe read here (so
    /// the build sees what `containerfile` saw: engine::Plan::env_read).
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::string> secrets;  // build secrets the RUN exports (ContainerfileOptions)
    std::string bootstrap_version;
    std::vector<std::string> skip;  // ContainerfileOptions::skip, only
    std::vector<std::string> only;
};

struct ContainerfileResult {
    fs::path dir;
    ContainerfileSpec spec;
};

/// The Containerfile's text.
[[nodiscard]] std::string render_containerfile(const ContainerfileSpec& spec);

/// Check `--env` entries: NAME=VALUE with a valid name; a secret-named variable or a value with
/// URL credentials is refused (the Containerfile and the image's history would show it).
[[nodiscard]] Status check_image_env(const std::vector<std::pair<std::string, std::string>>& env);

/// The image's defaults file in the context (bootstrap/etc/env, copied to k_image_etc/env):
/// the RUN's variables, its build secrets' names and the steps that read each (never a value),
/// the venv, arch and step selection (recipe/image_defaults.hpp). `plan`: the recipe planned as
/// the image's build will plan it (write_build_context), which says which steps read each secret.
inline constexpr const char* k_image_env = "env";
[[nodiscard]] recipe::ImageDefaults image_defaults_of(const engine::Plan& plan, const ContainerfileSpec& spec);

/// The ids of the steps (in plan order) that need the variable NAME: those whose values the plan
/// expanded read `{env.NAME}`, directly or through [vars] (engine::EnvRead::steps), and every
/// step when the recipe's `[env] key` names it (the plan passes it to each, as an input of its key).
[[nodiscard]] std::vector<std::string> steps_reading(const engine::Plan& plan, const std::string& name);

/// The build file's name in the context: the one docker, podman and buildah all look for.
inline constexpr const char* k_build_file = "Dockerfile";

/// Write the build context for `recipe` into options.output_dir (staged in a sibling temp dir
/// and renamed into place): Dockerfile, bootstrap/bin/{bootstrap,uv},
/// bootstrap/etc/{recipe.toml,LOCKFILE}, and sources/N/ for everything on this machine the
/// recipe reads (ContextSource), without .git (but for git repositories), venvs, __pycache__,
/// CMake build trees and a source's top-level build/ and dist/. Every `{env.NAME}` the recipe
/// reads is resolved now: unset without a default, a secret-named one, or one whose value holds
/// URL credentials is an error naming the recipe's file:line (but for build secrets); the others
/// are set in the RUN. The recipe itself is copied into the image, so a URL with credentials in
/// its text (comments too) or a secret-named `[env]` value written in it (not `{env.NAME}`) is
/// refused, naming its file:line and the `--secret` way.
[[nodiscard]] Result<ContainerfileResult> write_build_context(const recipe::Recipe& recipe,
                                                              const ContainerfileOptions& options);

}  // namespace bootstrap::image
