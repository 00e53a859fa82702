#include "image/containerfile.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "engine/facts.hpp"
#include "engine/plan.hpp"
#include "image/context_inputs.hpp"
#include "net/download.hpp"
#include "recipe/prescan.hpp"
#include "steps/build_source.hpp"
#include "steps/recipe_kinds.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::image {

namespace {

/// One word for /bin/sh: left bare when it holds only safe characters, else single-quoted.
std::string shell_word(std::string_view s) {
    bool safe = !s.empty();
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) &&
            std::string_view("@%+=:,./-_").find(c) == std::string_view::npos)
            safe = false;
    if (safe) return std::string(s);
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// A LABEL value: double-quoted, with `"`, `\` and `$` escaped (Containerfile syntax), control
/// characters left out.
std::string label_value(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
        if (c == '"' || c == '\\' || c == '$') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// A Containerfile instruction is one line: a value written into it must hold no line break
/// (nor any other control character), or it would add instructions of its own.
Status one_line(std::string_view value, std::string_view what) {
    for (size_t i = 0; i < value.size(); ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c >= 0x20 && c != 0x7f) continue;
        return fail(ErrorCode::usage,
                    fmt::format("{} holds a control character ({} at byte {}); it would be written into the "
                                "Dockerfile, where a line break starts a new instruction",
                                what, c == '\n' ? std::string("a newline") : fmt::format("0x{:02x}", c), i));
    }
    return {};
}

/// An image reference: [registry[:port]/]name[:tag][@digest], no spaces.
Status check_image_reference(std::string_view ref) {
    BS_CHECK(one_line(ref, fmt::format("--base '{}'", core::redact_text(ref))));
    if (ref.empty() || ref.find(' ') != std::string_view::npos)
        return fail(ErrorCode::usage, fmt::format("--base '{}': not an image reference (e.g. debian:12, "
                                                  "nvcr.io/nvidia/cuda:13.0.0-devel-ubuntu24.04)",
                                                  core::redact_text(ref)));
    for (char c : ref)
        if (!std::isalnum(static_cast<unsigned char>(c)) &&
            std::string_view("._-/:@").find(c) == std::string_view::npos)
            return fail(ErrorCode::usage, fmt::format("--base '{}': '{}' is not a character of an image reference",
                                                      core::redact_text(ref), c));
    return {};
}

/// A comment's text: control characters become spaces (the recipe's name is free text).
std::string comment_text(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return out;
}

/// A value of an ENV instruction: double-quoted, with `"`, `\` and `$` escaped.
std::string env_value(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\' || c == '$') out += '\\';
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

/// A plan of `recipe` as the image's build will make it (no GPU probed: the arch options are
/// passed on; no venv: the host's is not the image's). `check_local_inputs`: for the recipe here
/// (what it reads must exist to be copied), not for its copy in the context.
Result<engine::Plan> image_plan(const recipe::Recipe& recipe, const ContainerfileOptions& options,
                                bool check_local_inputs) {
    engine::PlanOptions plan_options;
    plan_options.venv = options.venv;
    plan_options.arch = options.arch;
    plan_options.no_device = options.no_device;
    plan_options.dry_run = true;
    plan_options.probe_devices = false;
    plan_options.check_local_inputs = check_local_inputs;
    plan_options.this_machine = false;
    plan_options.selection.skip = options.skip;
    plan_options.selection.only = options.only;
    BS_TRY(auto facts, engine::gather_facts({}, false));
    // A build secret may be unset here (the build gets it): a stand-in lets the plan expand.
    for (const auto& name : options.secrets) facts.env.emplace(name, "<build secret>");
    return engine::make_plan(recipe, plan_options, facts);
}

/// How to give the build a secret the recipe needs (for refusals).
std::string secret_way(std::string_view name) {
    return fmt::format(
        "give the build its value as a build secret: read {{env.{0}}} in the recipe and pass "
        "`containerfile --secret {0}`, then `--secret id={0},src=FILE` to docker, podman or buildah "
        "(a RUN --mount=type=secret: never written into the Dockerfile or a layer)",
        name);
}

/// The recipe's file as its own messages name it (as given, not made absolute).
std::string recipe_file_shown(const recipe::Recipe& recipe) {
    if (!recipe.venv.loc.file.empty()) return recipe.venv.loc.file;
    for (const auto& step : recipe.steps)
        if (!step.loc.file.empty()) return step.loc.file;
    return recipe.file.string();
}

/// `line` with each placeholder (`{env.NAME}`, `{vars.x:-d}`) replaced by "***", so that a URL
/// whose credentials come from placeholders reads as already redacted.
std::string placeholders_redacted(std::string_view line) {
    std::string out;
    size_t i = 0;
    while (i < line.size()) {
        size_t j = i + 1;
        auto word = [&](size_t& k) {
            size_t start = k;
            while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_')) ++k;
            return k > start;
        };
        bool placeholder = line[i] == '{' && word(j) && j < line.size() && line[j] == '.' && word(++j);
        if (placeholder && line.substr(j, 2) == ":-") j = line.find('}', j);
        if (placeholder && j < line.size() && line[j] == '}') {
            out += core::k_redacted;
            i = j + 1;
        } else {
            out += line[i++];
        }
    }
    return out;
}

/// The recipe's text goes into the image as it is: it must hold no secret value. Refused, at
/// its file:line: a URL with credentials written out (comments included), and a secret-named
/// variable (`[env] set`, a step's `env`) set to a value that is not read from the environment.
Status check_recipe_text(const recipe::Recipe& recipe, std::string_view text) {
    const std::string copied = fmt::format("{}/recipe.toml", k_image_etc);
    size_t line_no = 0;
    for (const auto& line : core::split(text, '\n')) {
        ++line_no;
        const std::string shown = placeholders_redacted(line);
        if (core::redact_text(shown) == shown) continue;
        return fail(ErrorCode::usage,
                    fmt::format("{}:{}: a URL with credentials ({}) would be copied into the image with the recipe "
                                "({}), where every layer's reader sees it",
                                recipe_file_shown(recipe), line_no, core::trim(core::redact_text(shown)), copied),
                    "take the credentials out of the URL (https://USER:{env.NAME}@HOST/...) and " + secret_way("NAME"));
    }
    auto literal = [&](const std::string& name, const recipe::Text& value, std::string_view where) -> Status {
        if (!core::is_secret_name(name, recipe.env_secret) || value.value.empty()) return {};
        if (value.value.find("{env.") != std::string::npos) return {};  // from the environment
        return fail(ErrorCode::usage,
                    fmt::format("{}: {} sets {}, a secret, to a value written in the recipe, which is copied into "
                                "the image ({})",
                                value.loc.str(), where, name, copied),
                    secret_way(name));
    };
    for (const auto& [name, value] : recipe.env_set) BS_CHECK(literal(name, value, "[env] set"));
    for (const auto& step : recipe.steps)
        for (const auto& [name, value] : step.env)
            BS_CHECK(literal(name, value, fmt::format("step '{}' env", step.id)));
    return {};
}

/// `--secret` names: variable names, secret ones (so the image's run masks them), given once,
/// not also an `--env`.
Status check_image_secrets(const recipe::Recipe& recipe, const ContainerfileOptions& options) {
    for (const auto& name : options.secrets) {
        if (!valid_env_name(name))
            return fail(ErrorCode::usage, fmt::format("--secret '{}': not a variable name", name));
        if (!core::is_secret_name(name, recipe.env_secret))
            return fail(ErrorCode::usage,
                        fmt::format("--secret {}: not a secret name, so the image's run would show its value in "
                                    "its output and logs",
                                    name),
                        fmt::format("list it in the recipe's [env] secret = [\"{}\"] (names with TOKEN, SECRET, "
                                    "PASSWORD, _KEY, CREDENTIAL or AUTH are secret already)",
                                    name));
        if (std::count(options.secrets.begin(), options.secrets.end(), name) > 1)
            return fail(ErrorCode::usage, fmt::format("--secret {} is given twice", name));
        for (const auto& [given, value] : options.env)
            if (given == name)
                return fail(ErrorCode::usage, fmt::format("{} is given both as --env and as --secret", name));
    }
    return {};
}

/// Variables that describe the machine, not the recipe's inputs: the image has its own.
bool machine_variable(std::string_view name) {
    static constexpr std::string_view k_names[] = {
        "PATH",        "HOME",           "USER",        "LOGNAME", "SHELL", "PWD",
        "OLDPWD",      "TMPDIR",         "HOSTNAME",    "TERM",    "LANG",  "LD_LIBRARY_PATH",
        "VIRTUAL_ENV", "BOOTSTRAP_HOME", "UV_CACHE_DIR"};
    return std::find(std::begin(k_names), std::end(k_names), name) != std::end(k_names);
}

/// The `{env.NAME}` values the recipe read here, to be set in the RUN; `given` (--env) wins.
Result<std::vector<std::pair<std::string, std::string>>> recipe_env(const recipe::Recipe& recipe,
                                                                    const engine::Plan& plan,
                                                                    const ContainerfileOptions& options) {
    std::vector<std::pair<std::string, std::string>> out;
    const auto& given = options.env;
    for (const auto& [name, read] : plan.env_read) {
        if (!read.value || machine_variable(name)) continue;
        if (std::any_of(given.begin(), given.end(), [&name = name](const auto& g) { return g.first == name; }))
            continue;
        if (std::count(options.secrets.begin(), options.secrets.end(), name)) continue;  // a build secret
        if (core::is_secret_name(name, recipe.env_secret))
            return fail(ErrorCode::usage,
                        fmt::format("{}: the recipe reads {{env.{}}}, a secret-named variable, which an image build "
                                    "would need written into the Dockerfile and the image's history",
                                    read.loc.str(), name),
                        "give it to the build as a build secret: `containerfile --secret " + name +
                            "` (a RUN --mount=type=secret, never written into a layer)");
        if (core::redact_text(*read.value) != *read.value)
            return fail(
                ErrorCode::usage,
                fmt::format("{}: the recipe reads {{env.{}}}, whose value here holds credentials ({}) that "
                            "would be written into the Dockerfile and the image's history",
                            read.loc.str(), name, core::redact_text(*read.value)),
                "take the credentials out of the value (https://USER:{env.NAME}@HOST/...) and " + secret_way("NAME"));
        BS_CHECK(one_line(*read.value, fmt::format("{}: the value of {{env.{}}} here", read.loc.str(), name)));
        out.emplace_back(name, *read.value);
    }
    return out;
}

/// A Dockerfile COPY with its paths as a JSON array (any character a path may hold).
std::string copy_line(std::string_view from, std::string_view to) {
    auto quoted = [](std::string_view s) {  // a JSON string: control characters as \u escapes
        std::string out = "\"";
        for (char c : s) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
                continue;
            }
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        return out + "\"";
    };
    return fmt::format("COPY [{}, {}]\n", quoted(from), quoted(to));
}

Result<ContainerfileSpec> make_spec(const recipe::Recipe& recipe, const ContainerfileOptions& options) {
    if (options.arch && options.no_device) return fail(ErrorCode::usage, "--arch and --no-device exclude each other");
    if (!options.arch && !options.no_device)
        return fail(ErrorCode::usage,
                    "an image is built without a GPU: give its target with --arch (e.g. 9.0) or "
                    "--no-device (the recipe's [device] fallback_arch)");
    if (options.venv.empty() || options.venv[0] != '/')
        return fail(ErrorCode::usage, fmt::format("the image's venv path must be absolute, not '{}'", options.venv));
    BS_CHECK(one_line(options.venv, fmt::format("--venv '{}'", options.venv)));
    BS_CHECK(check_image_reference(options.base_image));
    if (options.arch) BS_CHECK(one_line(*options.arch, fmt::format("--arch '{}'", *options.arch)));
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
    spec.secrets = options.secrets;
    spec.bootstrap_version = options.bootstrap_version;
    spec.skip = options.skip;
    spec.only = options.only;
    for (const auto& id : spec.skip) BS_CHECK(one_line(id, "--skip " + id));
    for (const auto& id : spec.only) BS_CHECK(one_line(id, "--only " + id));
    return spec;
}

}  // namespace

Status check_image_env(const std::vector<std::pair<std::string, std::string>>& env) {
    for (const auto& [name, value] : env) {
        if (!valid_env_name(name))
            return fail(ErrorCode::usage, fmt::format("--env '{}': not a variable name (NAME=VALUE)", name));
        BS_CHECK(one_line(value, fmt::format("--env {}", name)));
        if (core::is_secret_name(name))
            return fail(ErrorCode::usage,
                        fmt::format("--env {}: a secret-named variable would be written into the Dockerfile "
                                    "and the image's history",
                                    name),
                        "give it to the build as a secret (RUN --mount=type=secret) instead");
        if (core::redact_text(value) != value)
            return fail(ErrorCode::usage,
                        fmt::format("--env {}: the value holds credentials ({}) that would be written into the "
                                    "Dockerfile and the image's history",
                                    name, core::redact_text(value)),
                        "put the credentials in the recipe's [env] secret variables or a build secret");
    }
    return {};
}

std::string render_containerfile(const ContainerfileSpec& spec) {
    const std::string etc = k_image_etc;
    std::string out;
    out += fmt::format("# Written by `bootstrap containerfile` (bootstrap {}): recipe '{}', arch {}.\n",
                       spec.bootstrap_version, comment_text(spec.recipe_name), comment_text(spec.arch));
    out +=
        "# Build with any of: DOCKER_BUILDKIT=1 docker build -t IMAGE DIR | podman build -t IMAGE DIR |\n"
        "# buildah bud -t IMAGE DIR\n";
    out +=
        fmt::format("# Behind a TLS-inspecting proxy, give its CA: --secret id={},src=/path/to/ca.pem\n", k_ca_secret);
    for (const auto& name : spec.secrets)
        out += fmt::format("# The recipe reads {{env.{0}}} from a build secret: --secret id={0},src=FILE\n", name);
    out += fmt::format(
        "# In the image: the venv at {v}, its manifest and history in {v}/.bootstrap/,\n"
        "# the recipe, lockfile and manifest (manifest.json, manifest.json.sha256) in {e}/.\n",
        fmt::arg("v", spec.venv), fmt::arg("e", etc));
    out += fmt::format("FROM {}\n", spec.base_image);
    out += "COPY bootstrap/bin/ /usr/local/bin/\n";
    out += fmt::format("COPY bootstrap/etc/ {}/\n", etc);
    for (const auto& s : spec.sources)
        out +=
            s.directory ? copy_line(s.context_path + "/", s.image_path + "/") : copy_line(s.context_path, s.image_path);
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
    for (const auto& [flag, ids] : {std::pair{"--skip", &spec.skip}, std::pair{"--only", &spec.only}})
        if (!ids->empty()) {
            run.emplace_back(flag);
            run.insert(run.end(), ids->begin(), ids->end());
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
    // The CA a site's TLS proxy signs with: an optional secret (absent, nothing is mounted), for
    // the RUN alone; the tools that reach indexes and sources each read their own variable.
    const std::string ca = fmt::format("{}/{}", k_secret_dir, k_ca_secret);
    out += fmt::format("    --mount=type=secret,id={},required=false \\\n", k_ca_secret);
    // The recipe's build secrets: read into the run's environment, never into a layer.
    for (const auto& name : spec.secrets) out += fmt::format("    --mount=type=secret,id={},required=false \\\n", name);
    // The source archives the context carries, where the run looks for downloads it already has.
    if (!spec.downloads.empty())
        out += fmt::format("    --mount=type=bind,source=bootstrap/downloads,target={} \\\n", k_image_downloads);
    out += fmt::format("    set -e; export {}; \\\n", join_words(exports));
    if (!spec.downloads.empty())
        out += fmt::format("    mkdir -p {0}/sources/downloads && cp -Rn {1}/. {0}/sources/downloads/; \\\n",
                           k_image_home, k_image_downloads);
    out += fmt::format(
        "    if [ -f {0} ]; then export SSL_CERT_FILE={0} CURL_CA_BUNDLE={0} REQUESTS_CA_BUNDLE={0} "
        "PIP_CERT={0} GIT_SSL_CAINFO={0}; fi; \\\n",
        ca);
    for (const auto& name : spec.secrets)
        out += fmt::format(
            "    if [ -f {1}/{0} ]; then {0}=\"$(cat {1}/{0})\"; export {0}; else echo 'the build secret "
            "{0} was not given (--secret id={0},src=FILE)' >&2; exit 2; fi; \\\n",
            name, k_secret_dir);
    out += fmt::format("    {} </dev/null; \\\n", join_words(run));
    // Import checks leave timestamp-based .pyc files (they embed the sources' mtimes, which
    // differ between builds); hash-based ones for every module make two builds agree.
    out += fmt::format(
        "    {}/bin/python -m compileall -q -f -j0 --invalidation-mode checked-hash {}/lib \\\n"
        "        || echo 'compileall: some files did not compile; they stay as they are'; \\\n",
        shell_word(spec.venv), shell_word(spec.venv));
    out += fmt::format("    bootstrap snapshot --venv {} -o {}/manifest.json; \\\n", shell_word(spec.venv), etc);
    out += fmt::format("    (cd {} && sha256sum manifest.json > manifest.json.sha256); \\\n", etc);
    // Last: the venv's host-local state (lock, logs, caches, stat stamps, timings, uv's
    // uv_cache.json) would make two builds of the same inputs differ (image/seal.hpp).
    out += fmt::format("    bootstrap seal --venv {}\n", shell_word(spec.venv));
    out += fmt::format("ENV VIRTUAL_ENV={} PATH={}\n", env_value(spec.venv),
                       env_value(spec.venv + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    return out;
}

Result<ContainerfileResult> write_build_context(const recipe::Recipe& recipe, const ContainerfileOptions& options) {
    BS_TRY(auto spec, make_spec(recipe, options));
    BS_CHECK(check_image_secrets(recipe, options));
    // The recipe's text as it will be copied (read once: what is checked is what is copied).
    BS_TRY(const auto recipe_text, core::read_regular_file(recipe.file, recipe::detail::k_max_recipe_bytes));
    if (core::sha256_hex(recipe_text) != recipe.source_digest)
        return fail(ErrorCode::io, fmt::format("{} changed while it was read; run again", recipe.file.string()));
    BS_CHECK(check_recipe_text(recipe, recipe_text));
    // The recipe as the image's build will plan it: what it reads here must exist (to be
    // copied), and every {env.NAME} it reads is known now (an unset one is an error naming the
    // recipe's line, here rather than inside the build).
    BS_TRY(auto here, image_plan(recipe, options, true));
    BS_TRY(auto read, recipe_env(recipe, here, options));
    spec.env.insert(spec.env.end(), read.begin(), read.end());
    const fs::path dir = options.output_dir;
    std::error_code ec;
    if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
        return fail(ErrorCode::usage, fmt::format("output directory '{}' exists and is not empty", dir.string()));
    // Absolute, as the copied recipe's own paths will be (recipe::load makes its file absolute):
    // a relative `-o ctx` must not make the image's paths host paths under the stage.
    fs::path dir_abs = fs::absolute(dir, ec).lexically_normal();
    if (!dir_abs.has_filename()) dir_abs = dir_abs.parent_path();  // `-o ctx/`
    if (ec || !dir_abs.has_filename())
        return fail(ErrorCode::usage, fmt::format("output directory '{}': not a directory name", dir.string()));
    const fs::path stage = dir_abs.parent_path() / fmt::format(".{}.tmp-{}", dir_abs.filename().string(), ::getpid());
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
    BS_CHECK(core::write_file_atomic(etc / "recipe.toml", recipe_text));
    if (options.lockfile) BS_CHECK(copy_file(*options.lockfile, etc / spec.lockfile_name, "the lockfile"));
    BS_CHECK(core::write_file_atomic(etc / k_image_env, recipe::image_defaults_text(image_defaults_of(here, spec))));

    // What the recipe reads here, and where it will look for it in the image: the copy in the
    // context resolves a relative path against its own directory (then the image's
    // k_image_etc), an absolute one (or one from the environment, which the RUN sets as here)
    // as here.
    BS_TRY(auto copied, steps::load_recipe(etc / "recipe.toml"));
    BS_TRY(auto there, image_plan(copied, options, false));
    BS_TRY(spec.sources, context_sources(here, there, copied.file.parent_path(), k_image_etc));
    BS_TRY(spec.downloads, context_downloads(here, stage));
    BS_CHECK(copy_context_sources(spec.sources, stage, dir_abs, recipe.file.parent_path()));
    BS_CHECK(core::write_file_atomic(stage / k_build_file, render_containerfile(spec)));
    if (fs::exists(dir, ec)) fs::remove(dir, ec);  // empty (checked above)
    fs::rename(stage, dir_abs, ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot move the build context into '{}': {}", dir.string(), ec.message()));
    cleanup.path.clear();
    return ContainerfileResult{dir, std::move(spec)};
}

}  // namespace bootstrap::image
