#include "engine/rollback.hpp"

#include <chrono>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/strings.hpp"
#include "engine/lock.hpp"
#include "engine/plan.hpp"
#include "engine/rollback_fixup.hpp"
#include "exec/process.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::engine {

namespace {

using Clock = std::chrono::steady_clock;
using manifest::InstallSource;
using manifest::RollbackInstall;

constexpr size_t k_tail_lines = 30;

/// One installer command: packages that share an installer and a kind of source.
struct Group {
    const pyenv::Installer* installer = nullptr;
    pyenv::InstallRequest request;
    std::vector<const RollbackInstall*> members;
    bool resolve_check = false;  // index / URL sources: checked with a dry run first
    std::string from;            // for messages: "index http://…", "the artifact store", …
};

/// A wheel installed by path records that path in direct_url.json; that is right only when
/// the original was installed from a URL too (rollback_fixup then restores the URL).
bool install_by_path(const RollbackInstall& i) {
    return i.source.kind == InstallSource::Kind::original_file ||
           (i.source.kind == InstallSource::Kind::artifact && !i.target.origin.url.empty());
}

std::vector<std::string> requirement_args(const RollbackInstall& i) {
    switch (i.source.kind) {
        case InstallSource::Kind::direct_url: return {i.display_name + " @ " + i.source.url};
        case InstallSource::Kind::editable: return {"-e", i.source.url};
        default:
            if (install_by_path(i)) return {i.source.wheel.string()};
            return {i.display_name + "==" + i.version};
    }
}

class Rollback {
public:
    Rollback(const fs::path& venv, const manifest::Manifest& target, const RollbackOptions& options,
             const RollbackObserver& observer)
        : m_venv(venv), m_target(target), m_options(options), m_observer(observer) {}

    Result<RollbackReport> run() {
        const auto start = Clock::now();
        m_report.venv = m_venv;
        m_report.dry_run = m_options.dry_run;
        m_report.run_id = m_options.run_id.empty() ? core::new_run_id() : m_options.run_id;
        m_log = m_venv / ".bootstrap" / "logs" / m_report.run_id / "rollback.log";
        BS_TRY(m_facts, gather_facts(m_venv, true));
        if (!m_facts.python)
            return fail(ErrorCode::not_found,
                        fmt::format("cannot roll back {}: it is not a venv (no bin/python or pyvenv.cfg)",
                                    m_venv.string()));
        BS_CHECK(check_interpreter());
        m_store.emplace(m_options.artifact_root ? *m_options.artifact_root
                                                : manifest::artifact_store_root(m_facts.env));

        BS_TRY(auto current, snapshot("rollback-before"));
        BS_CHECK(setup_installers(current));
        manifest::RollbackSources sources{&*m_store, m_options.find_links, m_options.index_url};
        m_report.plan = manifest::plan_rollback(m_target, current, sources);
        if (m_observer.on_plan) m_observer.on_plan(m_report.plan);
        BS_CHECK(refuse_unreachable("cannot be restored"));

        if (!m_report.plan.empty()) {
            auto groups = group_installs();
            BS_CHECK(check_sources(groups));
            BS_CHECK(refuse_unreachable("failed the reachability check"));
            if (!m_options.dry_run) BS_CHECK(apply(groups));
        }
        m_report.log = fs::exists(m_log) ? m_log : fs::path();
        if (!m_options.dry_run && !m_report.plan.empty()) BS_CHECK(verify_and_record());
        m_report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return m_report;
    }

private:
    void say(const std::string& text) {
        if (m_observer.on_message) m_observer.on_message(text);
        log_line("# " + text);
    }

    void log_line(const std::string& line) {
        std::error_code ec;
        fs::create_directories(m_log.parent_path(), ec);
        std::ofstream(m_log, std::ios::app) << line << '\n';
    }

    Status check_interpreter() const {
        const auto& want = m_target.python.version;
        if (want.empty() || want == m_facts.python->version) return {};
        return fail(ErrorCode::usage,
                    fmt::format("cannot roll back {} to a manifest taken with Python {}: the venv has "
                                "Python {}",
                                m_venv.string(), want, m_facts.python->version),
                    "recreate the venv with that Python first (packages built for one Python "
                    "version do not fit another)");
    }

    Result<manifest::Manifest> snapshot(const std::string& label) const {
        manifest::SnapshotRequest request;
        request.venv = m_venv;
        request.python = *m_facts.python;
        request.env = m_facts.env;
        request.label = label;
        return manifest::take_snapshot(request);
    }

    Status setup_installers(const manifest::Manifest& current) {
        auto path_it = m_facts.env.find("PATH");
        const std::string path = path_it == m_facts.env.end() ? "" : path_it->second;
        m_has_pip = current.packages.count("pip") > 0;
        if (auto uv = pyenv::make_installer("uv", path, "")) m_uv = std::move(*uv);
        if (m_has_pip) {
            BS_TRY(m_pip, pyenv::make_installer("pip", path, m_facts.python->version_short, true));
        }
        const std::string chosen = choose_installer(m_venv, m_options.installer, m_has_pip);
        if (chosen == "uv") {
            if (!m_uv) {
                BS_TRY(m_uv, pyenv::make_installer("uv", path, ""));
            }
            m_default = m_uv.get();
        } else if (chosen == "pip") {
            if (!m_pip)
                return fail(ErrorCode::usage,
                            fmt::format("cannot roll back {} with pip: the venv has no pip",
                                        m_venv.string()),
                            "use --installer uv");
            m_default = m_pip.get();
        } else {
            return fail(ErrorCode::usage,
                        fmt::format("unknown installer '{}' (expected uv or pip)", chosen));
        }
        return {};
    }

    /// The tool that installed the package originally (its INSTALLER is part of RECORD), when
    /// available; else the default.
    const pyenv::Installer* installer_for(const manifest::Package& p) const {
        if (p.installer == "uv" && m_uv) return m_uv.get();
        if (p.installer == "pip" && m_pip) return m_pip.get();
        return m_default;
    }

    std::vector<Group> group_installs() const {
        std::map<std::string, Group> groups;
        for (const auto& i : m_report.plan.install) {
            const auto* installer = installer_for(i.target);
            std::string key = installer->name() + "|";
            Group proto;
            const auto& s = i.source;
            switch (s.kind) {
                case InstallSource::Kind::index:
                    key += "index|" + core::join(s.index_urls, " ");
                    proto.request.index_url = s.index_urls.front();
                    proto.request.extra_index_urls.assign(s.index_urls.begin() + 1, s.index_urls.end());
                    proto.resolve_check = true;
                    proto.from = s.describe();
                    break;
                case InstallSource::Kind::find_links:
                    // One command per directory: another directory may hold a different wheel
                    // of the same name and version.
                    key += "find-links|" + s.wheel.parent_path().string();
                    proto.request.find_links = {s.wheel.parent_path().string()};
                    proto.request.no_index = true;
                    proto.from = "find-links " + s.wheel.parent_path().string();
                    break;
                case InstallSource::Kind::artifact:
                case InstallSource::Kind::original_file:
                    if (install_by_path(i)) {
                        key += "path";
                        proto.from = "local wheels";
                    } else {
                        // Each store entry holds one wheel: the directories can share a command.
                        key += "artifacts";
                        proto.from = "the artifact store";
                    }
                    proto.request.no_index = true;
                    break;
                case InstallSource::Kind::direct_url:
                    key += "url";
                    proto.resolve_check = true;
                    proto.from = "URLs";
                    break;
                case InstallSource::Kind::editable:
                    key += "editable";
                    proto.from = "editable sources";
                    break;
            }
            auto [it, fresh] = groups.try_emplace(key, std::move(proto));
            Group& g = it->second;
            if (fresh) {
                g.installer = installer;
                g.request.no_deps = true;
                g.request.reinstall = true;
            }
            if (s.kind == InstallSource::Kind::artifact && !install_by_path(i))
                g.request.find_links.push_back(s.wheel.parent_path().string());
            auto args = requirement_args(i);
            g.request.requirements.insert(g.request.requirements.end(), args.begin(), args.end());
            g.members.push_back(&i);
        }
        std::vector<Group> out;
        for (auto& [key, g] : groups) out.push_back(std::move(g));
        return out;
    }

    Result<exec::ProcessResult> run_command(const pyenv::Command& c) {
        exec::ProcessSpec spec;
        spec.argv = c.argv;
        spec.cwd = "/";  // neutral: no project discovery (see pyenv/installer.hpp)
        spec.env = exec::compose_environment(m_facts.env, c.env_set, c.env_unset);
        spec.log_path = m_log;
        spec.capture = true;
        log_line("$ " + core::format_argv(spec.argv));
        return exec::run_process(spec);
    }

    Error command_failure(const pyenv::Command& c, const exec::ProcessResult& r,
                          const std::string& what) const {
        ErrorCode code = r.interrupted ? ErrorCode::interrupted
                         : r.timed_out ? ErrorCode::timeout
                                       : ErrorCode::step_failed;
        std::string detail = fmt::format("command: {}\ncwd: /\n", core::format_argv(c.argv));
        if (auto tail = core::last_lines(r.output, k_tail_lines); !tail.empty())
            detail += fmt::format("--- last lines of the log ---\n{}\n", tail);
        detail += fmt::format("log: {}\n", m_log.string());
        if (m_report.changed)
            detail += "the venv is partly rolled back: run the same rollback again to finish it";
        return Error{code,
                     fmt::format("rollback of {}: {} failed: {} {}", m_venv.string(), what,
                                 fs::path(c.argv.front()).filename().string(), r.describe()),
                     detail};
    }

    Status run_checked(const pyenv::Command& c, const std::string& what) {
        BS_TRY(auto r, run_command(c));
        if (!r.ok()) return tl::unexpected(command_failure(c, r, what));
        return {};
    }

    /// Rehash artifacts; resolve index and URL sources with a dry run. A group that fails is
    /// retried one package at a time to name the packages at fault.
    Status check_sources(const std::vector<Group>& groups) {
        for (const auto& i : m_report.plan.install) {
            if (i.source.kind != InstallSource::Kind::artifact) continue;
            if (auto ok = m_store->verify(i.target.origin.artifact_sha256); !ok)
                m_report.plan.unreachable.push_back({i.name, i.version, ok.error().message});
        }
        for (const auto& g : groups) {
            if (!g.resolve_check) continue;
            say(fmt::format("checking {} package(s) against {}", g.members.size(), g.from));
            BS_TRY(bool ok, dry_run(g, g.request));
            if (ok) continue;
            for (const auto* member : g.members) {
                auto single = g.request;
                single.requirements = requirement_args(*member);
                auto c = g.installer->install(m_venv, with_dry_run(single), m_options.net);
                BS_TRY(auto r, run_command(c));
                if (r.interrupted) return tl::unexpected(command_failure(c, r, "the dry run"));
                if (!r.ok())
                    m_report.plan.unreachable.push_back(
                        {member->name, member->version,
                         fmt::format("not available from {}: {}", member->source.describe(),
                                     core::trim(core::last_lines(r.output, 1)))});
            }
        }
        return {};
    }

    static pyenv::InstallRequest with_dry_run(pyenv::InstallRequest r) {
        r.dry_run = true;
        return r;
    }

    Result<bool> dry_run(const Group& g, const pyenv::InstallRequest& request) {
        auto c = g.installer->install(m_venv, with_dry_run(request), m_options.net);
        BS_TRY(auto r, run_command(c));
        if (r.interrupted) return tl::unexpected(command_failure(c, r, "the dry run"));
        return r.ok();
    }

    Status refuse_unreachable(const char* what) const {
        const auto& u = m_report.plan.unreachable;
        if (u.empty()) return {};
        std::string detail;
        for (const auto& x : u) detail += fmt::format("  {} {}: {}\n", x.name, x.version, x.why);
        detail += "nothing was changed";
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} refused: {} package(s) {}", m_venv.string(), u.size(),
                                what),
                    detail);
    }

    Status apply(const std::vector<Group>& groups) {
        std::vector<std::string> removals, pip_last;
        for (const auto& r : m_report.plan.remove) {
            // pip cannot be used after it removed itself: that goes last.
            (r.name == "pip" && m_default == m_pip.get() ? pip_last : removals).push_back(r.name);
        }
        if (!removals.empty()) {
            say(fmt::format("removing {}", core::join(removals, ", ")));
            m_report.changed = true;
            BS_CHECK(run_checked(m_default->uninstall(m_venv, removals), "removing extra packages"));
        }
        for (const auto& g : groups) {
            say(fmt::format("installing {} package(s) from {} with {}", g.members.size(), g.from,
                            g.installer->name()));
            m_report.changed = true;
            BS_CHECK(run_checked(g.installer->install(m_venv, g.request, m_options.net),
                                 "installing from " + g.from));
        }
        BS_CHECK(match_records());
        if (!pip_last.empty()) BS_CHECK(run_checked(m_default->uninstall(m_venv, pip_last), "removing pip"));
        return {};
    }

    /// Bring installer-written metadata in line with the recorded RECORDs (rollback_fixup.hpp).
    Status match_records() {
        BS_TRY(auto installed, pyenv::scan_venv_packages(*m_facts.python));
        for (const auto& i : m_report.plan.install) {
            auto it = installed.find(i.name);
            if (it == installed.end() || i.target.record_sha256.empty()) continue;
            BS_TRY(bool matched, match_record(it->second.dist_info, i.target));
            if (matched) continue;
            log_line(fmt::format("# {} {}: RECORD differs from the target's", i.name, i.version));
        }
        return {};
    }

    Status verify_and_record() {
        say("verifying against the target");
        BS_TRY(auto after, snapshot("rollback"));
        auto mismatches = manifest::package_mismatches(m_target, after);
        if (m_options.write_history) {
            after.run = manifest::RunInfo{m_report.run_id, "rollback",
                                          core::utc_iso8601(), mismatches.empty()};
            BS_TRY(m_report.history, manifest::append_history(m_venv, after));
        }
        if (mismatches.empty()) return {};
        std::string detail;
        for (const auto& m : mismatches) detail += "  " + m + "\n";
        detail += fmt::format("log: {}", m_log.string());
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} finished, but {} package(s) differ from the target",
                                m_venv.string(), mismatches.size()),
                    detail);
    }

    const fs::path m_venv;
    const manifest::Manifest& m_target;
    const RollbackOptions& m_options;
    const RollbackObserver& m_observer;
    Facts m_facts;
    fs::path m_log;
    std::optional<manifest::ArtifactStore> m_store;
    std::unique_ptr<pyenv::Installer> m_uv;
    std::unique_ptr<pyenv::Installer> m_pip;
    const pyenv::Installer* m_default = nullptr;
    bool m_has_pip = false;
    RollbackReport m_report;
};

}  // namespace

std::string choose_installer(const fs::path& venv, const std::string& requested, bool venv_has_pip) {
    if (!requested.empty()) return requested;
    auto cfg = pyenv::read_pyvenv_cfg(venv);
    if (cfg && cfg->count("uv")) return "uv";
    return venv_has_pip ? "pip" : "uv";
}

Result<RollbackReport> rollback_to(const fs::path& venv, const manifest::Manifest& target,
                                   const RollbackOptions& options, const RollbackObserver& observer) {
    return Rollback(venv, target, options, observer).run();
}

Result<RollbackReport> rollback(const fs::path& venv, const manifest::Manifest& target,
                                const RollbackOptions& options, const RollbackObserver& observer) {
    BS_TRY(auto lock, VenvLock::acquire(venv, options.lock_timeout, [&](long pid) {
        if (observer.on_message)
            observer.on_message(fmt::format("waiting for the venv lock held by pid {} (up to {:.0f}s)",
                                            pid, options.lock_timeout));
    }));
    return rollback_to(venv, target, options, observer);
}

}  // namespace bootstrap::engine
