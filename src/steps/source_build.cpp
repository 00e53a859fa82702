#include "steps/source_build.hpp"

#include <gnu/libc-version.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ed25519.hpp"
#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement.hpp"
#include "pyenv/requirement_line.hpp"
#include "pyenv/wheel_name.hpp"
#include "recipe/toml_document.hpp"
#include "state/layout.hpp"
#include "steps/build.hpp"
#include "steps/build_cache.hpp"
#include "steps/build_source.hpp"
#include "steps/pylock_data.hpp"

namespace bootstrap::steps {

namespace {

using Clock = std::chrono::steady_clock;

/// One package to build from source or find built: an sdist, by its sha256. (Fetched and
/// staged as a `build` step's source is, so the other kinds are named too.)
struct SourceRef {
    std::string name;     // normalised
    std::string version;  // "" for a directory whose version only its build tells
    std::string file;     // an sdist's or archive's file name; "" otherwise
    BuildSource::Kind kind = BuildSource::Kind::url;
    std::string location;  // URL (may hold credentials a lock put back), git URL, or directory
    std::string sha256;    // url
    std::string commit;    // git
    std::string subdirectory;

    [[nodiscard]] std::string shown() const {
        return kind == BuildSource::Kind::path ? location : core::redact_url(location);
    }
    [[nodiscard]] std::string label() const { return file.empty() ? shown() : file; }
};

/// What building one package needs besides the sdist.
struct BuildAsk {
    const ResolvedStep& step;
    StepContext& ctx;
    const SourceBuildSpec& spec;
    const pyenv::InstallRequest& sources;  // indexes for the build requirements
    const pyenv::InterpreterFacts& python;
    fs::path work;
};

/// A resolution (`uv pip compile`) run quietly: its output captured, not shown live nor
/// logged unless it fails (then the step's log gets its argv and output, and the error is the
/// installer's). A step whose resolution needs no build logs nothing of it.
Status resolve_quietly(const BuildAsk& a, std::vector<std::string> argv) {
    auto spec = child_spec(a.step, a.ctx, std::move(argv));
    spec.cwd = a.work;
    spec.log_path.clear();
    spec.on_output = {};
    spec.capture = true;
    BS_TRY(auto result, a.ctx.run(spec));
    if (result.ok()) return {};
    log_line(a.ctx, "$ " + core::redact_text(core::format_argv(spec.argv)));
    log_line(a.ctx, result.output);
    return tl::unexpected(child_failure(a.step, spec, result, {}));
}

/// PEP 518's `[build-system] requires` of the project in `tree`; a project without one builds
/// with setuptools (PEP 517's fallback, as uv and pip do).
Result<std::vector<std::string>> build_requires_of(const fs::path& tree, const std::string& sdist) {
    const std::vector<std::string> fallback{"setuptools>=40.8.0"};
    const fs::path pyproject = tree / "pyproject.toml";
    std::error_code ec;
    if (!fs::is_regular_file(pyproject, ec)) return fallback;
    BS_TRY(auto text, core::read_file(pyproject));
    BS_TRY(auto doc, recipe::parse_toml_document(text, sdist + "/pyproject.toml"));
    const auto* system = doc.get("build-system");
    const auto* requires_ = system != nullptr ? system->get("requires") : nullptr;
    if (requires_ == nullptr) return fallback;
    if (!requires_->is(recipe::ValueType::array))
        return fail(
            ErrorCode::invalid_recipe,
            fmt::format("{}/pyproject.toml:{}: [build-system] requires is not an array", sdist, requires_->loc.line));
    std::vector<std::string> out;
    for (const auto& v : requires_->array) {
        if (!v.is(recipe::ValueType::string) || pyenv::unsafe_installer_value(v.string))
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}/pyproject.toml:{}: a [build-system] requirement is not a requirement string",
                                    sdist, v.loc.line));
        out.push_back(v.string);
    }
    return out;
}

/// A build step's view of `ref`'s source, so build_source.hpp fetches and stages it: an
/// archive downloaded once per sha256 into $BOOTSTRAP_HOME/sources/downloads/, a git commit
/// checked out once into sources/git/, a directory as it is.
ResolvedStep as_build_step(const BuildAsk& a, const SourceRef& ref) {
    ResolvedStep tmp = a.step;
    BuildSpec b;
    b.source_kind = ref.kind;
    b.location = ref.location;
    b.rev = ref.commit;
    b.sha256 = ref.sha256;
    b.subdirectory = ref.subdirectory;
    b.home = a.spec.home;
    b.installer = a.spec.installer;
    b.net = a.spec.net;
    b.download_attempts = a.spec.download_attempts;
    b.max_download = a.spec.max_download;
    tmp.spec = std::move(b);
    return tmp;
}

/// What identifies `ref`'s content in its key: "sha256 HEX", "git COMMIT", "tree HEX".
Result<std::string> content_of(const BuildAsk& a, const SourceRef& ref) {
    switch (ref.kind) {
        case BuildSource::Kind::url: return "sha256 " + ref.sha256;
        case BuildSource::Kind::git: return "git " + ref.commit;
        case BuildSource::Kind::path: {
            BS_TRY(auto digest, tree_digest(ref.location, a.spec.home / "sources" / "trees"));
            return "tree " + digest;
        }
    }
    return fail(ErrorCode::internal, "unknown source kind");
}

/// Each requirement pinned as the isolated build environment will have it: uv's resolution of
/// `requires` from the step's indexes, for the venv's interpreter ("setuptools==80.9.0").
Result<std::vector<std::string>> pin_build_requires(const BuildAsk& a, const SourceRef& ref,
                                                    const std::vector<std::string>& requires_) {
    if (requires_.empty()) return std::vector<std::string>{};
    const fs::path in = a.work / ("build-requires-" + ref.name + ".in");
    const fs::path out = a.work / ("pylock.build-requires-" + ref.name + ".toml");
    BS_CHECK(core::write_file_atomic(in, core::join(requires_, "\n") + "\n"));
    pyenv::InstallRequest request;
    request.index_url = a.sources.index_url;
    request.extra_index_urls = a.sources.extra_index_urls;
    request.find_links = a.sources.find_links;
    BS_CHECK(resolve_quietly(a, a.spec.installer->resolve(a.ctx.venv, request, in, out, a.spec.net).argv));
    BS_TRY(auto text, core::read_file(out));
    std::error_code ec;
    fs::remove(out, ec);  // uv's lock names the indexes: no file keeps them
    BS_TRY(auto lock, read_pylock(text, out));
    std::vector<std::string> pins;
    for (const auto& p : lock.packages) pins.push_back(p.name + "==" + p.version);
    std::sort(pins.begin(), pins.end());
    return pins;
}

/// The installed versions of what a build against the venv requires ("torch 2.11.0", "x not
/// installed"), and torch's, which keys its ABI.
struct VenvRequires {
    std::vector<std::string> versions;
    std::string torch_version;
    std::string torch_stamp;
};

Result<VenvRequires> venv_requires(const BuildAsk& a, const std::vector<std::string>& requires_) {
    std::vector<std::string> names{"torch"};
    for (const auto& text : requires_)
        if (auto req = pyenv::Requirement::parse(text); req && req->url.empty()) names.push_back(req->normalized_name);
    std::sort(names.begin() + 1, names.end());
    names.erase(std::unique(names.begin() + 1, names.end()), names.end());
    BS_TRY(auto installed, pyenv::scan_venv_packages(a.python, names));
    VenvRequires out;
    for (size_t i = 1; i < names.size(); ++i) {
        auto it = installed.find(names[i]);
        out.versions.push_back(names[i] + " " + (it == installed.end() ? "not installed" : it->second.version));
    }
    if (auto it = installed.find("torch"); it != installed.end()) {
        const auto& st = it->second.record_stamp;
        out.torch_version = it->second.version;
        out.torch_stamp = fmt::format("{} {} {}", st.size, st.mtime_ns, st.inode);
    }
    return out;
}

/// A wheel with no compiled part: every tag's ABI "none" and platform "any".
bool pure_wheel(const std::string& file) {
    auto w = pyenv::parse_wheel_name(file);
    if (!w) return false;
    return std::all_of(w->abi_tags.begin(), w->abi_tags.end(), [](const auto& t) { return t == "none"; }) &&
           std::all_of(w->platform_tags.begin(), w->platform_tags.end(), [](const auto& t) { return t == "any"; });
}

/// The one wheel a build wrote into `dir`, checked to be `ref`'s name and version.
Result<fs::path> built_wheel(const fs::path& dir, const SourceRef& ref, const std::string& step_id) {
    std::vector<fs::path> wheels;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".whl") wheels.push_back(e.path());
    if (wheels.size() != 1)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': building {} {} from {} left {} wheel(s) in {}, not one", step_id, ref.name,
                                ref.version, ref.label(), wheels.size(), dir.string()));
    auto w = pyenv::parse_wheel_name(wheels[0].filename().string());
    const bool same =
        w && (ref.version.empty() ? w->normalized_name == ref.name : pyenv::is_release_of(*w, ref.name, ref.version));
    if (!same)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': {} built {}, which is not {}{}{}", step_id, ref.label(),
                                wheels[0].filename().string(), ref.name, ref.version.empty() ? "" : " ", ref.version));
    return wheels[0];
}

/// Build `ref` from `tree` into the cache (its full key's lock held), published under the pure
/// key when the wheel is `none-any`.
Result<BuildCache::Entry> build_into(const BuildAsk& a, const SourceRef& ref, const fs::path& tree,
                                     const BuildCache& cache, const BuildKey& full, const BuildKey& pure,
                                     const std::optional<fs::path>& constraints, bool against) {
    BS_TRY(auto signer, core::load_signing_key(a.spec.home));
    BS_TRY(fs::path staging, cache.staging(full.digest));
    pyenv::BuildRequest request;
    request.project = tree;
    request.out_dir = staging;
    request.no_build_isolation = against;
    request.build_constraints = constraints;
    request.sources = a.sources;
    const auto start = Clock::now();
    auto built = run_child(a.step, a.ctx, a.spec.installer->build_wheel(a.ctx.venv, request, a.spec.net).argv, tree);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::error_code ec;
    if (!built) {
        fs::remove_all(staging, ec);
        return tl::unexpected(built.error());
    }
    if (!a.ctx.log_path.empty()) fs::copy_file(a.ctx.log_path, staging / "build.log", ec);  // as a build step's
    auto wheel = built_wheel(staging, ref, a.step.id);
    if (!wheel) {
        fs::remove_all(staging, ec);
        return tl::unexpected(wheel.error());
    }
    const BuildKey& key = pure_wheel(wheel->filename().string()) ? pure : full;
    return cache.publish(key.digest, staging, key.explain, seconds, signer ? &*signer : nullptr);
}

/// `ref` built or found; its wheel copied into `wheels`. nullopt when the sdist cannot be
/// downloaded here (an index that wants credentials for its files, a hash the lock got wrong):
/// uv then fetches, checks and builds it as it would without the cache.
Result<std::optional<SourceBuilt>> build_one(const BuildAsk& a, const SourceRef& ref, const fs::path& wheels) {
    const bool against =
        std::find(a.spec.against_venv.begin(), a.spec.against_venv.end(), ref.name) != a.spec.against_venv.end();
    const ResolvedStep source_step = as_build_step(a, ref);
    auto fetched = fetch_source(source_step, a.ctx);
    if (!fetched) {
        if (fetched.error().code == ErrorCode::interrupted) return tl::unexpected(fetched.error());
        log_line(a.ctx, fmt::format("{} left to uv: {}", ref.name, fetched.error().message));
        return std::nullopt;
    }
    const fs::path tree = a.work / ("src-" + ref.name);
    std::error_code ec;
    fs::remove_all(tree, ec);
    auto cleanup = [&] { fs::remove_all(tree, ec); };
    auto project = stage_source(source_step, *fetched, tree);
    if (!project) {
        cleanup();
        return tl::unexpected(project.error());
    }
    auto content = content_of(a, ref);
    if (!content) {
        cleanup();
        return tl::unexpected(content.error());
    }
    auto requires_ = build_requires_of(*project, ref.label());
    if (!requires_) {
        cleanup();
        return tl::unexpected(requires_.error());
    }

    BuildInputs in;
    in.source = *content;
    in.source_from = ref.shown();
    in.subdirectory = ref.subdirectory;
    in.python = a.python.implementation + " " + a.python.version;
    in.ext_suffix = a.python.ext_suffix;
    in.platform = fmt::format("{} glibc {}", a.python.platform, ::gnu_get_libc_version());
    in.frontend = "uv build";
    in.no_build_isolation = against;
    std::optional<fs::path> constraints;
    std::string torch_version, torch_stamp;
    if (against) {
        auto have = venv_requires(a, *requires_);
        if (!have) {
            cleanup();
            return tl::unexpected(have.error());
        }
        in.build_requires = have->versions;
        torch_version = have->torch_version;
        torch_stamp = have->torch_stamp;
    } else {
        auto pins = pin_build_requires(a, ref, *requires_);
        if (!pins) {
            cleanup();
            return tl::unexpected(pins.error());
        }
        in.build_requires = *pins;
        if (!pins->empty()) {
            constraints = a.work / ("build-constraints-" + ref.name + ".txt");
            BS_CHECK(core::write_file_atomic(*constraints, core::join(*pins, "\n") + "\n"));
        }
    }
    if (auto toolchain = add_toolchain_inputs(a.step, a.ctx, torch_version, torch_stamp, in); !toolchain) {
        cleanup();
        return tl::unexpected(toolchain.error());
    }
    if (!against) in.torch = "not used (an isolated build)";
    const BuildKey pure = make_source_build_key(in, true);
    const BuildKey full = make_source_build_key(in, false);
    log_line(a.ctx, fmt::format("{} {}: build cache keys {} (if the wheel is pure) / {}:\n{}", ref.name, ref.version,
                                pure.digest, full.digest, full.explain));

    BuildCache cache(a.spec.home / "builds");
    const state::Layout layout(a.ctx.venv);
    LazyTrustedKeys trusted{&a.spec.home, &a.spec.trust_env, std::nullopt};
    std::optional<core::EntryTrust> passed;
    auto find = [&]() -> Result<std::optional<std::pair<BuildCache::Entry, std::string>>> {
        for (const auto* key : {&pure, &full}) {
            BS_TRY(auto entry, cache.find_trusted(key->digest, layout.builds() / ("checked-" + key->digest),
                                                  std::ref(trusted), &passed));
            if (entry) return std::make_pair(std::move(*entry), key->digest);
            if (passed)
                log_line(a.ctx, fmt::format("passing over build cache entry {}: {}",
                                            (cache.root() / key->digest).string(), passed->describe()));
            passed.reset();
        }
        return std::nullopt;
    };
    SourceBuilt out{ref.name, ref.version, ref.file, ref.shown(), ref.sha256, {}, {}, {}, false, {}};
    auto found = find();
    if (!found) {
        cleanup();
        return tl::unexpected(found.error());
    }
    std::optional<BuildCache::Entry> entry;
    if (*found) {
        entry = (*found)->first;
        out.key = (*found)->second;
        out.hit = true;
    } else {
        const bool shared = cache.writable();
        const BuildCache own(layout.builds());  // a shared cache this user may not write
        const BuildCache& target = shared ? cache : own;
        auto lock = target.lock(full.digest, a.step.timeout > 0 ? a.step.timeout : 6 * 3600.0, [&](long pid) {
            log_line(a.ctx, fmt::format("another bootstrap (pid {}) is building {}; waiting for it", pid, ref.label()));
        });
        if (!lock) {
            cleanup();
            return tl::unexpected(lock.error());
        }
        for (const auto& left : target.remove_leftovers(full.digest))
            log_line(a.ctx, "removed " + left.string() + ", left by a builder that died");
        if (shared) found = find();  // the builder we waited for published it
        if (found && *found) {
            entry = (*found)->first;
            out.key = (*found)->second;
            out.hit = true;
        } else {
            auto built = build_into(a, ref, *project, target, full, pure, constraints, against);
            if (!built) {
                cleanup();
                return tl::unexpected(built.error());
            }
            out.key = pure_wheel(built->wheel.filename().string()) ? pure.digest : full.digest;
            if (!built->published) BS_CHECK(keep_in_venv(*built, layout.builds() / out.key));
            out.note = fmt::format("{}: built from {} in {} (cache key {}{})", "@NAME@", ref.label(),
                                   core::format_duration(built->build_seconds), out.key.substr(0, 12),
                                   shared ? (built->published ? "" : ", not cached: the entry there is not yours")
                                          : ", not cached: " + cache.root().string() + " is not writable for you");
            entry = std::move(*built);
        }
    }
    cleanup();
    out.wheel = entry->wheel.filename().string();
    if (auto w = pyenv::parse_wheel_name(out.wheel); w && out.version.empty()) out.version = w->version;
    const std::string named = out.name + " " + out.version;
    if (out.hit)
        out.note = fmt::format("{}: build cache hit (key {}, built {}{})", named, out.key.substr(0, 12),
                               entry->built_at, entry->host.empty() ? "" : " on " + entry->host);
    else if (auto at = out.note.find("@NAME@"); at != std::string::npos) out.note.replace(at, 6, named);
    out.wheel_sha256 = entry->sha256;
    BS_CHECK(core::create_directories(wheels));
    fs::copy_file(entry->wheel, wheels / out.wheel, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot copy {} to {}: {}", entry->wheel.string(), wheels.string(), ec.message()));
    log_line(a.ctx, out.note + ": " + entry->wheel.string());
    return out;
}

/// The packages of the step's resolution that uv would build: an sdist and no wheel for the
/// venv, not installed at that version. nullopt (said in the log) when uv cannot resolve here,
/// or when the resolution holds a git or URL reference (a `vcs` or `archive` entry, which a
/// `build` step caches: an install step's direct URL requirement cannot be checked against the
/// venv once installed).
Result<std::optional<std::vector<SourceRef>>> needing_builds(const BuildAsk& a, const InstallSpec& spec) {
    const auto& req = spec.request;
    for (const auto& r : req.requirements)
        if (core::redact_text(r) != r) {  // a credential never goes into a file
            log_line(a.ctx, "builds left to uv: a requirement holds a credential");
            return std::nullopt;
        }
    const fs::path in = a.work / "requirements.in";
    const fs::path out = a.work / "pylock.resolution.toml";
    BS_CHECK(core::write_file_atomic(in, core::join(req.requirements, "\n") + "\n"));
    auto resolved = resolve_quietly(a, a.spec.installer->resolve(a.ctx.venv, req, in, out, a.spec.net).argv);
    if (!resolved) {
        if (resolved.error().code == ErrorCode::interrupted) return tl::unexpected(resolved.error());
        log_line(a.ctx, "builds left to uv: its resolution failed here: " + resolved.error().message);
        return std::nullopt;
    }
    BS_TRY(auto text, core::read_file(out));
    std::error_code ec;
    fs::remove(out, ec);  // uv's lock names the indexes: no file keeps them
    auto lock = read_pylock(text, out);
    if (!lock) {
        log_line(a.ctx,
                 "builds left to uv: its resolution holds a git, URL or directory reference, which a `build` "
                 "step caches (" +
                     lock.error().message + ")");
        return std::nullopt;
    }
    std::vector<std::string> names;
    for (const auto& p : lock->packages) names.push_back(p.name);
    BS_TRY(auto installed, pyenv::scan_venv_packages(a.python, names));
    std::vector<SourceRef> refs;
    std::vector<std::string> shown;
    for (const auto& p : lock->packages) {
        SourceRef ref{p.name, p.version, {}, BuildSource::Kind::url, {}, {}, {}, {}};
        if (p.sdist && p.wheels.empty() && !p.directory) {
            if (auto it = installed.find(p.name);
                it != installed.end() && it->second.version == p.version && !spec.reinstall)
                continue;
            ref.file = p.sdist->file_name;
            ref.location = p.sdist->url.empty() ? "file://" + p.sdist->path : p.sdist->url;
            ref.sha256 = p.sdist->sha256;
        } else {
            continue;
        }
        shown.push_back(ref.name);
        refs.push_back(std::move(ref));
    }
    if (!refs.empty())
        log_line(a.ctx, fmt::format("uv's resolution of the step: {} package(s); built through the build cache: {}",
                                    lock->packages.size(), core::join(shown, ", ")));
    return refs;
}

Result<std::vector<SourceBuilt>> build_all(const BuildAsk& a, const std::vector<SourceRef>& refs) {
    std::vector<SourceBuilt> out;
    for (const auto& ref : refs) {
        BS_TRY(auto built, build_one(a, ref, a.work / "wheels"));
        if (built) out.push_back(std::move(*built));
    }
    return out;
}

Status fresh_dir(const fs::path& dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return core::create_directories(dir);
}

}  // namespace

Result<std::vector<SourceBuilt>> build_step_sdists(const ResolvedStep& step, StepContext& ctx, const InstallSpec& spec,
                                                   const fs::path& work) {
    if (!spec.source_builds || spec.source_builds->installer == nullptr ||
        spec.source_builds->installer->name() != "uv")
        return std::vector<SourceBuilt>{};
    BS_TRY(auto python, pyenv::venv_facts(ctx.venv, step.child_env));
    BS_CHECK(fresh_dir(work));
    const BuildAsk a{step, ctx, *spec.source_builds, spec.request, python, work};
    BS_TRY(auto refs, needing_builds(a, spec));
    if (!refs) return std::vector<SourceBuilt>{};
    return build_all(a, *refs);
}

std::vector<std::string> install_argv_with(const ResolvedStep& step, const std::vector<SourceBuilt>& built,
                                           const fs::path& work) {
    auto argv = step.argv;
    if (!built.empty()) argv.insert(argv.end(), {"--find-links", (work / "wheels").string()});
    return argv;
}

Result<std::vector<SourceBuilt>> build_locked_sdists(const ResolvedStep& step, StepContext& ctx,
                                                     const SourceBuildSpec& spec, const pyenv::InstallRequest& sources,
                                                     const std::vector<LockedSdist>& sdists, const fs::path& work) {
    if (sdists.empty() || spec.installer == nullptr || spec.installer->name() != "uv")
        return std::vector<SourceBuilt>{};
    BS_TRY(auto python, pyenv::venv_facts(ctx.venv, step.child_env));
    BS_CHECK(fresh_dir(work));
    const BuildAsk a{step, ctx, spec, sources, python, work};
    std::vector<SourceRef> refs;
    for (const auto& s : sdists)
        refs.push_back(SourceRef{s.name, s.version, s.file, BuildSource::Kind::url, s.url, s.sha256, {}, {}});
    BS_TRY(auto built, build_all(a, refs));
    for (auto& b : built)
        for (const auto& s : sdists)
            if (s.name == b.name && !s.key.empty() && s.key != b.key)
                b.note += fmt::format(
                    " (the lock recorded key {}: this node's toolchain or build requirements "
                    "differ from the lock's machine; the entry's inputs.txt lists "
                    "this node's inputs)",
                    s.key.substr(0, 12));
    return built;
}

std::map<std::string, SourceBuilt> read_source_builds(const fs::path& venv) {
    std::map<std::string, SourceBuilt> out;
    auto text = core::read_file(state::Layout(venv).source_builds());
    if (!text) return out;
    auto read = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Status {
            for (const auto& [name, p] : j.objects("packages"))
                out[name] =
                    SourceBuilt{name,         p.str("version"), p.str("sdist"),        p.str("url"), p.str("sha256"),
                                p.str("key"), p.str("wheel"),   p.str("wheel_sha256"), false,        {}};
            return {};
        },
        [](const std::string& why) -> Status { return fail(ErrorCode::io, why); });
    if (!read) out.clear();
    return out;
}

Status record_source_builds(const fs::path& venv, const std::vector<SourceBuilt>& built) {
    if (built.empty()) return {};
    auto all = read_source_builds(venv);
    for (const auto& b : built) all[b.name] = b;
    nlohmann::json j{{"version", 1}, {"packages", nlohmann::json::object()}};
    for (const auto& [name, b] : all)
        j["packages"][name] = {{"version", b.version},
                               {"sdist", b.sdist},
                               {"url", b.url},
                               {"sha256", b.sha256},
                               {"key", b.key},
                               {"wheel", b.wheel},
                               {"wheel_sha256", b.wheel_sha256}};
    return core::write_file_atomic(state::Layout(venv).source_builds(), j.dump(1) + "\n");
}

}  // namespace bootstrap::steps
