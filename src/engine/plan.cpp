#include "engine/plan.hpp"

#include <sched.h>

#include <thread>

#include <fmt/format.h>

#include "core/key.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "device/arch.hpp"
#include "device/toolchain.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/name.hpp"
#include "steps/build_source.hpp"
#include "engine/expander.hpp"
#include "exec/process.hpp"
#include "manifest/artifacts.hpp"
#include "core/fs.hpp"
#include "core/redact.hpp"
#include "pyenv/index_config.hpp"
#include "recipe/placeholders.hpp"

namespace bootstrap::engine {

namespace {

// v2: transport settings ([network] timeout/retries) left the key.
constexpr const char* k_step_key_scheme = "bootstrap-step-v2";

// Transport settings ([network] timeout/retries) change how an installer fetches, not what it
// installs: they stay out of the key, so a changed timeout re-runs nothing. A step's command is
// built a second time with these values, which no recipe can set (timeout >= 1, retries >= 0);
// what differs between the two is transport (see without_transport).
constexpr pyenv::NetworkOptions k_key_transport{-1, -1};
constexpr const char* k_transport_shown = "<[network]>";

/// `cmd` without its transport settings: `probe` is the same command built with
/// k_key_transport; an argv word that differs is shown as k_transport_shown, an environment
/// variable that differs is dropped.
pyenv::Command without_transport(const pyenv::Command& cmd, const pyenv::Command& probe) {
    pyenv::Command out = cmd;
    if (probe.argv.size() == cmd.argv.size())
        for (size_t i = 0; i < cmd.argv.size(); ++i)
            if (cmd.argv[i] != probe.argv[i]) out.argv[i] = k_transport_shown;
    for (const auto& [k, v] : cmd.env_set) {
        auto it = probe.env_set.find(k);
        if (it == probe.env_set.end() || it->second != v) out.env_set.erase(k);
    }
    return out;
}

// Pass-through variables that do not change what a step produces; everything else a child can
// see is part of its key. Programs are resolved to absolute paths, so PATH need not be hashed.
bool is_volatile(const std::string& name) {
    static const std::vector<std::string> k_names{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM",
                                                  "NO_COLOR", "TZ", "TMPDIR", "LANG", "LANGUAGE"};
    return core::starts_with(name, "LC_") || core::starts_with(name, "BOOTSTRAP_") ||
           std::find(k_names.begin(), k_names.end(), name) != k_names.end();
}

std::string home_expanded(const std::string& path, const exec::EnvMap& env) {
    auto home = env.find("HOME");
    return core::expand_home(path, home == env.end() ? "" : home->second);
}

/// Names a venv's bin/ provides: a run step saying `python` or `pip` means the venv's, even
/// before the venv step has made it.
bool venv_provides(const std::string& program, const std::string& python_request) {
    return program == "python" || program == "python3" || program == "pip" || program == "pip3" ||
           program == "python" + python_request;
}

int host_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

struct StepBuilder {
    const recipe::Recipe& recipe;
    const PlanOptions& options;
    const Facts& facts;
    Plan& plan;
    Expander& ex;

    fs::path recipe_dir() const { return recipe.file.parent_path(); }

    Result<std::string> text(const recipe::Text& t, steps::ResolvedStep& out) {
        BS_TRY(auto e, ex.expand(t));
        if (!e.complete) out.complete = false;
        return e.value;
    }

    Result<std::vector<std::string>> texts(const std::vector<recipe::Text>& ts, steps::ResolvedStep& out) {
        std::vector<std::string> values;
        for (const auto& t : ts) {
            BS_TRY(auto v, text(t, out));
            values.push_back(std::move(v));
        }
        return values;
    }

    /// Relative local paths (find_links, project, cwd, creates) are taken from the recipe's dir.
    std::string local_path(const std::string& raw) const {
        const std::string value = home_expanded(raw, facts.env);
        if (value.empty() || value.find("://") != std::string::npos || fs::path(value).is_absolute() ||
            value.front() == '<')
            return value;
        return (recipe_dir() / value).lexically_normal().string();
    }

    Status venv_step(steps::ResolvedStep& out) {
        auto cfg = pyenv::read_pyvenv_cfg(plan.venv);
        std::error_code ec;
        if (!cfg && fs::is_directory(plan.venv, ec)) {
            // Not a venv, and not empty: someone's files. Turning it into a venv would mix the
            // two (and --recreate moves them aside and deletes them). bootstrap's own state dir
            // does not count: a first run that failed leaves only that.
            std::vector<std::string> names;
            for (const auto& e : fs::directory_iterator(plan.venv, ec))
                if (e.path().filename() != ".bootstrap")
                    names.push_back(e.path().filename().string());
            std::sort(names.begin(), names.end());
            if (!names.empty() && !options.recreate) {
                const size_t shown = std::min<size_t>(names.size(), 3);
                std::vector<std::string> some(names.begin(),
                                              names.begin() + static_cast<long>(shown));
                return fail(
                    ErrorCode::usage,
                    fmt::format("{}: {} exists and is not a venv (no pyvenv.cfg), but it is not "
                                "empty: it holds {}{}",
                                out.source->loc.str(), plan.venv.string(), core::join(some, ", "),
                                names.size() > shown
                                    ? fmt::format(" and {} more", names.size() - shown)
                                    : std::string()),
                    "choose another venv path, or re-run with --recreate to replace the "
                    "directory's contents with a venv (they are deleted)");
            }
            if (!names.empty()) {
                out.recreate = true;
                out.note = "not a venv: its contents are replaced by a new venv (--recreate)";
            }
        }
        if (cfg) {
            std::string have = pyenv::venv_python_version(*cfg);
            if (pyenv::python_version_matches(have, recipe.venv.python) && !options.recreate) {
                // The argv stays in the plan (and the key) whether or not it will run, so the
                // key does not depend on the venv existing yet.
                out.keep_venv = true;
                out.note = fmt::format("venv exists (Python {}): kept", have);
            }
            else if (!options.recreate)
                return fail(ErrorCode::usage,
                            fmt::format("{}: the venv {} has Python {}, but the recipe asks for {}",
                                        out.source->loc.str(), plan.venv.string(), have, recipe.venv.python),
                            "re-run with --recreate to replace it (its packages are removed; bootstrap's "
                            "journal and logs are kept)");
            else {
                out.recreate = true;
                out.note = fmt::format("venv has Python {}: recreated with {}", have, recipe.venv.python);
            }
        }
        out.argv = plan.installer->create_venv(plan.venv, recipe.venv.python).argv;
        return {};
    }

    Status install_step(const recipe::Step& s, steps::ResolvedStep& out, pyenv::Command& cmd,
                        pyenv::Command& key_cmd) {
        pyenv::InstallRequest req;
        BS_TRY(req.requirements, texts(s.packages, out));
        for (size_t i = 0; i < req.requirements.size(); ++i) {
            auto parsed = pyenv::Requirement::parse(req.requirements[i]);
            if (!parsed)
                return fail(ErrorCode::invalid_recipe,
                            fmt::format("{}: {}", s.packages[i].loc.str(), parsed.error().message));
            out.requirements.push_back(std::move(*parsed));
        }
        if (s.index_url) {
            BS_TRY(auto url, text(*s.index_url, out));
            req.index_url = url;
        }
        BS_TRY(req.extra_index_urls, texts(s.extra_index_urls, out));
        BS_TRY(auto links, texts(s.find_links, out));
        for (auto& l : links) req.find_links.push_back(local_path(l));
        req.upgrade = out.upgrade = s.upgrade;
        req.reinstall = out.reinstall = s.reinstall;
        req.pre = out.pre = s.pre;
        req.no_deps = s.no_deps;
        if (options.locked) {
            lock_install(s, out, req);
            cmd = plan.installer->install(plan.venv, req, plan.net);
            key_cmd = plan.installer->install(plan.venv, req, k_key_transport);
            // uv and pip spell these the same: every pin comes from the file, with its hash.
            for (auto* c : {&cmd, &key_cmd})
                c->argv.insert(c->argv.end(), {"-r", out.requirements_file.string(), "--require-hashes"});
            out.install = std::move(req);
            return {};
        }
        cmd = plan.installer->install(plan.venv, req, plan.net);
        key_cmd = plan.installer->install(plan.venv, req, k_key_transport);
        out.install = std::move(req);
        return {};
    }

    /// --locked: the step installs exactly the locked packages it owned when the lock was
    /// made (pinned, hashed, no dependency resolution); local ones from the artifact store.
    void lock_install(const recipe::Step& s, steps::ResolvedStep& out, pyenv::InstallRequest& req) {
        const auto& lock = *options.locked;
        manifest::ArtifactStore store(manifest::bootstrap_home(facts.env) / "artifacts");
        std::vector<const manifest::LockedPackage*> owned;
        std::map<std::string, fs::path> artifacts;
        out.requirements.clear();
        for (const auto& [name, p] : lock.packages) {
            if (p.origin.step != s.id) continue;
            owned.push_back(&p);
            if (!p.origin.artifact_sha256.empty())
                if (auto stored = store.find(p.origin.artifact_sha256)) artifacts[name] = *stored;
            if (auto r = pyenv::Requirement::parse(name + "==" + p.version)) out.requirements.push_back(*r);
        }
        req.requirements.clear();
        req.no_deps = true;
        req.upgrade = req.reinstall = false;
        out.upgrade = out.reinstall = false;
        out.requirements_file = plan.venv / ".bootstrap" / "locked" / (s.id + ".txt");
        out.requirements_text = manifest::locked_requirements(owned, artifacts);
    }

    Status sync_step(const recipe::Step& s, steps::ResolvedStep& out, pyenv::Command& cmd,
                     pyenv::Command& key_cmd) {
        auto uv = pyenv::find_uv(plan.base_env.count("PATH") ? plan.base_env.at("PATH") : "");
        if (!uv && options.dry_run) uv = fs::path("uv");  // `plan` shows it by name
        if (!uv) return tl::unexpected(uv.error());
        BS_TRY(auto project, text(*s.project, out));
        BS_TRY(auto args, texts(s.args, out));
        if (options.locked && std::find(args.begin(), args.end(), "--locked") == args.end())
            args.push_back("--locked");  // uv.lock is the sync step's own lockfile
        cmd = pyenv::uv_sync(*uv, local_path(project), plan.venv, args, plan.net);
        key_cmd = pyenv::uv_sync(*uv, local_path(project), plan.venv, args, k_key_transport);
        bool inexact = std::find(args.begin(), args.end(), "--inexact") != args.end();
        bool after_install = std::any_of(plan.steps.begin(), plan.steps.end(),
                                         [](const auto& st) { return st.kind == recipe::StepKind::install; });
        if (after_install && !inexact)
            plan.notes.push_back(fmt::format(
                "step '{}': `uv sync` is exact and removes packages installed by earlier install steps; "
                "add \"--inexact\" to its args (SEED-NOTES P7)", s.id));
        return {};
    }

    Status run_step(const recipe::Step& s, steps::ResolvedStep& out) {
        BS_TRY(out.argv, texts(s.argv, out));
        if (s.cwd) {
            BS_TRY(auto cwd, text(*s.cwd, out));
            out.cwd = local_path(cwd);
        }
        if (s.creates) {
            BS_TRY(auto c, text(*s.creates, out));
            out.creates = local_path(c);
        }
        BS_TRY(out.unless, texts(s.unless, out));
        return {};
    }

    /// One C++ source -> <output_dir>/<module><EXT_SUFFIX>, with the venv's own Python headers
    /// (no python3-config) and pybind11's; verified by importing the module from output_dir.
    Status pybind11_step(const recipe::Step& s, steps::ResolvedStep& out) {
        BS_TRY(auto source_text, text(*s.source, out));
        std::string source = local_path(source_text);
        BS_TRY(auto module, text(*s.module, out));
        std::string output_dir = fs::path(source).parent_path().string();
        if (s.output_dir) {
            BS_TRY(auto dir, text(*s.output_dir, out));
            output_dir = local_path(dir);
        }
        std::string cxx = "c++";
        if (s.cxx) {
            BS_TRY(cxx, text(*s.cxx, out));
        }
        std::string include_dir = "<python include dir: known after the venv exists>";
        std::string ext_suffix = "<python.ext_suffix: known after the venv exists>";
        if (facts.python) {
            include_dir = facts.python->include_dir;
            ext_suffix = facts.python->ext_suffix;
        } else {
            out.complete = false;
        }
        out.output = (fs::path(output_dir) / (module + ext_suffix)).string();
        out.argv = {cxx, "-O3", "-shared", "-std=c++17", "-fPIC", "-I" + include_dir};
        if (s.pybind11_include) {
            BS_TRY(auto inc, text(*s.pybind11_include, out));
            out.argv.push_back("-I" + local_path(inc));
        } else {
            out.pybind11_includes = {plan.venv_python.string(), "-m", "pybind11", "--includes"};
            out.includes_at = out.argv.size();
            out.note = "pybind11's include flags: `" + core::format_argv(out.pybind11_includes) +
                       "` when the step runs (or set pybind11_include)";
        }
        BS_TRY(auto extra, texts(s.extra_args, out));
        out.argv.insert(out.argv.end(), extra.begin(), extra.end());
        out.argv.insert(out.argv.end(), {source, "-o", out.output});
        auto digest = core::sha256_file(source);
        out.source_digest = digest ? *digest : "missing";
        out.verify.push_back({recipe::VerifyClause::Kind::import_module, module, {}, {}, false, output_dir});
        return {};
    }

    /// A Python package from source: the source's identity (commit, archive sha256 or a tree
    /// digest) and the ABI packages' versions go into the step key; the build-cache key is
    /// computed when the step runs (steps/build.hpp).
    Status build_step(const recipe::Step& s, steps::ResolvedStep& out, pyenv::Command& cmd,
                      pyenv::Command& key_cmd) {
        const auto& src = *s.build_source;
        steps::BuildSpec b;
        b.source_kind = src.kind;
        b.home = manifest::bootstrap_home(facts.env);
        BS_TRY(b.location, text(src.location, out));
        if (src.rev) {
            BS_TRY(b.rev, text(*src.rev, out));
            if (out.complete && !recipe::is_commit_id(b.rev))
                return fail(ErrorCode::invalid_recipe,
                            fmt::format("{}: 'source.rev' must be a full commit id (40 hex digits), not '{}'",
                                        src.rev->loc.str(), b.rev));
        }
        if (src.sha256) {
            BS_TRY(b.sha256, text(*src.sha256, out));
            b.sha256 = core::to_lower(b.sha256);
            if (out.complete && !recipe::is_sha256_hex(b.sha256))
                return fail(ErrorCode::invalid_recipe, fmt::format("{}: 'source.sha256' must be 64 hex digits, not '{}'",
                                                                   src.sha256->loc.str(), b.sha256));
        }
        if (src.subdirectory) {
            BS_TRY(b.subdirectory, text(*src.subdirectory, out));
        }
        b.submodules = src.submodules;
        switch (src.kind) {
            case recipe::BuildSource::Kind::path: {
                b.location = local_path(b.location);
                BS_TRY(auto digest, steps::tree_digest(b.location, b.home / "sources" / "trees"));
                b.source_identity = "tree " + digest;
                if (digest == "missing")
                    out.note = fmt::format("{} does not exist yet (an earlier step may create it)", b.location);
                break;
            }
            case recipe::BuildSource::Kind::git:
                if (auto why = recipe::git_url_problem(b.location); out.complete && !why.empty())
                    return fail(ErrorCode::invalid_recipe, fmt::format("{}: 'source.git' cannot be '{}': {}",
                                                                       src.location.loc.str(), b.location, why));
                b.source_identity = fmt::format("git {}@{}{}", b.location, b.rev, b.submodules ? " +submodules" : "");
                break;
            case recipe::BuildSource::Kind::url: b.source_identity = "sha256 " + b.sha256; break;
        }
        b.request.no_build_isolation = s.no_build_isolation;
        for (const auto& [k, v] : s.config_settings) {
            BS_TRY(auto value, text(v, out));
            b.request.config_settings.emplace_back(k, value);
        }
        // Only the ABI packages' dist-info is read (a no-op run scans the venv once, in the runner).
        std::vector<std::string> abi;
        for (const auto& name : s.abi_packages) abi.push_back(pyenv::normalize_name(name));
        std::map<std::string, pyenv::Distribution> installed;
        if (facts.python && !abi.empty()) {
            BS_TRY(installed, pyenv::scan_venv_packages(*facts.python, abi));
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
        b.installer = plan.installer;
        b.net = plan.net;
        b.download_attempts = recipe.network.retries + 1;
        b.max_download = recipe.network.max_download;
        if (facts.python) {
            b.python_version = facts.python->version;
            b.python_implementation = facts.python->implementation;
            b.ext_suffix = facts.python->ext_suffix;
            b.platform = facts.python->platform;
        } else {
            out.complete = false;
        }
        // What `plan` shows; the real paths are known when the step runs.
        pyenv::BuildRequest shown = b.request;
        shown.project = b.subdirectory.empty() ? "<copy of the source>" : "<copy of the source>/" + b.subdirectory;
        shown.out_dir = "<build cache staging dir>";
        cmd = plan.installer->build_wheel(plan.venv, shown, plan.net);
        key_cmd = plan.installer->build_wheel(plan.venv, shown, k_key_transport);
        out.build = std::move(b);
        return {};
    }

    /// A program as a file: its real path, size and mtime (ccache's compiler_check=mtime).
    static std::string program_identity(const std::string& program) {
        std::error_code ec;
        fs::path real = fs::canonical(program, ec);
        return ec ? program + " (not found)" : pyenv::file_identity(real);
    }

    // The program a child runs is resolved now, on the child's PATH, so that the plan shows
    // (and the key hashes) the exact file that will run.
    static std::string on_path(const std::string& program, const exec::EnvMap& env) {
        if (program.find('/') != std::string::npos) return program;
        auto it = env.find("PATH");
        auto found = exec::find_program(program, it == env.end() ? "" : it->second);
        return found.empty() ? program : found.string();
    }

    void resolve_program(std::vector<std::string>& argv, const exec::EnvMap& env) {
        if (!argv.empty()) argv[0] = on_path(argv[0], env);
    }

    Result<steps::ResolvedStep> build(const recipe::Step& s, size_t index, const std::string& prev_key) {
        const int device_uses_before = ex.device_uses();
        steps::ResolvedStep out;
        out.source = &s;
        out.id = s.id;
        out.kind = s.kind;
        out.index = index;
        out.optional = s.optional;
        out.cwd = "/";  // neutral: no project discovery, no relative-path surprises
        out.attempts = s.attempts.value_or(
            (s.kind == recipe::StepKind::install || s.kind == recipe::StepKind::sync) ? recipe.network.attempts : 1);
        out.timeout = s.timeout.value_or(0);

        pyenv::Command cmd, key_cmd;
        switch (s.kind) {
            case recipe::StepKind::venv: BS_CHECK(venv_step(out)); break;
            case recipe::StepKind::install: BS_CHECK(install_step(s, out, cmd, key_cmd)); break;
            case recipe::StepKind::sync: BS_CHECK(sync_step(s, out, cmd, key_cmd)); break;
            case recipe::StepKind::run: BS_CHECK(run_step(s, out)); break;
            case recipe::StepKind::check: break;
            case recipe::StepKind::pybind11: BS_CHECK(pybind11_step(s, out)); break;
            case recipe::StepKind::build: BS_CHECK(build_step(s, out, cmd, key_cmd)); break;
        }
        if (!cmd.argv.empty()) out.argv = cmd.argv;
        key_cmd = key_cmd.argv.empty() ? cmd : without_transport(cmd, key_cmd);

        // Environment: recipe-level [env] is already in base_env; now the installer's own
        // variables, then the step's env/env_unset (the step wins).
        for (const auto& [k, v] : recipe.env_set) {
            BS_TRY(auto value, text(v, out));
            out.env_set[k] = value;
        }
        exec::EnvMap key_env_set = out.env_set;  // the same, with the key's transport values
        for (const auto& [k, v] : cmd.env_set) out.env_set[k] = v;
        for (const auto& [k, v] : key_cmd.env_set) key_env_set[k] = v;
        for (const auto& [k, v] : s.env) {
            BS_TRY(auto value, text(v, out));
            out.env_set[k] = value;
            key_env_set[k] = value;
        }
        out.env_unset = recipe.env_unset;
        out.env_unset.insert(out.env_unset.end(), s.env_unset.begin(), s.env_unset.end());
        for (const auto& u : cmd.env_unset) out.env_unset.push_back(u);
        std::erase_if(out.env_unset, [&](const std::string& n) { return out.env_set.count(n) > 0; });
        std::sort(out.env_unset.begin(), out.env_unset.end());
        out.env_unset.erase(std::unique(out.env_unset.begin(), out.env_unset.end()), out.env_unset.end());
        out.child_env = exec::compose_environment(facts.env, out.env_set, out.env_unset);
        if (out.kind == recipe::StepKind::run || out.kind == recipe::StepKind::check) {
            // Run steps and checks work inside the venv, as `launch` does: its bin/ first on
            // PATH, VIRTUAL_ENV set, no PYTHONHOME. A value the step sets itself wins.
            if (!out.env_set.count("VIRTUAL_ENV")) out.child_env["VIRTUAL_ENV"] = plan.venv.string();
            if (!out.env_set.count("PATH")) {
                auto path = out.child_env.find("PATH");
                out.child_env["PATH"] = (plan.venv / "bin").string() +
                                        (path == out.child_env.end() || path->second.empty() ? "" : ":" + path->second);
            }
            if (!out.env_set.count("PYTHONHOME")) out.child_env.erase("PYTHONHOME");
            for (auto* argv : {&out.argv, &out.unless})
                if (!argv->empty() && !out.env_set.count("PATH") && venv_provides((*argv)[0], recipe.venv.python))
                    (*argv)[0] = (plan.venv / "bin" / (*argv)[0]).string();
        }
        resolve_program(out.argv, out.child_env);
        resolve_program(out.unless, out.child_env);
        std::vector<std::string> key_argv = cmd.argv.empty() ? out.argv : key_cmd.argv;
        if (!key_argv.empty() && !out.argv.empty()) key_argv[0] = out.argv[0];
        if (out.install) {
            for (auto& url : pyenv::effective_indexes(plan.installer->name(), *out.install, out.child_env, plan.venv).all())
                out.index_urls.push_back(core::redact_url(url));
        }

        for (const auto& clause : s.verify) {
            steps::ResolvedVerify v{clause.kind, {}, {}, {}, false, {}};
            BS_TRY(v.target, text(clause.target, out));
            if (clause.attr) {
                BS_TRY(v.attr, text(*clause.attr, out));
            }
            if (clause.version) {
                auto e = ex.expand(*clause.version);
                if (!e) return tl::unexpected(e.error());
                if (!e->complete) out.complete = false;
                v.version = e->value;
                if (e->complete) {  // checked here, as PEP 440 lives in pyenv, not recipe
                    auto specifiers = pyenv::SpecifierSet::parse_detailed(v.version);
                    if (!specifiers)
                        return fail(ErrorCode::invalid_recipe,
                                    fmt::format("{}: invalid version specifier '{}' in verify clause "
                                                "'import {}': {}",
                                                clause.version->loc.str(), v.version, v.target,
                                                specifiers.error().what));
                    v.version = specifiers->str();
                }
            }
            if (v.kind == recipe::VerifyClause::Kind::file) v.target = local_path(v.target);
            if (clause.library) {
                BS_TRY(v.library, text(*clause.library, out));
                v.library_is_module = clause.library_is_module;
                // A library path is taken from the venv (lib/python3.12/site-packages/...).
                if (!v.library_is_module && !v.library.empty() && v.library.front() != '<' &&
                    fs::path(v.library).is_relative())
                    v.library = (plan.venv / v.library).lexically_normal().string();
            }
            out.verify.push_back(std::move(v));
        }
        // A build whose values use `{device.*}` is checked against those arches before it runs.
        if (out.build && ex.device_uses() > device_uses_before && ex.device_choice_made())
            out.build->archs = *ex.device_choice_made();
        compute_key(out, prev_key, key_argv, key_env_set);
        return out;
    }

    /// `argv` and `env_set` are the step's own, as built with the key's transport settings.
    void compute_key(steps::ResolvedStep& out, const std::string& prev_key,
                     const std::vector<std::string>& key_argv, const exec::EnvMap& env_set) {
        if (!out.complete) {
            out.key.clear();
            out.key_explain = "(known once the venv exists)\n";
            return;
        }
        // Secrets (credentials in URLs, values of secret-looking variables) are shown as
        // `***` and never hashed: the key and `plan --explain` carry no secret, and rotating a
        // token re-runs nothing.
        const auto& secret = recipe.env_secret;
        core::KeyBuilder key(k_step_key_scheme);
        key.add("previous", prev_key);
        key.add("id", out.id);
        key.add("kind", recipe::to_string(out.kind));
        std::vector<std::string> argv;
        for (const auto& a : key_argv) argv.push_back(core::redact_text(a));
        key.add("argv", argv);
        key.add("cwd", out.cwd.string());
        std::vector<std::string> set;
        for (const auto& [k, v] : env_set) set.push_back(k + "=" + core::shown_value(k, v, secret));
        key.add("env.set", set);
        key.add("env.unset", out.env_unset);
        std::vector<std::string> inherited;
        for (const auto& [k, v] : out.child_env)
            if (!is_volatile(k) && !out.env_set.count(k)) inherited.push_back(k + "=" + core::shown_value(k, v, secret));
        key.add("env.inherited", inherited);
        if (out.kind != recipe::StepKind::run && out.kind != recipe::StepKind::check &&
            out.kind != recipe::StepKind::pybind11)
            key.add("installer", plan.installer->identity());
        if (out.kind == recipe::StepKind::pybind11) {
            key.add("source.sha256", out.source_digest);
            key.add("compiler", out.argv.empty() ? "" : program_identity(out.argv[0]));
            key.add("pybind11.includes", out.pybind11_includes);
        }
        if (out.build) {
            key.add("build.source", out.build->source_identity);
            key.add("build.subdirectory", out.build->subdirectory);
            key.add("build.abi_packages", out.build->abi_versions);
            // Toolchain files by stat (cheap); their versions are in the build-cache key.
            auto cxx = out.child_env.count("CXX") ? out.child_env.at("CXX") : std::string("c++");
            key.add("build.compiler", program_identity(on_path(cxx, out.child_env)));
            auto nvcc = device::find_nvcc(out.child_env);
            key.add("build.nvcc", nvcc.empty() ? std::string("none") : program_identity(nvcc.string()));
        }
        if (out.kind == recipe::StepKind::venv) key.add("python", recipe.venv.python);
        if (out.kind == recipe::StepKind::run) {
            key.add("creates", out.creates);
            key.add("unless", out.unless);
        }
        if (!out.requirements_file.empty()) key.add("locked", out.requirements_text);
        std::vector<std::string> verify;
        for (const auto& v : out.verify) verify.push_back(v.describe());
        key.add("verify", verify);
        out.key = key.digest();
        out.key_explain = key.explain();
    }
};

/// Steps that work in a venv need one: from the recipe's venv step, or already there.
Status check_venv_source(const recipe::Recipe& recipe, const fs::path& venv) {
    bool makes_venv = false;
    const recipe::Step* needs = nullptr;
    for (const auto& s : recipe.steps) {
        if (s.kind == recipe::StepKind::venv) makes_venv = true;
        const bool imports = std::any_of(s.verify.begin(), s.verify.end(), [](const recipe::VerifyClause& v) {
            return v.kind == recipe::VerifyClause::Kind::import_module ||
                   (v.kind == recipe::VerifyClause::Kind::cuda_arch && v.library_is_module);
        });
        const bool works_in_venv = s.kind == recipe::StepKind::install || s.kind == recipe::StepKind::sync ||
                                   s.kind == recipe::StepKind::pybind11 || s.kind == recipe::StepKind::build ||
                                   imports;
        if (!needs && !makes_venv && works_in_venv) needs = &s;
    }
    if (!needs || makes_venv) return {};
    std::error_code ec;
    if (fs::exists(venv / "pyvenv.cfg", ec)) return {};
    return fail(ErrorCode::invalid_recipe,
                fmt::format("{}: step '{}' needs a venv, but the recipe has no `venv` step before it and {} is "
                            "not a venv",
                            needs->loc.str(), needs->id, venv.string()),
                "add a first step `[[step]] id = \"venv\"  kind = \"venv\"`, or point [venv] path (or --venv) "
                "at an existing venv");
}

}  // namespace

std::string Plan::device_origin() const {
    auto archs = device_facts.find("cuda_archs");
    auto from = device_facts.find("cuda_archs_from");
    if (archs == device_facts.end() || from == device_facts.end()) return {};
    return fmt::format("{} ({})", archs->second, from->second);
}

Result<Facts> gather_facts(const fs::path& venv, bool update_caches) {
    Facts facts;
    facts.env = exec::current_environment();
    facts.cpus = host_cpus();
    if (!venv.empty() && fs::exists(venv / "pyvenv.cfg")) {
        auto env = exec::compose_environment(facts.env, {}, {});
        BS_TRY(auto py, pyenv::venv_facts(venv, env, update_caches));
        facts.python = std::move(py);
    }
    return facts;
}

Result<fs::path> resolve_venv_path(const recipe::Recipe& recipe, const PlanOptions& options,
                                   const Facts& facts) {
    fs::path venv;
    if (options.venv) {
        venv = home_expanded(options.venv->string(), facts.env);
        if (venv.is_relative()) venv = fs::current_path() / venv;
    } else {
        Expander ex(recipe, facts);
        BS_CHECK(ex.resolve_vars());
        BS_TRY(auto path, ex.expand(recipe.venv.path));
        if (!path.complete)
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: the venv path must be known before anything runs",
                                    recipe.venv.path.loc.str()));
        venv = home_expanded(path.value, facts.env);
        if (venv.is_relative()) venv = recipe.file.parent_path() / venv;
    }
    // The path goes into line-based state (the facts cache, logs, scripts' shebangs): a newline
    // or other control character would corrupt it, and no real venv needs one.
    const std::string text = venv.string();
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != 0x7f) continue;
        const std::string from =
            options.venv ? std::string("--venv") : recipe.venv.path.loc.str() + ": [venv] path";
        return fail(
            options.venv ? ErrorCode::usage : ErrorCode::invalid_recipe,
            fmt::format("{}: the venv path {} contains a control character ({} at byte {}); "
                        "choose a path without one",
                        from, core::shell_quote(text),
                        c == '\n' ? std::string("a newline") : fmt::format("0x{:02x}", c), i));
    }
    return venv.lexically_normal();
}

Result<Plan> make_plan(const recipe::Recipe& recipe, const PlanOptions& options, const Facts& facts) {
    Plan plan;
    plan.recipe = &recipe;
    BS_TRY(plan.venv, resolve_venv_path(recipe, options, facts));
    plan.venv_python = pyenv::venv_python(plan.venv);
    plan.net = {recipe.network.timeout, recipe.network.retries};

    Expander ex(recipe, facts);
    ex.set_venv(plan.venv);
    ex.set_device(options, &plan);
    BS_CHECK(ex.resolve_vars());

    exec::EnvMap recipe_set;
    for (const auto& [k, v] : recipe.env_set) {
        BS_TRY(auto value, ex.expand(v));
        recipe_set[k] = value.value;
    }
    plan.base_env = exec::compose_environment(facts.env, recipe_set, recipe.env_unset);
    auto path_it = plan.base_env.find("PATH");
    BS_TRY(auto installer, pyenv::make_installer(recipe::to_string(recipe.venv.installer),
                                                 path_it == plan.base_env.end() ? "" : path_it->second,
                                                 recipe.venv.python, options.dry_run));
    plan.installer = std::move(installer);
    if (options.dry_run && plan.installer->identity().ends_with(" missing"))
        plan.notes.push_back(fmt::format("{} is not on PATH: the plan shows it by name; `run` would stop here",
                                         plan.installer->name()));

    if (!facts.python) BS_CHECK(check_venv_source(recipe, plan.venv));
    StepBuilder builder{recipe, options, facts, plan, ex};
    std::string prev_key = fmt::format("recipe-schema-{}", recipe.schema);
    for (size_t i = 0; i < recipe.steps.size(); ++i) {
        BS_TRY(auto step, builder.build(recipe.steps[i], i, prev_key));
        if (prev_key.empty() && !step.key.empty()) {
            // Keys are chained: one unknown key makes every later key unknown too.
            step.key.clear();
            step.key_explain = "(follows a step whose key is known only once the venv exists)\n";
        }
        prev_key = step.key;
        plan.steps.push_back(std::move(step));
    }
    return plan;
}

}  // namespace bootstrap::engine
