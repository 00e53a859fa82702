#include "steps/build.hpp"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/cache_trust.hpp"
#include "core/ed25519.hpp"
#include "core/env_policy.hpp"
#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "device/preflight.hpp"
#include "device/probe.hpp"
#include "device/toolchain.hpp"
#include "inspect/elf_symbols.hpp"
#include "state/layout.hpp"
#include "steps/build_source.hpp"

namespace bootstrap::steps {

namespace {

using Clock = std::chrono::steady_clock;

Result<exec::ProcessResult> run_quiet(const ResolvedStep& step, StepContext& ctx, std::vector<std::string> argv) {
    exec::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = step.child_env;
    spec.cwd = "/";
    spec.capture = true;
    spec.timeout = std::chrono::minutes(2);
    BS_TRY(auto result, ctx.run(spec));
    if (result.interrupted) return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id));
    return result;
}

// torch's build-relevant facts, asked of the venv's interpreter. Not device::probe_torch: that
// one also asks torch for the GPUs, which initialises CUDA (seconds on a node) for nothing here.
// The line the probe prints its answer on starts with this (see k_torch_probe's print).
constexpr std::string_view k_torch_probe_prefix = "bootstrap-torch: ";
const char* k_torch_probe = R"PY(
import torch
print("bootstrap-torch: %s cuda %s cxx11_abi %d" % (torch.__version__, torch.version.cuda,
      int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))))
)PY";

// `<venv>/.bootstrap/torch.facts`: {"version": 1, "torch": "2.11.0", "record": "<RECORD's stat
// stamp>", "facts": "2.11.0 cuda 13.0 cxx11_abi 1"}. Another torch, another version of the file
// or an unreadable one (an older bootstrap's) is a miss, and the file is rewritten.
constexpr int k_torch_cache_version = 1;

std::optional<std::string> read_torch_cache(const fs::path& cache, const std::string& torch,
                                            const std::string& record) {
    auto text = core::read_file(cache);
    if (!text) return std::nullopt;
    auto facts = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<std::string> {
            if (j.integer("version") != k_torch_cache_version || j.str("torch") != torch || j.str("record") != record ||
                j.str("facts").empty())
                return fail(ErrorCode::not_found, "stale");
            return j.str("facts");
        },
        [](const std::string& why) -> Result<std::string> { return fail(ErrorCode::io, why); });
    if (!facts) return std::nullopt;
    return *facts;
}

std::string torch_cache_json(const std::string& torch, const std::string& record, const std::string& facts) {
    nlohmann::json j{{"version", k_torch_cache_version}, {"torch", torch}, {"record", record}, {"facts", facts}};
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// "2.11.0+cu130 cuda 13.0 cxx11_abi 1": importing torch costs seconds on a real node, so the
/// answer is kept in the venv per installed torch (its version and RECORD's stat stamp).
Result<std::string> torch_facts(const ResolvedStep& step, StepContext& ctx, const std::string& torch_version,
                                const std::string& torch_record_stamp) {
    if (torch_version.empty()) return std::string("not installed");
    fs::path cache = state::Layout(ctx.venv).torch_facts();
    if (auto cached = read_torch_cache(cache, torch_version, torch_record_stamp)) return *cached;
    BS_TRY(auto result, run_quiet(step, ctx, {(ctx.venv / "bin" / "python").string(), "-c", k_torch_probe}));
    for (const auto& line : core::split(result.output, '\n'))
        if (auto answer = core::after_prefix(line, k_torch_probe_prefix)) {
            std::string facts(*answer);
            (void)core::write_file_atomic(  // a speed-up only
                cache, torch_cache_json(torch_version, torch_record_stamp, facts));
            return facts;
        }
    return fail(ErrorCode::step_failed, fmt::format("step '{}': cannot import torch in {} to key the build ({})",
                                                    step.id, ctx.venv.string(), core::last_lines(result.output, 1)));
}

/// The newest GLIBCXX_x.y.z that the compiler's libstdc++ defines: the oldest libstdc++ a
/// built extension can load with.
std::string libstdcxx_level(const ResolvedStep& step, StepContext& ctx, const std::string& cxx) {
    auto where = run_quiet(step, ctx, {cxx, "-print-file-name=libstdc++.so.6"});
    if (!where || !where->ok()) return "unknown";
    fs::path lib(std::string(core::trim(where->output)));
    auto symbols = inspect::read_dynamic_symbols(lib);
    if (!symbols) return "unknown (" + lib.string() + ")";
    std::vector<int> best;
    std::string best_name;
    for (const auto& s : *symbols) {
        auto level = core::after_prefix(s.version, "GLIBCXX_");
        if (!level || !s.defined) continue;
        std::vector<int> parts;
        for (const auto& p : core::split(*level, '.')) parts.push_back(core::parse_leading_int<int>(p).value_or(0));
        if (parts > best) {
            best = parts;
            best_name = s.version;
        }
    }
    return best_name.empty() ? "unknown" : best_name;
}

std::string first_line(const std::string& text) {
    auto lines = core::split(text, '\n');
    return lines.empty() ? std::string() : std::string(core::trim(lines[0]));
}

/// `value` with every occurrence of the venv's path as `<venv>`.
std::string with_venv_named(std::string value, const fs::path& venv) {
    const std::string path = venv.string();
    if (path.empty() || path == "/") return value;
    for (size_t at = value.find(path); at != std::string::npos; at = value.find(path, at + 6)) {
        const size_t end = at + path.size();
        if (end < value.size() && value[end] != '/' && value[end] != ':') continue;  // /v is not /venv2
        value.replace(at, path.size(), "<venv>");
    }
    return value;
}

Result<BuildInputs> gather_inputs(const ResolvedStep& step, StepContext& ctx, const std::string& source) {
    const auto& b = *step.build();
    BuildInputs in;
    in.source = core::redact_text(source);
    // Where it came from, for reading only (one line, credentials redacted).
    in.source_from = b.source_kind == BuildSource::Kind::path ? b.location : b.location_shown();
    for (char& c : in.source_from)
        if (c == '\n' || c == '\r') c = '?';
    in.subdirectory = b.subdirectory;
    in.python = b.python_implementation + " " + b.python_version;
    in.ext_suffix = b.ext_suffix;
    in.platform = fmt::format("{} glibc {}", b.platform, ::gnu_get_libc_version());
    in.abi_packages = b.abi_versions;
    if (b.archs) in.arch_list = b.archs->derived.torch_arch_list;
    BS_CHECK(add_toolchain_inputs(step, ctx, b.torch_version, b.torch_record_stamp, in));
    in.frontend = b.installer->name() == "uv" ? "uv build" : "pip wheel";
    in.no_build_isolation = b.request.no_build_isolation;
    for (const auto& [k, v] : b.request.config_settings)
        in.config_settings.push_back(k + "=" + core::shown_value(k, v));
    return in;
}

/// The source's content now: a git commit (never its URL or clone path: mirrors, forks and
/// clones of one commit share a key), an archive's sha256, a directory hashed again (it may have
/// changed since the plan).
Result<std::string> source_identity(const ResolvedStep& step) {
    const auto& b = *step.build();
    if (b.source_kind == BuildSource::Kind::git)
        return fmt::format("git {}{}", b.rev, b.submodules ? " +submodules" : "");
    if (b.source_kind != BuildSource::Kind::path) return b.source_identity;
    BS_TRY(auto digest, tree_digest(b.location, b.home / "sources" / "trees"));
    return "tree " + digest;
}

/// Install the built wheel; reinstalled even when the same version is there (a rebuild for
/// another arch keeps the version). The installer's own variables are already in the step's
/// environment: the plan put the build command's there, and install sets the same ones.
Status install_wheel(const ResolvedStep& step, StepContext& ctx, const fs::path& wheel) {
    const auto& b = *step.build();
    std::string name = core::split(wheel.filename().string(), '-').front();
    pyenv::InstallRequest req;
    req.requirements = {wheel.string()};
    req.overrides_file = b.overrides_file;
    if (b.installer->name() == "uv") {
        req.reinstall_packages = {name};
        return run_child(step, ctx, b.installer->install(ctx.venv, req, b.net).argv, "/");
    }
    // pip: dependencies first, then the wheel itself forced in without touching them.
    BS_CHECK(run_child(step, ctx, b.installer->install(ctx.venv, req, b.net).argv, "/"));
    req.reinstall = true;
    req.no_deps = true;
    return run_child(step, ctx, b.installer->install(ctx.venv, req, b.net).argv, "/");
}

/// Before a CUDA build: torch has kernels for the target, nvcc matches torch's CUDA, nvcc can
/// build for the arches, torch's extension builder accepts the list. A failed check stops the
/// build before its minutes are spent.
Status preflight(const ResolvedStep& step, StepContext& ctx) {
    const auto& b = *step.build();
    if (!b.archs) return {};
    fs::path python = ctx.venv / "bin" / "python";
    auto torch = device::probe_torch(python, step.child_env);
    auto checks = device::build_checks(&torch, *b.archs, python, step.child_env);
    std::vector<std::string> failed;
    for (const auto& c : checks) {
        log_line(ctx, fmt::format("check {}: {} {}", c.name, device::to_string(c.outcome), c.message));
        if (c.outcome == device::CheckResult::Outcome::failed) failed.push_back(c.name + ": " + c.message);
    }
    if (failed.empty()) return {};
    return fail(ErrorCode::step_failed,
                fmt::format("step '{}': not building for {}: {}", step.id, b.archs->derived.torch_arch_list, failed[0]),
                core::join(failed, "\n"));
}

/// Build into the cache (we hold the key's lock): a private copy of the source, the installer's
/// build command, then publish, signed with this user's key when there is one. The copy is
/// removed whatever happens.
Result<BuildCache::Entry> build_into_cache(const ResolvedStep& step, StepContext& ctx, const BuildCache& cache,
                                           const BuildKey& key, const Deadline& deadline) {
    const auto& b = *step.build();
    // Before the build's minutes are spent: a key file others could read is refused.
    BS_TRY(auto signer, core::load_signing_key(b.home));
    BS_CHECK(preflight(step, ctx));
    BS_TRY(auto fetched, fetch_source(step, ctx, deadline));
    if (!fetched.note.empty()) log_line(ctx, fetched.note);
    BS_TRY(fs::path staging, cache.staging(key.digest));
    fs::path src = cache.source_copy(key.digest);
    std::error_code ec;
    fs::remove_all(src, ec);
    auto cleanup = [&](bool staging_too) {
        fs::remove_all(src, ec);
        if (staging_too) fs::remove_all(staging, ec);
    };
    auto project = stage_source(step, fetched, src);
    if (!project) {
        cleanup(true);
        return tl::unexpected(project.error());
    }
    pyenv::BuildRequest request = b.request;
    request.project = *project;
    request.out_dir = staging;
    const auto start = Clock::now();
    auto built = run_child(step, ctx, b.installer->build_wheel(ctx.venv, request, b.net).argv, *project);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    cleanup(!built);
    if (!built) return tl::unexpected(built.error());
    if (!ctx.log_path.empty()) fs::copy_file(ctx.log_path, staging / "build.log", ec);
    return cache.publish(key.digest, staging, key.explain, seconds, signer ? &*signer : nullptr);
}

}  // namespace

/// A build the shared cache could not take, moved from its staging directory into the venv.
Status keep_in_venv(BuildCache::Entry& built, const fs::path& dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    BS_CHECK(core::create_directories(dir.parent_path()));
    fs::rename(built.dir, dir, ec);
    if (ec) {  // another filesystem
        fs::copy(built.dir, dir, fs::copy_options::recursive, ec);
        fs::remove_all(built.dir, ec);
        if (ec)
            return fail(ErrorCode::io,
                        fmt::format("cannot move {} to {}: {}", built.dir.string(), dir.string(), ec.message()));
    }
    built.wheel = dir / built.wheel.filename();
    built.dir = dir;
    return {};
}

Result<const core::TrustedKeys*> LazyTrustedKeys::operator()() {
    if (!keys) {
        BS_TRY(keys, core::load_trusted_keys(*home, *trust_env));
    }
    return &*keys;
}

Status add_toolchain_inputs(const ResolvedStep& step, StepContext& ctx, const std::string& torch_version,
                            const std::string& torch_record_stamp, BuildInputs& in) {
    BS_TRY(in.torch, torch_facts(step, ctx, torch_version, torch_record_stamp));
    fs::path nvcc = device::find_nvcc(step.child_env);
    if (nvcc.empty()) {
        in.nvcc = "none";
    } else if (auto release = device::nvcc_release(nvcc, step.child_env)) {
        in.nvcc = *release;
    } else {
        in.nvcc = "unknown (" + release.error().message + ")";
    }
    auto cxx_it = step.child_env.find("CXX");
    std::string cxx = cxx_it == step.child_env.end() || cxx_it->second.empty() ? "c++" : cxx_it->second;
    auto version = run_quiet(step, ctx, {cxx, "--version"});
    in.compiler = version && version->ok() ? first_line(version->output) : cxx + " (not found)";
    in.libstdcxx = libstdcxx_level(step, ctx, cxx);
    for (const auto& [k, v] : step.child_env) {
        if (core::env_has_use(k, core::EnvUse::build_parallelism) ||
            core::env_has_use(k, core::EnvUse::installer_setting))
            continue;
        // A secret's value never enters the key (rotating a token must not rebuild) nor the
        // inputs.txt on a shared $BOOTSTRAP_HOME; its name does.
        // Inherited variables a build reads (compilers, flags, CUDA, torch/apex/TE switches);
        // the recipe's own env is always part of the key.
        // The venv's own path is no input (TE's CPLUS_INCLUDE_PATH is its site-packages/include):
        // the same build in another venv, at another path, is the same wheel.
        if (step.env_set.count(k) || core::env_has_use(k, core::EnvUse::build_input))
            in.env.push_back(k + "=" + core::shown_value(k, with_venv_named(v, ctx.venv)));
    }
    return {};
}

Result<BuildKey> current_build_key(const ResolvedStep& step, StepContext& ctx) {
    BS_TRY(auto source, source_identity(step));
    BS_TRY(auto inputs, gather_inputs(step, ctx, source));
    return make_build_key(inputs);
}

Status run_build(const ResolvedStep& step, StepContext& ctx) {
    const auto& b = *step.build();
    // The step's timeout bounds the source's download or git fetch too, not only the children.
    Deadline deadline;
    if (step.timeout > 0)
        deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(step.timeout));
    BS_TRY(auto key, current_build_key(step, ctx));
    log_line(ctx, fmt::format("build cache key {}:\n{}", key.digest, key.explain));
    BuildCache cache(b.home / "builds");
    auto short_key = key.digest.substr(0, 12);
    const state::Layout layout(ctx.venv);
    // Another user's entry is checked and installed from a copy inside the venv, kept there as
    // the installed wheel's origin (the artifact store takes it after the step).
    const fs::path checked = layout.builds() / ("checked-" + key.digest);
    LazyTrustedKeys trusted{&b.home, &b.trust_env, std::nullopt};
    std::optional<core::EntryTrust> passed;
    std::string passed_over;  // for the run's report
    auto say = [&](const std::string& msg) {
        log_line(ctx, msg);
        if (ctx.on_output) ctx.on_output(msg + "\n");
    };
    auto pass_over = [&] {
        if (!passed) return;
        say(fmt::format("passing over build cache entry {}: {}; building it here", (cache.root() / key.digest).string(),
                        passed->describe()));
        passed_over = "; passed over the cached entry: " + passed->describe();
        passed.reset();
    };
    // A bootstrap-build-v1 entry of the same inputs (a git source at any URL): re-keyed under
    // this key (`publish_it`, with the key's lock held), or installed from where it is.
    auto adopt = [&](bool publish_it) -> Result<std::optional<BuildCache::Entry>> {
        std::optional<core::EntryTrust> v1_passed;
        std::optional<core::SigningKey> signer;
        if (publish_it) {
            BS_TRY(signer, core::load_signing_key(b.home));
        }
        BS_TRY(auto adopted, cache.adopt_v1(key, layout.builds() / ("checked-v1-" + key.digest), std::ref(trusted),
                                            &v1_passed, publish_it, signer ? &*signer : nullptr));
        if (v1_passed)
            say("passing over a " + std::string(k_build_key_scheme_v1) +
                " build cache entry: " + v1_passed->describe());
        if (!adopted) return adopted;
        if (!adopted->published) BS_CHECK(keep_in_venv(*adopted, layout.builds() / key.digest));
        const auto from = core::split(adopted->rekeyed_from, ' ');
        ctx.note = fmt::format("build cache hit (key {}, {} {} entry {}, built {}{})", short_key,
                               publish_it ? "re-keyed from" : "not re-keyed: the cache is not writable for you; from",
                               from.front(), from.size() > 1 ? from[1].substr(0, 12) : std::string("?"),
                               adopted->built_at, adopted->host.empty() ? "" : " on " + adopted->host);
        return adopted;
    };
    BS_TRY(auto entry, cache.find_trusted(key.digest, checked, std::ref(trusted), &passed));
    if (!entry) {
        pass_over();
        if (cache.writable()) {
            double wait_limit = step.timeout > 0 ? step.timeout : 6 * 3600.0;
            BS_TRY(auto lock, cache.lock(key.digest, wait_limit, [&](long pid) {
                say(fmt::format("another bootstrap (pid {}) is building key {}; waiting for it", pid, short_key));
            }));
            for (const auto& left : cache.remove_leftovers(key.digest))
                log_line(ctx, "removed " + left.string() + ", left by a builder that died");
            // The builder we waited for published it.
            BS_TRY(entry, cache.find_trusted(key.digest, checked, std::ref(trusted), &passed));
            pass_over();
            if (!entry) {
                BS_TRY(entry, adopt(true));
            }
            if (!entry) {
                BS_TRY(auto built, build_into_cache(step, ctx, cache, key, deadline));
                if (!built.published) BS_CHECK(keep_in_venv(built, layout.builds() / key.digest));
                ctx.note = fmt::format("built in {} (cache key {}{})", core::format_duration(built.build_seconds),
                                       short_key, built.published ? "" : ", not cached: the entry there is not yours") +
                           passed_over;
                entry = std::move(built);
            }
        } else {
            // A cache this user may read but not write (another user's, with umask 022): a v1
            // entry is installed from where it is; the build goes to a cache of the venv's own.
            BS_TRY(entry, adopt(false));
        }
        if (!entry) {  // (not writable)
            BuildCache own(layout.builds());
            BS_TRY(auto lock, own.lock(key.digest, 60, {}));
            BS_TRY(auto built, build_into_cache(step, ctx, own, key, deadline));
            ctx.note = fmt::format("built in {} (cache key {}, not cached: {} is not writable for you)",
                                   core::format_duration(built.build_seconds), short_key, cache.root().string()) +
                       passed_over;
            entry = std::move(built);
        }
    }
    if (ctx.note.empty())
        ctx.note = fmt::format("build cache hit (key {}, built {}{})", short_key, entry->built_at,
                               entry->host.empty() ? "" : " on " + entry->host);
    log_line(ctx, ctx.note + ": " + entry->wheel.string());
    return install_wheel(step, ctx, entry->wheel);
}

}  // namespace bootstrap::steps
