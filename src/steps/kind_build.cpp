// Step kind `build`: a Python package from source (steps/build.hpp says what runs). The source's
// identity (commit, archive sha256 or a tree digest) and the ABI packages' versions go into the
// step key; the build-cache key is computed when the step runs.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "device/toolchain.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/name.hpp"
#include "state/layout.hpp"
#include "steps/build.hpp"
#include "steps/build_cache.hpp"
#include "steps/build_source.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

using recipe::Value;
using recipe::ValueType;

struct BuildFields : recipe::KindFields {
    BuildSource source;  // `source = { git, rev } | { url, sha256 } | { path }`
    bool no_build_isolation = false;
    std::vector<std::pair<std::string, recipe::Text>> config_settings;  // PEP 517 -C key=value
    /// Distributions whose versions the built binary depends on (step key and build-cache key);
    /// default ["torch"] (a CUDA extension built against one torch breaks with another).
    std::vector<std::string> abi_packages{"torch"};
};

/// A value written literally (no placeholder) can be checked now; one with placeholders is
/// checked once expanded.
bool literal(const recipe::Text& t) { return t.value.find('{') == std::string::npos; }

bool contains(const std::vector<std::string>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

/// `source = { git = URL, rev = COMMIT }`, `{ url = URL, sha256 = HEX }` or `{ path = DIR }`,
/// each with optional `subdirectory`.
std::optional<BuildSource> read_source(recipe::ValueReader& rd, const Value& t) {
    BuildSource src;
    src.loc = t.loc;
    auto suggested =
        rd.unknown_keys(t, {"git", "rev", "submodules", "url", "sha256", "path", "subdirectory"}, " in 'source'");
    const Value* git = t.get("git");
    const Value* url = t.get("url");
    const Value* path = t.get("path");
    int kinds = (git != nullptr) + (url != nullptr) + (path != nullptr);
    if (kinds != 1) {
        if (kinds == 0 && !suggested.empty()) return std::nullopt;
        rd.report(src.loc, kinds == 0 ? "'source' needs one of 'git' (with 'rev'), 'url' (with 'sha256') or 'path'"
                                      : "'source' takes only one of 'git', 'url' and 'path'");
        return std::nullopt;
    }
    auto only_with = [&](const char* key, const char* kind) {
        if (const Value* k = t.get(key))
            rd.report(k->loc, fmt::format("'{}' is valid only with '{}' in 'source'", key, kind));
    };
    if (git) {
        src.kind = BuildSource::Kind::git;
        auto location = rd.text(*git, "source.git");
        if (location) src.location = *location;
        if (location && literal(*location))
            if (auto why = recipe::git_url_problem(location->value); !why.empty())
                rd.report(location->loc, fmt::format("'source.git' cannot be '{}': {}", location->value, why));
        only_with("sha256", "url");
        if (const Value* rev = t.get("rev")) {
            src.rev = rd.text(*rev, "source.rev");
            if (src.rev && literal(*src.rev) && !recipe::is_commit_id(src.rev->value))
                rd.report(src.rev->loc,
                          fmt::format("'source.rev' must be a full commit id (40 hex digits), not '{}': a branch "
                                      "or tag can move, and a build must be reproducible",
                                      src.rev->value));
        } else if (!contains(suggested, "rev")) {
            rd.report(src.loc, "a git source needs 'rev', the full commit id to build");
        }
        if (const Value* sub = t.get("submodules"))
            src.submodules = rd.boolean(*sub, "source.submodules").value_or(false);
    } else if (url) {
        src.kind = BuildSource::Kind::url;
        auto location = rd.text(*url, "source.url");
        if (location) src.location = *location;
        only_with("rev", "git");
        only_with("submodules", "git");
        if (const Value* sha = t.get("sha256")) {
            src.sha256 = rd.text(*sha, "source.sha256");
            if (src.sha256 && literal(*src.sha256) && !core::is_sha256_hex(core::to_lower(src.sha256->value)))
                rd.report(src.sha256->loc,
                          fmt::format("'source.sha256' must be 64 hex digits, not '{}'", src.sha256->value));
        } else if (!contains(suggested, "sha256")) {
            rd.report(src.loc, "a url source needs 'sha256': an archive is never built unchecked");
        }
    } else {
        src.kind = BuildSource::Kind::path;
        auto location = rd.text(*path, "source.path");
        if (location) src.location = *location;
        only_with("rev", "git");
        only_with("submodules", "git");
        only_with("sha256", "url");
    }
    if (const Value* sub = t.get("subdirectory")) src.subdirectory = rd.text(*sub, "source.subdirectory");
    return src;
}

/// `config_settings = { "--build-option" = "--cpp_ext" }`: PEP 517 config settings, passed to the
/// build frontend in the order read.
void read_config_settings(recipe::ValueReader& rd, const Value& t, BuildFields& f) {
    for (const auto& entry : t.table)
        if (auto text = rd.text(entry.value, fmt::format("config_settings.{}", entry.key)))
            f.config_settings.emplace_back(entry.key, *text);
}

std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    auto f = std::make_shared<BuildFields>();
    if (const Value* t = rd.table("source",
                                  "a table: { git = URL, rev = COMMIT }, { url = URL, "
                                  "sha256 = HEX } or { path = DIR }"))
        if (auto src = read_source(rd.values(), *t)) f->source = std::move(*src);
    rd.require("source");
    f->no_build_isolation = rd.flag("no_build_isolation");
    if (const Value* t = rd.table("config_settings", "a table of strings")) read_config_settings(rd.values(), *t, *f);
    if (auto abi = rd.strings("abi_packages")) f->abi_packages = std::move(*abi);
    return f;
}

/// Where the source comes from, and its plan-time identity.
Status expand_source(const recipe::Step& step, const BuildSource& src, BuildSpec& b, ResolvedStep& out,
                     PlanContext& ctx) {
    b.source_kind = src.kind;
    BS_TRY(b.location, ctx.text(src.location, out));
    if (src.rev) {
        BS_TRY(b.rev, ctx.text(*src.rev, out));
        if (out.complete && !recipe::is_commit_id(b.rev))
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: 'source.rev' must be a full commit id (40 hex digits), "
                                    "not '{}'",
                                    src.rev->loc.str(), b.rev));
    }
    if (src.sha256) {
        BS_TRY(b.sha256, ctx.text(*src.sha256, out));
        b.sha256 = core::to_lower(b.sha256);
        if (out.complete && !core::is_sha256_hex(b.sha256))
            return fail(ErrorCode::invalid_recipe, fmt::format("{}: 'source.sha256' must be 64 hex digits, not '{}'",
                                                               src.sha256->loc.str(), b.sha256));
    }
    if (src.subdirectory) {
        BS_TRY(b.subdirectory, ctx.text(*src.subdirectory, out));
        if (out.complete && !subdirectory_inside(b.subdirectory))
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: step '{}': source.subdirectory '{}' must stay inside the source tree",
                                    src.subdirectory->loc.str(), step.id, b.subdirectory));
    }
    b.submodules = src.submodules;
    switch (src.kind) {
        case BuildSource::Kind::path: {
            b.location = ctx.local_path(b.location);
            auto digest = tree_digest(b.location, b.home / "sources" / "trees");
            if (!digest) {
                auto err = digest.error();
                err.message = fmt::format("{}: step '{}': {}", src.location.loc.str(), step.id, err.message);
                return tl::unexpected(err);
            }
            b.source_identity = "tree " + *digest;
            BS_CHECK(check_local_input(step, src.location, b.location, "source directory", true, out, ctx));
            break;
        }
        case BuildSource::Kind::git:
            if (auto why = recipe::git_url_problem(b.location); out.complete && !why.empty())
                return fail(ErrorCode::invalid_recipe, fmt::format("{}: 'source.git' cannot be '{}': {}",
                                                                   src.location.loc.str(), b.location_shown(), why));
            b.source_identity =
                fmt::format("git {}@{}{}", b.location_shown(), b.rev, b.submodules ? " +submodules" : "");
            // A repository on this machine (a path, or file://): git reads it as it is.
            if (b.location.rfind("file://", 0) == 0)
                add_local_input(out, b.location.substr(7), true, "git repository", src.location.loc, true);
            else if (b.location.find("://") == std::string::npos && b.location.find(':') == std::string::npos)
                add_local_input(out, b.location, true, "git repository", src.location.loc, true);
            break;
        case BuildSource::Kind::url:
            b.source_identity = "sha256 " + b.sha256;
            if (b.location.rfind("file://", 0) == 0)
                add_local_input(out, b.location.substr(7), false, "source archive", src.location.loc);
            break;
    }
    return {};
}

/// The ABI packages' versions, from their dist-info only (a no-op run scans the venv once, in
/// the runner).
Status read_abi_packages(const BuildFields& s, BuildSpec& b, const PlanContext& ctx) {
    std::vector<std::string> abi;
    for (const auto& name : s.abi_packages) abi.push_back(pyenv::normalize_name(name));
    std::map<std::string, pyenv::Distribution> installed;
    if (ctx.python && !abi.empty()) {
        BS_TRY(installed, pyenv::scan_venv_packages(*ctx.python, abi));
    }
    for (const auto& n : abi) {
        auto it = installed.find(n);
        b.abi_versions.push_back(n + " " + (it == installed.end() ? "not installed" : it->second.version));
        if (n == "torch" && it != installed.end()) {
            const auto& st = it->second.record_stamp;
            b.torch_version = it->second.version;
            b.torch_record_stamp = fmt::format("{} {} {}", st.size, st.mtime_ns, st.inode);
        }
    }
    return {};
}

Status expand(const recipe::Step& step, ResolvedStep& out, PlanContext& ctx, Expansion& ex) {
    const auto& s = *step.fields_as<BuildFields>();
    BuildSpec b;
    b.home = ctx.home;
    // Whose cache entries to trust is the caller's setting, never a recipe's (not in [env]).
    if (ctx.env != nullptr)
        if (auto it = ctx.env->find("BOOTSTRAP_TRUSTED_KEYS"); it != ctx.env->end()) b.trust_env.insert(*it);
    BS_CHECK(expand_source(step, s.source, b, out, ctx));
    b.request.no_build_isolation = s.no_build_isolation;
    for (const auto& [k, v] : s.config_settings) {
        BS_TRY(auto value, ctx.text(v, out));
        b.request.config_settings.emplace_back(k, value);
    }
    BS_CHECK(read_abi_packages(s, b, ctx));
    b.installer = ctx.installer;
    b.net = ctx.net;
    // Installing the built wheel resolves its dependencies: it keeps earlier overrides too
    // (TE's torch extension once put torch's exact cuBLAS pin back over the cublas step).
    b.overrides = earlier_overrides({}, false, ctx);
    if (ctx.locked_run) b.locked_pins = ctx.locked_pins();  // the lock decides every version
    if (!b.overrides.empty() || !b.locked_pins.empty()) b.overrides_file = state::Layout(ctx.venv).overrides(step.id);
    b.download_attempts = ctx.recipe->network.retries + 1;
    b.max_download = ctx.recipe->network.max_download;
    if (ctx.python) {
        b.python_version = ctx.python->version;
        b.python_implementation = ctx.python->implementation;
        b.ext_suffix = ctx.python->ext_suffix;
        b.platform = ctx.python->platform;
    } else {
        out.complete = false;
    }
    // What `plan` shows; the real paths are known when the step runs.
    pyenv::BuildRequest shown = b.request;
    shown.project = b.subdirectory.empty() ? "<copy of the source>" : "<copy of the source>/" + b.subdirectory;
    shown.out_dir = "<build cache staging dir>";
    ex.command = ctx.installer->build_wheel(ctx.venv, shown, ctx.net);
    ex.key_command = ctx.installer->build_wheel(ctx.venv, shown, ctx.key_net);
    out.spec = std::move(b);
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key, const ToolName& tool) {
    const auto& b = std::get<BuildSpec>(step.spec);
    key.add("build.source", b.source_identity);
    key.add("build.subdirectory", b.subdirectory);
    key.add("build.abi_packages", b.abi_versions);
    if (!b.overrides.empty()) {  // which earlier steps' packages the install keeps (as install)
        std::vector<std::string> kept;
        for (const auto& [id, name] : b.overrides) kept.push_back(id + ": " + name);
        key.add("overrides", kept);
    }
    if (!b.locked_pins.empty()) key.add("locked", b.locked_pins);
    // The toolchain by what it is (versions cached by stat); what decides binary compatibility
    // in detail (libstdc++ level, torch's ABI) is in the build-cache key.
    auto cxx = step.child_env.count("CXX") ? step.child_env.at("CXX") : std::string("c++");
    key.add("build.compiler", tool(on_path(cxx, step.child_env)));
    auto nvcc = device::find_nvcc(step.child_env);
    key.add("build.nvcc", nvcc.empty() ? std::string("none") : tool(nvcc.string()));
}

/// Once the child's environment is known: the indexes the wheel's install resolves from.
void environment_known(ResolvedStep& step, const PlanContext& ctx) {
    auto& b = std::get<BuildSpec>(step.spec);
    for (auto& url :
         pyenv::effective_indexes(ctx.installer->name(), pyenv::InstallRequest{}, step.child_env, ctx.venv).all())
        b.index_urls.push_back(core::redact_url(url));
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    BS_CHECK(run_build(step, ctx));
    return Outcome::ran;
}

/// A build whose values use `{device.*}` is checked against those arches before it runs.
void arches_used(ResolvedStep& step, const device::ArchChoice& archs) { std::get<BuildSpec>(step.spec).archs = archs; }

Overrides overrides(const ResolvedStep& step) {
    const auto& b = std::get<BuildSpec>(step.spec);
    return Overrides{&b.overrides_file, &b.overrides, nullptr, b.locked_pins.empty() ? nullptr : &b.locked_pins, false};
}

std::vector<std::string> index_urls(const ResolvedStep& step) { return std::get<BuildSpec>(step.spec).index_urls; }

std::string describe_source(const BuildSpec& b) {
    std::string sub = b.subdirectory.empty() ? "" : fmt::format(" (subdirectory {})", b.subdirectory);
    switch (b.source_kind) {
        case BuildSource::Kind::git:
            return fmt::format("git {} at {}{}{}", b.location_shown(), b.rev, b.submodules ? " with submodules" : "",
                               sub);
        case BuildSource::Kind::url: return fmt::format("archive {} (sha256 {}){}", b.location_shown(), b.sha256, sub);
        case BuildSource::Kind::path: return fmt::format("directory {} ({}){}", b.location, b.source_identity, sub);
    }
    return {};
}

/// With --explain, the build-cache key as it would be computed now (torch, nvcc and the
/// compiler are asked), its inputs, and whether the cache already holds it.
void describe_build_key(const ResolvedStep& step, const fs::path& venv, std::vector<std::string>& out) {
    StepContext ctx;
    ctx.venv = venv;
    auto key = current_build_key(step, ctx);
    if (!key) {
        out.push_back("build key: cannot be computed now: " + key.error().message);
        return;
    }
    const BuildCache cache(std::get<BuildSpec>(step.spec).home / "builds");
    std::string state = "not built yet";
    if (cache.find(key->digest)) {
        // Whether a trusted key signed it is checked when the step runs (it loads the keys).
        auto writer = core::entry_other_writer(cache.root() / key->digest);
        state = writer ? fmt::format(
                             "in the build cache, but another user could have written it ({}): installed "
                             "only if a key you trust signed it",
                             writer->describe())
                       : "in the build cache: installs without building";
    } else if (auto v1 = cache.find_v1(key->inputs)) {
        state = fmt::format("in the build cache as {} entry {}: re-keyed without building", k_build_key_scheme_v1,
                            v1->substr(0, 12));
    }
    out.push_back(fmt::format("build key: {} ({})", key->digest, state));
    for (const auto& line : core::split(key->explain, '\n'))
        if (!line.empty()) out.push_back("  | " + line);
}

void describe(const ResolvedStep& step, const DescribeAsk& ask, Description& out) {
    out.before_argv.push_back("source: " + describe_source(std::get<BuildSpec>(step.spec)));
    if (ask.explain && step.complete) describe_build_key(step, ask.venv, out.explain);
}

void describe_json(const ResolvedStep& step, nlohmann::json& out) {
    const auto& b = std::get<BuildSpec>(step.spec);
    out["build"] = {{"source", b.location_shown()},
                    {"rev", b.rev},
                    {"sha256", b.sha256},
                    {"subdirectory", b.subdirectory},
                    {"identity", b.source_identity},
                    {"abi_packages", b.abi_versions},
                    {"archs", b.archs ? b.archs->derived.torch_arch_list : std::string()}};
}

/// A `url` source whose URL and sha256 are known at plan time (the step itself may not be
/// complete without the image's venv).
std::optional<net::DownloadRequest> archive(const ResolvedStep& step) {
    const auto& b = std::get<BuildSpec>(step.spec);
    if (b.source_kind != BuildSource::Kind::url || b.location.find('<') != std::string::npos ||
        !core::is_sha256_hex(b.sha256))
        return std::nullopt;
    return archive_request(step);
}

}  // namespace

extern const Kind k_build_kind;
const Kind k_build_kind{
    .name = "build",
    .parse = parse,
    .spec = k_spec_index<BuildSpec>,
    .expand = expand,
    .environment_known = environment_known,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .arches_used = arches_used,
    .overrides = overrides,
    .index_urls = index_urls,
    .describe = describe,
    .describe_json = describe_json,
    .archive = archive,
    .runs_installer = true,
    .needs_venv = true,
    .build_env = true,
};

}  // namespace bootstrap::steps
