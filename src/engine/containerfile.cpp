#include "engine/containerfile.hpp"

#include <unistd.h>

#include <cctype>
#include <system_error>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "engine/facts.hpp"
#include "engine/plan.hpp"
#include "steps/recipe_kinds.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::engine {

namespace {

/// One word for /bin/sh: left bare when it holds only safe characters, else single-quoted.
std::string shell_word(std::string_view s) {
    bool safe = !s.empty();
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("@%+=:,./-_").find(c) == std::string_view::npos)
            safe = false;
    if (safe) return std::string(s);
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// A LABEL value: double-quoted, with `"`, `\` and `$` escaped (Containerfile syntax).
std::string label_value(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\' || c == '$') out += '\\';
        if (c == '\n') continue;
        out += c;
    }
    return out + "\"";
}

bool valid_env_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string join_words(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += ' ';
        out += shell_word(w);
    }
    return out;
}

/// The path sources of the recipe's build steps, expanded as a plan would (no GPU probed:
/// the arch options are passed on), by step id.
Result<std::map<std::string, std::string>> path_sources(const recipe::Recipe& recipe,
                                                         const ContainerfileOptions& options) {
    PlanOptions plan_options;
    plan_options.venv = options.venv;
    plan_options.arch = options.arch;
    plan_options.no_device = options.no_device;
    plan_options.dry_run = true;
    plan_options.check_local_inputs = false;  // the copied recipe's paths are the image's
    // Facts without a venv: the host's venv (if any) is not the image's.
    BS_TRY(auto facts, gather_facts({}, false));
    BS_TRY(auto plan, make_plan(recipe, plan_options, facts));
    std::map<std::string, std::string> out;
    for (const auto& step : plan.steps)
        if (const auto* build = step.as<steps::BuildSpec>();
            build && build->source_kind == steps::BuildSource::Kind::path)
            out[step.id] = build->location;
    return out;
}

bool is_under(const fs::path& path, const fs::path& dir) {
    auto rel = path.lexically_normal().lexically_relative(dir.lexically_normal());
    return !rel.empty() && *rel.begin() != "..";
}

/// Copy a source tree, leaving out its top-level `build` and `dist` (as a build step's copy
/// does) and `.git`: the recipe's `path` source is a tree, not a repository.
Status copy_source(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    if (!fs::is_directory(from, ec))
        return fail(ErrorCode::not_found, fmt::format("build source '{}' is not a directory", from.string()));
    fs::create_directories(to, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot create '{}': {}", to.string(), ec.message()));
    for (const auto& entry : fs::directory_iterator(from, ec)) {
        const auto name = entry.path().filename().string();
        if (name == "build" || name == "dist" || name == ".git") continue;
        fs::copy(entry.path(), to / name,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (ec)
            return fail(ErrorCode::io, fmt::format("cannot copy build source '{}' into the context: {}",
                                                   entry.path().string(), ec.message()));
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot read build source '{}': {}", from.string(), ec.message()));
    return {};
}

Status copy_file(const fs::path& from, const fs::path& to, std::string_view what) {
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    if (!ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return fail(ErrorCode::io, fmt::format("cannot copy {} '{}' into the build context: {}", what,
                                               from.string(), ec.message()));
    return {};
}

Result<ContainerfileSpec> make_spec(const recipe::Recipe& recipe, const ContainerfileOptions& options) {
    if (options.arch && options.no_device)
        return fail(ErrorCode::usage, "--arch and --no-device exclude each other");
    if (!options.arch && !options.no_device)
        return fail(ErrorCode::usage,
                    "an image is built without a GPU: give its target with --arch (e.g. 9.0) or "
                    "--no-device (the recipe's [device] fallback_arch)");
    if (options.venv.empty() || options.venv[0] != '/')
        return fail(ErrorCode::usage, fmt::format("the image's venv path must be absolute, not '{}'", options.venv));
    BS_CHECK(check_image_env(options.env));
    std::error_code ec;
    if (recipe.venv.installer == recipe::InstallerKind::uv &&
        (!options.uv_binary || !fs::is_regular_file(*options.uv_binary, ec)))
        return fail(ErrorCode::not_found,
                    options.uv_binary ? fmt::format("uv '{}' is not a file", options.uv_binary->string())
                                      : "the recipe's installer is uv and no uv was found to put in the image",
                    "put uv on PATH or name it with --uv FILE");
    ContainerfileSpec spec;
    spec.base_image = options.base_image;
    spec.recipe_name = recipe.name;
    spec.recipe_digest = recipe.source_digest;
    if (options.arch) {
        spec.arch = *options.arch;
        spec.arch_args = {"--arch", *options.arch};
    } else {
        spec.arch = recipe.device_fallback_arch.value_or("none");
        spec.arch_args = {"--no-device"};
    }
    spec.venv = options.venv;
    spec.with_uv = options.uv_binary.has_value();
    if (options.lockfile) spec.lockfile_name = options.lockfile->filename().string();
    spec.env = options.env;
    spec.bootstrap_version = options.bootstrap_version;
    return spec;
}

}  // namespace

Status check_image_env(const std::vector<std::pair<std::string, std::string>>& env) {
    for (const auto& [name, value] : env) {
        if (!valid_env_name(name))
            return fail(ErrorCode::usage, fmt::format("--env '{}': not a variable name (NAME=VALUE)", name));
        if (core::is_secret_name(name))
            return fail(ErrorCode::usage,
                        fmt::format("--env {}: a secret-named variable would be written into the Containerfile "
                                    "and the image's history",
                                    name),
                        "give it to the build as a secret (RUN --mount=type=secret) instead");
        if (core::redact_text(value) != value)
            return fail(ErrorCode::usage,
                        fmt::format("--env {}: the value holds credentials ({}) that would be written into the "
                                    "Containerfile and the image's history",
                                    name, core::redact_text(value)),
                        "put the credentials in the recipe's [env] secret variables or a build secret");
    }
    return {};
}

std::string render_containerfile(const ContainerfileSpec& spec) {
    const std::string etc = k_image_etc;
    std::string out;
    out += fmt::format("# Written by `bootstrap containerfile` (bootstrap {}): recipe '{}', arch {}.\n",
                       spec.bootstrap_version, spec.recipe_name, spec.arch);
    out += "# Build with any of: buildah bud -t IMAGE DIR | podman build -t IMAGE DIR | docker build -t IMAGE DIR\n";
    out += fmt::format("# In the image: the venv at {v}, its manifest and history in {v}/.bootstrap/,\n"
                       "# the recipe, lockfile and manifest (manifest.json, manifest.json.sha256) in {e}/.\n",
                       fmt::arg("v", spec.venv), fmt::arg("e", etc));
    out += fmt::format("FROM {}\n", spec.base_image);
    out += "COPY bootstrap/bin/ /usr/local/bin/\n";
    out += fmt::format("COPY bootstrap/etc/ {}/\n", etc);
    for (const auto& s : spec.sources) out += fmt::format("COPY {}/ {}/\n", s.context_dir, s.image_dir);
    out += fmt::format("LABEL org.opencontainers.image.title={} \\\n", label_value(spec.recipe_name));
    out += fmt::format("      io.bootstrap.recipe.name={} \\\n", label_value(spec.recipe_name));
    out += fmt::format("      io.bootstrap.recipe.digest={} \\\n", label_value("sha256:" + spec.recipe_digest));
    out += fmt::format("      io.bootstrap.arch={} \\\n", label_value(spec.arch));
    out += fmt::format("      io.bootstrap.venv={} \\\n", label_value(spec.venv));
    out += fmt::format("      io.bootstrap.version={}\n", label_value(spec.bootstrap_version));

    std::vector<std::string> run = {"bootstrap", "run", etc + "/recipe.toml", "--venv", spec.venv};
    run.insert(run.end(), spec.arch_args.begin(), spec.arch_args.end());
    if (!spec.lockfile_name.empty()) {
        run.push_back("--lockfile");
        run.push_back(etc + "/" + spec.lockfile_name);
    }
    std::vector<std::string> exports = {fmt::format("BOOTSTRAP_HOME={}", k_image_home),
                                        fmt::format("UV_CACHE_DIR={}", k_image_uv_cache),
                                        // the cache mount is another filesystem: copy, never link
                                        "UV_LINK_MODE=copy", "NO_COLOR=1"};
    for (const auto& [name, value] : spec.env) exports.push_back(name + "=" + value);
    // SOURCE_DATE_EPOCH dates what the run records (history, journal, run ids) and what the
    // tools it starts write (py_compile, compilers); an ARG reaches RUN as an environment
    // variable, and `--build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)` overrides it.
    out += "ARG SOURCE_DATE_EPOCH=0\n";
    // One RUN: the caches are mounts (never layers), so a rebuild finds the build cache.
    out += fmt::format("RUN --mount=type=cache,id=bootstrap-home,target={} \\\n", k_image_home);
    out += fmt::format("    --mount=type=cache,id=bootstrap-uv,target={} \\\n", k_image_uv_cache);
    out += fmt::format("    set -e; export {}; \\\n", join_words(exports));
    out += fmt::format("    {} </dev/null; \\\n", join_words(run));
    // Import checks leave timestamp-based .pyc files (they embed the sources' mtimes, which
    // differ between builds); hash-based ones for every module make two builds agree.
    out += fmt::format("    {}/bin/python -m compileall -q -f -j0 --invalidation-mode checked-hash {}/lib \\\n"
                       "        || echo 'compileall: some files did not compile; they stay as they are'; \\\n",
                       shell_word(spec.venv), shell_word(spec.venv));
    out += fmt::format("    bootstrap snapshot --venv {} -o {}/manifest.json; \\\n", shell_word(spec.venv), etc);
    out += fmt::format("    (cd {} && sha256sum manifest.json > manifest.json.sha256); \\\n", etc);
    // Last: the venv's host-local state (lock, logs, caches, stat stamps, timings, uv's
    // uv_cache.json) would make two builds of the same inputs differ (engine/seal.hpp).
    out += fmt::format("    bootstrap seal --venv {}\n", shell_word(spec.venv));
    out += fmt::format("ENV VIRTUAL_ENV={} PATH={}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
                       spec.venv, spec.venv);
    return out;
}

Result<ContainerfileResult> write_build_context(const recipe::Recipe& recipe, const ContainerfileOptions& options) {
    BS_TRY(auto spec, make_spec(recipe, options));
    const fs::path dir = options.output_dir;
    std::error_code ec;
    if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
        return fail(ErrorCode::usage, fmt::format("output directory '{}' exists and is not empty", dir.string()));
    const fs::path stage = dir.parent_path() / fmt::format(".{}.tmp-{}", dir.filename().string(), ::getpid());
    fs::remove_all(stage, ec);
    struct Cleanup {
        fs::path path;
        ~Cleanup() {
            std::error_code ignored;
            if (!path.empty()) fs::remove_all(path, ignored);
        }
    } cleanup{stage};
    BS_CHECK(core::create_directories(stage / "bootstrap" / "bin"));

    BS_CHECK(copy_file(options.bootstrap_binary, stage / "bootstrap/bin/bootstrap", "the bootstrap binary"));
    if (options.uv_binary) BS_CHECK(copy_file(*options.uv_binary, stage / "bootstrap/bin/uv", "uv"));
    const fs::path etc = stage / "bootstrap" / "etc";
    BS_CHECK(copy_file(recipe.file, etc / "recipe.toml", "the recipe"));
    if (options.lockfile) BS_CHECK(copy_file(*options.lockfile, etc / spec.lockfile_name, "the lockfile"));

    // Where the recipe's path sources are here, and where it will look for them in the image:
    // the copy in the context resolves a relative path against its own directory (then the
    // image's k_image_etc), an absolute one (or one from the environment) as here.
    BS_TRY(auto here, path_sources(recipe, options));
    if (!here.empty()) {
        BS_TRY(auto copied, steps::load_recipe(etc / "recipe.toml"));
        BS_TRY(auto there, path_sources(copied, options));
        size_t n = 0;
        for (const auto& [id, host_dir] : here) {
            ContextSource s;
            s.step_id = id;
            s.host_dir = host_dir;
            s.context_dir = fmt::format("sources/{}", n++);
            const auto& image_side = there.count(id) ? there.at(id) : host_dir;
            s.image_dir = is_under(image_side, etc)
                              ? (fs::path(k_image_etc) / fs::path(image_side).lexically_normal().lexically_relative(
                                                             etc.lexically_normal()))
                                    .string()
                              : image_side;
            BS_CHECK(copy_source(s.host_dir, stage / s.context_dir));
            spec.sources.push_back(std::move(s));
        }
    }
    BS_CHECK(core::write_file_atomic(stage / "Containerfile", render_containerfile(spec)));
    if (fs::exists(dir, ec)) fs::remove(dir, ec);  // empty (checked above)
    fs::rename(stage, dir, ec);
    if (ec)
        return fail(ErrorCode::io, fmt::format("cannot move the build context into '{}': {}", dir.string(), ec.message()));
    cleanup.path.clear();
    return ContainerfileResult{dir, std::move(spec)};
}

}  // namespace bootstrap::engine
