#include "rollback/rollback.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "engine/install_repair.hpp"
#include "engine/plan.hpp"
#include "engine/run_manifests.hpp"
#include "exec/process.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/broken_install.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/record.hpp"
#include "rollback/batch.hpp"
#include "rollback/cache_restore.hpp"
#include "rollback/record_match.hpp"
#include "state/layout.hpp"
#include "state/venv_lock.hpp"

namespace bootstrap::rollback {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t k_tail_lines = 30;

long long ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
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
        BS_TRY(auto epoch, core::source_date_epoch());  // it dates the history entry: refused when malformed
        // The seed names the run only under SOURCE_DATE_EPOCH (else the pid does): the target's
        // text is not written out for nothing.
        m_report.run_id = m_options.run_id.empty()
                              ? core::new_run_id(epoch ? core::sha256_hex(manifest::to_json(m_target)) : std::string(),
                                                 state::Layout(m_venv).logs())
                              : m_options.run_id;
        m_log = state::Layout(m_venv).run_logs(m_report.run_id) / "rollback.log";
        BS_TRY(m_facts, engine::gather_facts(m_venv, true));
        if (!m_facts.python)
            return fail(
                ErrorCode::not_found,
                fmt::format("cannot roll back {}: it is not a venv (no bin/python or pyvenv.cfg)", m_venv.string()));
        BS_CHECK(check_interpreter());
        BS_CHECK(check_target());
        m_store.emplace(m_options.artifact_root ? *m_options.artifact_root
                                                : manifest::artifact_store_root(m_facts.env));

        if (auto marker = engine::read_changing_marker(m_venv); marker && !m_options.dry_run) {
            // An install cut short looks whole to a snapshot (its RECORD is there): first remove
            // it, so that the plan restores it.
            say(engine::describe(*marker) + ": checking every installed distribution's files against its RECORD");
            BS_TRY(auto notes, engine::repair_incomplete_installs(*m_facts.python, m_venv));
            for (const auto& note : notes) say(note);
        }
        BS_TRY(auto current, snapshot("rollback-before"));
        // What the rollback leaves alone keeps, in the entry it writes, the origins the venv's
        // records know (the owning step, the indexes): a later lock reads them.
        for (const auto& warning : engine::annotate_from_records(current, m_venv)) log_line("# " + warning);
        BS_CHECK(setup_installers(current));
        RollbackSources sources{&*m_store, m_options.find_links, m_options.index_url};
        m_report.plan = plan_rollback(m_target, without_broken(current), sources);
        plan_broken();
        m_timings.push_back({"snapshot and plan", ms_since(start)});
        if (m_observer.on_plan) m_observer.on_plan(m_report.plan);
        BS_CHECK(refuse_unreachable("cannot be restored"));

        if (!m_report.plan.empty()) {
            verify_artifacts();
            BS_CHECK(refuse_unreachable("failed the reachability check"));
            BS_CHECK(plan_cached_restores());
            auto batches =
                batch_installs(m_rest, [this](const manifest::Package& p) { return installer_for(p)->name(); });
            // Manifests record index URLs without credentials; the caller supplies them now.
            const auto known = pyenv::known_index_urls(m_facts.env, m_venv, m_options.known_index_urls);
            for (auto& b : batches) {
                if (b.request.index_url) b.request.index_url = pyenv::with_credentials(*b.request.index_url, known);
                for (auto& u : b.request.extra_index_urls) u = pyenv::with_credentials(u, known);
            }
            if (m_options.dry_run) {
                for (const auto& b : batches)
                    if (b.resolves) BS_CHECK(check_batch(b));
                BS_CHECK(refuse_unreachable("failed the reachability check"));
            } else {
                // Exact pins and removals change no other distribution: only their RECORDs are kept.
                BS_CHECK(engine::mark_changing(m_venv, {"", m_report.run_id, core::utc_iso8601()}, &*m_facts.python,
                                               touched_names()));
                auto applied = apply(batches, current);
                if (applied) {
                    BS_CHECK(engine::clear_changing(m_venv));
                } else if (core::interrupt_signal() == 0) {
                    auto repaired = engine::repair_incomplete_installs(*m_facts.python, m_venv);
                    if (repaired)
                        for (const auto& note : *repaired) say(note);
                }
                BS_CHECK(applied);
            }
        }
        m_report.log = fs::exists(m_log) ? m_log : fs::path();
        if (!m_options.dry_run && !m_report.plan.empty()) BS_CHECK(verify_and_record(current));
        if (!m_options.dry_run) BS_CHECK(check_no_broken());
        m_report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!m_report.log.empty()) log_timings();
        return m_report;
    }

private:
    struct Timing {
        std::string phase;
        long long ms;
    };

    void say(const std::string& text) {
        if (m_observer.on_message) m_observer.on_message(text);
        log_line("# " + text);
    }

    void log_line(const std::string& line) { core::append_log_line(m_log, line); }

    void log_timings() {
        std::vector<std::string> parts;
        for (const auto& t : m_timings) parts.push_back(fmt::format("{} {} ms", t.phase, t.ms));
        log_line(fmt::format("# took {:.0f} ms: {}", m_report.seconds * 1000, core::join(parts, ", ")));
    }

    /// `current` less its broken installs (Package::broken): to the planner they are missing.
    /// No installer can take them away (pip cannot read them, uv fails on them), so the
    /// rollback removes them itself (remove_broken) and installs the target's version afresh.
    manifest::Manifest without_broken(const manifest::Manifest& current) {
        manifest::Manifest out = current;
        for (const auto& [name, p] : current.packages)
            if (!p.broken.empty()) {
                m_broken[name] = p;
                out.packages.erase(name);
            }
        return out;
    }

    /// Show each broken install in the plan: reinstalled when the target has it, else removed.
    void plan_broken() {
        auto& plan = m_report.plan;
        for (const auto& [name, p] : m_broken) {
            auto it = std::find_if(plan.install.begin(), plan.install.end(),
                                   [&name = name](const RollbackInstall& i) { return i.name == name; });
            if (it != plan.install.end()) {
                it->current = p.version;
                it->reason = fmt::format("broken install: {}", p.broken);
            } else if (!m_target.packages.count(name)) {
                plan.remove.push_back({name, p.version});
            }
            // Else the target's package is unreachable: the plan says so and nothing changes.
        }
        std::sort(plan.remove.begin(), plan.remove.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    }

    /// Remove the broken installs (after every check passed, before the first install).
    Status remove_broken() {
        if (m_broken.empty()) return {};
        BS_TRY(auto notes, pyenv::remove_broken_installs(*m_facts.python));
        for (const auto& note : notes) say(note);
        if (!notes.empty()) m_report.changed = true;
        return {};
    }

    /// A rollback is not done while a broken install remains: one the plan could not touch, or
    /// one the rollback's own changes left. Under the venv's lock nothing else changes it, so the
    /// packages it touched and those broken before are all that is read again.
    Status check_no_broken() const {
        std::vector<std::string> names = touched_names();
        for (const auto& [name, p] : m_broken) names.push_back(name);
        if (names.empty()) return {};
        BS_TRY(auto now, pyenv::scan_venv_packages(*m_facts.python, names, /*include_broken=*/true));
        std::vector<std::string> broken;
        for (const auto& [name, d] : now)
            if (!d.broken.empty()) broken.push_back(fmt::format("{} {} ({})", d.name, d.version, d.broken));
        if (broken.empty()) return {};
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} leaves {} broken install(s): {}", m_venv.string(), broken.size(),
                                core::join(broken, ", ")),
                    "run the rollback again; `bootstrap doctor --venv " + m_venv.string() + "` shows them");
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

    /// Every name, version and digest goes onto an installer's command line or decides what
    /// is removed: a bad one refuses the target before anything changes.
    Status check_target() const {
        auto problems = target_problems(m_target);
        if (problems.empty()) return {};
        std::string detail;
        for (const auto& p : problems) detail += "  " + p + "\n";
        detail += "nothing was changed";
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} refused: the target has {} invalid entr{}", m_venv.string(),
                                problems.size(), problems.size() == 1 ? "y" : "ies"),
                    detail);
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
                            fmt::format("cannot roll back {} with pip: the venv has no pip", m_venv.string()),
                            "use --installer uv");
            m_default = m_pip.get();
        } else {
            return fail(ErrorCode::usage, fmt::format("unknown installer '{}' (expected uv or pip)", chosen));
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

    const pyenv::Installer* installer_named(const std::string& name) const {
        return name == "pip" ? m_pip.get() : m_uv.get();
    }

    Result<exec::ProcessResult> run_command(const pyenv::Command& c) {
        exec::ProcessSpec spec;
        spec.argv = c.argv;
        spec.cwd = "/";  // neutral: no project discovery (see pyenv/installer.hpp)
        spec.env = exec::compose_environment(m_facts.env, c.env_set, c.env_unset);
        spec.log_path = m_log;
        spec.capture = true;
        log_line("$ " + core::redact_text(core::format_argv(spec.argv)));
        return exec::run_process(spec);
    }

    Error command_failure(const pyenv::Command& c, const exec::ProcessResult& r, const std::string& what) const {
        ErrorCode code = r.interrupted ? ErrorCode::interrupted
                         : r.timed_out ? ErrorCode::timeout
                                       : ErrorCode::step_failed;
        std::string detail = fmt::format("command: {}\ncwd: /\n", core::redact_text(core::format_argv(c.argv)));
        if (auto tail = core::last_lines(r.output, k_tail_lines); !tail.empty())
            detail += fmt::format("--- last lines of the log ---\n{}\n", tail);
        detail += fmt::format("log: {}\n", m_log.string());
        detail += m_report.changed ? "the venv is partly rolled back: run the same rollback again to finish it"
                                   : "nothing was changed";
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

    /// Artifacts are rehashed: the store proves a wheel's availability only with its bytes.
    void verify_artifacts() {
        for (const auto& i : m_report.plan.install) {
            if (i.source.kind != InstallSource::Kind::artifact) continue;
            if (auto ok = m_store->verify(i.target.origin.artifact_sha256); !ok)
                m_report.plan.unreachable.push_back({i.name, i.version, ok.error().message});
        }
    }

    static pyenv::InstallRequest with_dry_run(pyenv::InstallRequest r) {
        r.dry_run = true;
        return r;
    }

    /// Resolve `b` with the installer's dry run; when that fails, one package at a time, to
    /// list the packages at fault as unreachable.
    Status check_batch(const InstallBatch& b) {
        say(fmt::format("checking {} package(s) against {}", b.members.size(), b.from));
        const auto* installer = installer_named(b.installer);
        auto c = installer->install(m_venv, with_dry_run(b.request), m_options.net);
        BS_TRY(auto r, run_command(c));
        if (r.interrupted) return tl::unexpected(command_failure(c, r, "the dry run"));
        if (r.ok()) return {};
        return find_unreachable(b);
    }

    Status find_unreachable(const InstallBatch& b) {
        const auto* installer = installer_named(b.installer);
        for (const auto* member : b.members) {
            const auto kind = member->source.kind;
            if (kind != InstallSource::Kind::index && kind != InstallSource::Kind::direct_url) continue;
            auto single = b.request;
            single.requirements = requirement_args(*member);
            single.reinstall_packages.clear();
            if (member->reinstall && installer->name() == "uv") single.reinstall_packages = {member->name};
            auto c = installer->install(m_venv, with_dry_run(single), m_options.net);
            BS_TRY(auto r, run_command(c));
            if (r.interrupted) return tl::unexpected(command_failure(c, r, "the dry run"));
            if (!r.ok())
                m_report.plan.unreachable.push_back({member->name, member->version,
                                                     fmt::format("not available from {}: {}", member->source.describe(),
                                                                 core::trim(core::last_lines(r.output, 1)))});
        }
        return {};
    }

    Status refuse_unreachable(const char* what) const {
        const auto& u = m_report.plan.unreachable;
        if (u.empty()) return {};
        std::string detail;
        for (const auto& x : u) detail += fmt::format("  {} {}: {}\n", x.name, x.version, x.why);
        detail += "nothing was changed";
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} refused: {} package(s) {}", m_venv.string(), u.size(), what), detail);
    }

    /// Install, then remove. The installers resolve and download everything before they
    /// change the venv, so the first command needs no dry run: when it fails, nothing has
    /// changed and a dry run per package names the ones at fault. Later commands that resolve
    /// are dry-run before the first one runs, to keep the whole change all-or-nothing.
    /// Extras go last, after they gave up the files a restored package shares with them.
    Status apply(const std::vector<InstallBatch>& batches, const manifest::Manifest& current) {
        auto t = Clock::now();
        for (size_t k = 1; k < batches.size(); ++k)
            if (batches[k].resolves) BS_CHECK(check_batch(batches[k]));
        BS_CHECK(refuse_unreachable("failed the reachability check"));
        if (batches.size() > 1) m_timings.push_back({"checks", ms_since(t)});

        t = Clock::now();
        BS_CHECK(remove_broken());
        if (!m_cached.empty()) {
            BS_CHECK(restore_cached());
            m_timings.push_back({"restore from uv's cache", ms_since(t)});
            t = Clock::now();
        }
        for (const auto& b : batches) BS_CHECK(install(b, current));
        if (!batches.empty()) m_timings.push_back({"install", ms_since(t)});

        t = Clock::now();
        std::map<std::string, pyenv::Distribution> installed;
        if (!m_report.plan.install.empty()) {
            BS_TRY(installed, pyenv::scan_venv_packages(*m_facts.python, install_names()));
            BS_CHECK(match_records(installed));
        }
        m_timings.push_back({"records", ms_since(t)});

        t = Clock::now();
        std::vector<std::string> removals, pip_last;
        for (const auto& r : m_report.plan.remove) {
            if (m_broken.count(r.name)) continue;  // removed by remove_broken()
            // pip cannot be used after it removed itself: that goes last.
            (r.name == "pip" && m_default == m_pip.get() ? pip_last : removals).push_back(r.name);
        }
        if (!removals.empty() || !pip_last.empty()) BS_CHECK(release_shared_files(installed));
        if (!removals.empty()) {
            say(fmt::format("removing {}", core::join(removals, ", ")));
            m_report.changed = true;
            BS_CHECK(run_checked(m_default->uninstall(m_venv, removals), "removing extra packages"));
        }
        if (!pip_last.empty()) {
            m_report.changed = true;
            BS_CHECK(run_checked(m_default->uninstall(m_venv, pip_last), "removing pip"));
        }
        if (!m_report.plan.remove.empty()) m_timings.push_back({"remove", ms_since(t)});
        return {};
    }

    /// The plan's installs that uv's cache can put back without an installer
    /// (rollback/cache_restore.hpp): exact index pins of packages uv installed, not broken. The
    /// rest is left in m_rest for the installers.
    Status plan_cached_restores() {
        auto eligible = [this](const RollbackInstall& i) {
            return i.source.kind == InstallSource::Kind::index && !m_broken.count(i.name) &&
                   installer_for(i.target) == m_uv.get();
        };
        BS_TRY(auto planned,
               plan_cache_restores(m_report.plan.install, m_venv, *m_facts.python, m_facts.env, eligible));
        for (const auto& note : planned.notes) log_line("# " + note);
        m_rest = m_report.plan;
        m_rest.install = std::move(planned.rest);
        m_cached = std::move(planned.cached);
        return {};
    }

    Status restore_cached() {
        std::vector<std::string> names;
        for (const auto& c : m_cached) names.push_back(c.name);
        say(fmt::format("restoring {} package(s) from uv's cache: {}", m_cached.size(), core::join(names, ", ")));
        m_report.changed = true;
        return restore_from_cache(m_cached, m_venv, *m_facts.python, m_facts.env);
    }

    /// Run one install command. When it fails and nothing had changed before, the venv is
    /// read back: still untouched (the installer failed before it changed anything), the
    /// packages that cannot be had are named and refused; otherwise the error says to re-run.
    Status install(const InstallBatch& b, const manifest::Manifest& current) {
        const auto* installer = installer_named(b.installer);
        say(fmt::format("installing {} package(s) from {} with {}", b.members.size(), b.from, installer->name()));
        auto c = installer->install(m_venv, b.request, m_options.net);
        BS_TRY(auto r, run_command(c));
        if (r.ok()) {
            m_report.changed = true;
            return {};
        }
        if (!m_report.changed) {
            // Unreadable counts as changed: the error then tells to re-run, which is safe.
            const bool untouched = unchanged(b, current).value_or(false);
            m_report.changed = !untouched;
            if (untouched && !r.interrupted && b.resolves) {
                BS_CHECK(find_unreachable(b));
                BS_CHECK(refuse_unreachable("failed the reachability check"));
            }
        }
        return tl::unexpected(command_failure(c, r, "installing from " + b.from));
    }

    /// Do `b`'s packages still look as they did before the rollback (versions and RECORDs)?
    Result<bool> unchanged(const InstallBatch& b, const manifest::Manifest& current) const {
        std::vector<std::string> names;
        for (const auto* m : b.members) names.push_back(m->name);
        BS_TRY(auto now, pyenv::scan_venv_packages(*m_facts.python, names));
        for (const auto& name : names) {
            auto was = current.packages.find(name);
            auto is = now.find(name);
            if ((was == current.packages.end()) != (is == now.end())) return false;
            if (is == now.end()) continue;
            BS_TRY(auto pkg, read_installed_package(is->second));
            if (pkg.version != was->second.version || pkg.record_sha256 != was->second.record_sha256) return false;
        }
        return true;
    }

    std::vector<std::string> install_names() const {
        std::vector<std::string> names;
        for (const auto& i : m_report.plan.install) names.push_back(i.name);
        return names;
    }

    /// What the plan installs or removes.
    std::vector<std::string> touched_names() const {
        std::vector<std::string> names = install_names();
        for (const auto& r : m_report.plan.remove) names.push_back(r.name);
        return names;
    }

    /// Bring installer-written metadata in line with the recorded RECORDs (record_match.hpp; shared files through pyenv/record.hpp).
    Status match_records(const std::map<std::string, pyenv::Distribution>& installed) {
        for (const auto& i : m_report.plan.install) {
            auto it = installed.find(i.name);
            if (it == installed.end() || i.target.record_sha256.empty()) continue;
            BS_TRY(bool matched, match_record(it->second.dist_info(), i.target));
            if (matched) continue;
            log_line(fmt::format("# {} {}: RECORD differs from the target's", i.name, i.version));
        }
        return {};
    }

    /// An extra that lists a file a restored package lists too gives that row up first, so
    /// that uninstalling it leaves the file (installing came first; see apply()).
    Status release_shared_files(const std::map<std::string, pyenv::Distribution>& installed) {
        if (installed.empty()) return {};
        std::set<std::string> owned;
        for (const auto& [name, dist] : installed) {
            BS_TRY(auto paths, pyenv::record_paths(dist.dist_info()));
            owned.insert(paths.begin(), paths.end());
        }
        std::vector<std::string> extras;
        for (const auto& r : m_report.plan.remove) extras.push_back(r.name);
        BS_TRY(auto dists, pyenv::scan_venv_packages(*m_facts.python, extras));
        for (const auto& [name, dist] : dists) {
            if (dist.record_stamp == core::FileStamp{}) continue;  // no RECORD
            BS_TRY(size_t dropped, pyenv::disown_paths(dist.dist_info(), owned));
            if (dropped > 0)
                log_line(fmt::format("# {} {}: leaves {} file(s) it shares with restored packages", name, dist.version,
                                     dropped));
        }
        return {};
    }

    /// Compare the venv with the target, reading back only what the rollback touched (every
    /// other package matched the target when the plan was made), and keep the result as a
    /// "rollback" history entry.
    Status verify_and_record(const manifest::Manifest& current) {
        const auto t = Clock::now();
        say("verifying against the target");
        BS_TRY(auto after, read_back(current));
        auto mismatches = package_mismatches(m_target, after);
        if (m_options.write_history) {
            after.run = manifest::RunInfo{m_report.run_id, "rollback", core::utc_iso8601(), mismatches.empty()};
            BS_TRY(m_report.history, manifest::append_history(m_venv, after));
        }
        m_timings.push_back({"verify", ms_since(t)});
        if (mismatches.empty()) return {};
        std::string detail;
        for (const auto& m : mismatches) detail += "  " + m + "\n";
        detail += fmt::format("log: {}", m_log.string());
        return fail(ErrorCode::step_failed,
                    fmt::format("rollback of {} finished, but {} package(s) differ from the target", m_venv.string(),
                                mismatches.size()),
                    detail);
    }

    /// `current` with the packages the plan installed or removed read again from the venv.
    Result<manifest::Manifest> read_back(const manifest::Manifest& current) const {
        manifest::Manifest after = current;
        after.label = "rollback";
        const std::vector<std::string> touched = touched_names();
        BS_TRY(auto now, pyenv::scan_venv_packages(*m_facts.python, touched));
        for (const auto& name : touched) {
            after.packages.erase(name);
            auto it = now.find(name);
            if (it == now.end()) continue;
            BS_TRY(auto pkg, read_installed_package(it->second));
            after.packages.emplace(name, std::move(pkg));
        }
        // What now matches the target came from where the target says: the entry keeps its
        // origins (index URLs, step, stored wheel), so a later rollback to it can restore them.
        for (auto& [name, pkg] : after.packages) {
            auto t = m_target.packages.find(name);
            if (t == m_target.packages.end() || t->second.version != pkg.version) continue;
            if (!t->second.record_sha256.empty() && !pkg.record_sha256.empty() &&
                t->second.record_sha256 != pkg.record_sha256 &&
                t->second.record_sha256_portable != pkg.record_sha256_portable)
                continue;
            manifest::Origin& o = pkg.origin;
            const manifest::Origin& known = t->second.origin;
            if (o.index_urls.empty()) o.index_urls = known.index_urls;
            if (o.step.empty()) o.step = known.step;
            if (o.artifact_sha256.empty()) o.artifact_sha256 = known.artifact_sha256;
            if (o.kind == manifest::OriginKind::unknown) o.kind = known.kind;
            if (o.url.empty()) o.url = known.url;
            if (o.vcs.empty()) o.vcs = known.vcs;
            if (o.commit.empty()) o.commit = known.commit;
            if (o.archive_hash.empty()) o.archive_hash = known.archive_hash;
        }
        if (std::find(touched.begin(), touched.end(), "torch") != touched.end()) {
            after.torch.reset();
            if (auto it = now.find("torch"); it != now.end())
                after.torch = manifest::read_torch(it->second.dist_info().parent_path());
        }
        return after;
    }

    const fs::path m_venv;
    const manifest::Manifest& m_target;
    const RollbackOptions& m_options;
    const RollbackObserver& m_observer;
    engine::Facts m_facts;
    fs::path m_log;
    std::optional<manifest::ArtifactStore> m_store;
    std::unique_ptr<pyenv::Installer> m_uv;
    std::unique_ptr<pyenv::Installer> m_pip;
    const pyenv::Installer* m_default = nullptr;
    bool m_has_pip = false;
    RollbackReport m_report;
    std::vector<Timing> m_timings;
    std::map<std::string, manifest::Package> m_broken;  // broken installs in the venv, by name
    std::vector<CachedPackage> m_cached;                // restored from uv's cache
    RollbackPlan m_rest;  // the plan's installs left to the installers (batches point into it)
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

Result<RollbackReport> rollback(const fs::path& venv, const manifest::Manifest& target, const RollbackOptions& options,
                                const RollbackObserver& observer) {
    BS_TRY(auto lock, state::VenvLock::acquire(venv, options.lock_timeout, [&](long pid) {
               if (observer.on_message)
                   observer.on_message(state::VenvLock::waiting_message(pid, options.lock_timeout));
           }));
    return rollback_to(venv, target, options, observer);
}

Status restore_after_failure(const engine::RestoreRequest& request) {
    RollbackOptions options;
    options.run_id = request.run_id;
    options.net = request.net;
    options.installer = request.installer;
    options.known_index_urls = request.known_index_urls;
    RollbackObserver observer;
    observer.on_message = request.message;
    BS_TRY(auto report, rollback_to(request.venv, *request.target, options, observer));
    (void)report;
    return {};
}

}  // namespace bootstrap::rollback
