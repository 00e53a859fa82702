#pragma once
// `bootstrap containerfile`: a build context in which a recipe runs as one image build step.
// The Containerfile copies bootstrap (and uv) and the recipe in, runs the recipe in one RUN with
// cache mounts for $BOOTSTRAP_HOME and uv's cache (rebuilds reuse the build cache; the caches
// stay out of the image), and leaves the venv, its manifest and history, and the recipe at fixed
// paths (k_image_etc, ContainerfileOptions::venv). It uses no BuildKit syntax beyond
// `RUN --mount=type=cache`, which docker, podman and buildah all accept.
// Reproducible: `ARG SOURCE_DATE_EPOCH=0` dates what the run records, .pyc files are compiled
// hash-based, and the RUN ends with `bootstrap seal` (engine/seal.hpp), so two builds of the
// same context from clean caches (`--timestamp 0`) give the same venv layer.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

/// Where the image keeps the recipe, the lockfile and the manifest.
inline constexpr const char* k_image_etc = "/etc/bootstrap";
/// The cache mounts' targets (never part of the image).
inline constexpr const char* k_image_home = "/var/cache/bootstrap";
inline constexpr const char* k_image_uv_cache = "/var/cache/uv";

struct ContainerfileOptions {
    fs::path output_dir;                     // -o DIR: must not exist, or be empty
    std::string base_image = "debian:bookworm-slim";
    std::optional<std::string> arch;         // --arch 9.0
    bool no_device = false;                  // --no-device: the recipe's fallback_arch
    std::string venv = "/opt/venv";          // the venv's path in the image
    fs::path bootstrap_binary;               // copied to /usr/local/bin/bootstrap
    std::optional<fs::path> uv_binary;       // copied to /usr/local/bin/uv (required: installer uv)
    std::optional<fs::path> lockfile;        // --locked: copied, and the run is --locked
    /// Variables the RUN sets (`--env NAME=VALUE`): written into the Containerfile, so a
    /// secret-named one or a value with URL credentials is refused.
    std::vector<std::pair<std::string, std::string>> env;
    std::string bootstrap_version;           // for the header comment and a label
};

/// A local source the recipe names, copied into the context and into the image.
struct ContextSource {
    std::string step_id;
    fs::path host_dir;          // where it is on this machine
    std::string context_dir;    // relative to the context ("sources/0")
    std::string image_dir;      // where the recipe will look for it in the image
};

/// Everything the Containerfile text is made of (render_containerfile is a pure function of it).
struct ContainerfileSpec {
    std::string base_image;
    std::string recipe_name;
    std::string recipe_digest;     // sha256 hex of the recipe file
    std::string arch;              // "9.0", or "none" when the recipe has no fallback_arch
    std::vector<std::string> arch_args;  // {"--arch", "9.0"} or {"--no-device"}
    std::string venv;
    bool with_uv = false;
    std::string lockfile_name;     // "" without --locked
    std::vector<ContextSource> sources;
    std::vector<std::pair<std::string, std::string>> env;
    std::string bootstrap_version;
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

/// Write the build context for `recipe` into options.output_dir (staged in a sibling temp dir
/// and renamed into place): Containerfile, bootstrap/bin/{bootstrap,uv},
/// bootstrap/etc/{recipe.toml,LOCKFILE}, sources/N/ for each `build` step with a local path.
[[nodiscard]] Result<ContainerfileResult> write_build_context(const recipe::Recipe& recipe,
                                                              const ContainerfileOptions& options);

}  // namespace bootstrap::engine
