#pragma once
// A fake engine::RunWorld for the run loop's unit tests (as ninja's build_test.cc has its
// FakeCommandRunner): no Python, no installer, no child process, no sleep.
//
// - The venv's packages live in memory (`packages`). Each is also written as a minimal
//   dist-info (METADATA with its Requires-Dist, RECORD, INSTALLER) under the fake venv's
//   site-packages, because the loop reads RECORD digests, Requires-Dist and snapshots from
//   there; only what changed is rewritten, so an untouched package keeps its RECORD's stamp.
// - A `venv` step makes the venv (pyvenv.cfg, site-packages); an `install` step installs each
//   requirement at its `==` pin (else `catalog`'s version, else 1.0); any step's action may
//   have an `effect` on the packages; each step's outcome can be scripted (fail N times with an
//   error, interrupt).
// - The clock is a number; sleeping advances it and is recorded.
// The journal, history, logs, overrides files and the venv lock stay real files in a temp dir.

#include <catch2/catch.hpp>

#include <csignal>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "engine/run_world.hpp"
#include "engine/runner.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/dist_info.hpp"
#include "recipe/recipe.hpp"
#include "state/journal.hpp"
#include "steps/kind.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::test {

namespace fs = std::filesystem;

struct FakePackage {
    std::string version;
    std::vector<std::string> requires_dist;  // "bar>=2"
    bool operator==(const FakePackage&) const = default;
};

/// What one step's action does when the fake world runs it.
struct FakeScript {
    int fail_times = 0;  // the next N attempts fail with `error` (-1: every attempt)
    Error error{ErrorCode::step_failed, "fake failure", ""};
    steps::FailureClass failure;   // what the installer's output would say (ctx.failure)
    bool interrupt = false;        // the next attempt is stopped by SIGINT (once)
    std::function<void()> effect;  // what a passing action does to the venv, besides its kind's default
    int verify_fail_times = 0;     // the next N verify calls fail
};

class FakeWorld final : public engine::RunWorld {
public:
    explicit FakeWorld(fs::path root) : m_root(std::move(root)), m_bin(m_root / "bin") {
        fs::create_directories(m_bin);
        write_script(m_bin / "uv");
        write_script(m_bin / "tool");
    }

    fs::path venv() const { return m_root / "venv"; }
    fs::path site_packages() const { return venv() / "lib/python3.11/site-packages"; }

    std::map<std::string, FakePackage> packages;  // the venv's, by normalised name
    std::map<std::string, FakePackage> catalog;   // what an unpinned install gets
    std::map<std::string, FakeScript> scripts;    // by step id

    // What happened.
    std::vector<std::string> actions;   // step ids, one per attempt
    std::vector<std::string> verifies;  // step ids whose verify clauses ran
    std::vector<double> sleeps;         // seconds slept between attempts
    int facts_gathered = 0;
    int scans = 0;
    double clock = 1000;          // RunWorld::now
    double action_seconds = 0.5;  // each attempt advances the clock this much

    /// Change the venv behind the journal's back (or as an action's effect).
    void install(const std::string& name, const std::string& version, std::vector<std::string> requires_dist = {}) {
        packages[name] = FakePackage{version, std::move(requires_dist)};
        sync();
    }
    void uninstall(const std::string& name) {
        packages.erase(name);
        sync();
    }
    void make_venv() {
        // pyvenv.cfg as a venv of the recipe's Python has it: a later plan keeps the venv.
        fs::create_directories(site_packages());
        put(venv() / "pyvenv.cfg", "home = /usr/bin\nversion = 3.11.7\n");
    }
    void forget() {  // before the next run: what happened is cleared
        actions.clear();
        verifies.clear();
        sleeps.clear();
        facts_gathered = 0;
        scans = 0;
    }

    exec::EnvMap env() const {
        return {{"PATH", m_bin.string()},
                {"HOME", (m_root / "home").string()},
                {"BOOTSTRAP_HOME", (m_root / "home/bootstrap").string()}};
    }

    Result<engine::Facts> gather_facts(const fs::path& venv, bool) override {
        ++facts_gathered;
        engine::Facts facts;
        facts.env = env();
        facts.cpus = 4;
        facts.host = manifest::Host{"2.36", "3.4.30", "12.2.0", "", ""};  // no gcc/nvcc asked
        std::error_code ec;
        if (!venv.empty() && fs::exists(venv / "pyvenv.cfg", ec)) facts.python = python_facts(venv);
        return facts;
    }

    Result<std::map<std::string, pyenv::Distribution>> scan_installed(const pyenv::InterpreterFacts& python,
                                                                      bool include_broken,
                                                                      const pyenv::ScanMemo* memo) override {
        ++scans;
        return pyenv::scan_site_packages(python.purelib, {}, include_broken, memo);
    }

    Result<steps::Outcome> execute(const steps::ResolvedStep& step, steps::StepContext& ctx) override {
        actions.push_back(step.id);
        clock += action_seconds;
        FakeScript& script = scripts[step.id];
        if (script.interrupt) {
            script.interrupt = false;
            core::set_interrupt_signal(SIGINT);
            return fail(ErrorCode::interrupted, "step '" + step.id + "' interrupted");
        }
        if (script.fail_times != 0) {
            if (script.fail_times > 0) --script.fail_times;
            ctx.failure = script.failure;
            return tl::unexpected(script.error);
        }
        if (step.kept) return steps::Outcome::kept;
        if (steps::kind_of(step.kind).makes_venv) make_venv();
        if (const auto* install = step.install())
            for (const auto& req : install->requirements) packages[req.normalized_name] = resolve(req.str());
        if (script.effect) script.effect();
        sync();
        return steps::Outcome::ran;
    }

    Status verify(const steps::ResolvedStep& step, steps::StepContext&) override {
        verifies.push_back(step.id);
        FakeScript& script = scripts[step.id];
        if (script.verify_fail_times != 0) {
            if (script.verify_fail_times > 0) --script.verify_fail_times;
            return fail(ErrorCode::step_failed, "verify of '" + step.id + "' failed (fake)");
        }
        return {};
    }

    double now() override { return clock; }

    bool sleep(double seconds) override {
        sleeps.push_back(seconds);
        clock += seconds;
        return true;
    }

private:
    static void put(const fs::path& file, const std::string& text) { REQUIRE(core::write_file_atomic(file, text)); }

    static void write_script(const fs::path& file) {
        put(file, "#!/bin/sh\n");
        fs::permissions(file, fs::perms::owner_all);
    }

    pyenv::InterpreterFacts python_facts(const fs::path& venv) const {
        pyenv::InterpreterFacts py;
        py.executable = (venv / "bin/python").string();
        py.version = "3.11.7";
        py.version_short = "3.11";
        py.implementation = "cpython";
        py.ext_suffix = ".cpython-311-x86_64-linux-gnu.so";
        py.soabi = "cpython-311-x86_64-linux-gnu";
        py.include_dir = "/usr/include/python3.11";
        py.purelib = site_packages();
        py.platlib = site_packages();
        py.platform = "linux-x86_64";
        py.markers = {{"implementation_name", "cpython"}, {"os_name", "posix"},
                      {"platform_machine", "x86_64"},     {"platform_system", "Linux"},
                      {"python_full_version", "3.11.7"},  {"python_version", "3.11"},
                      {"sys_platform", "linux"},          {"platform_python_implementation", "CPython"}};
        return py;
    }

    /// "foo==1.2" -> 1.2; otherwise the catalog's version, or 1.0.
    FakePackage resolve(const std::string& requirement) const {
        const auto pin = requirement.find("==");
        const std::string name = requirement.substr(0, requirement.find_first_of("=<>!~[; "));
        FakePackage out;
        if (auto it = catalog.find(name); it != catalog.end()) out = it->second;
        if (out.version.empty()) out.version = "1.0";
        if (pin != std::string::npos)
            out.version = requirement.substr(pin + 2, requirement.find_first_of(",; ", pin) - pin - 2);
        return out;
    }

    /// Write what changed in `packages` to site-packages; leave the rest untouched.
    void sync() {
        if (!fs::exists(site_packages())) return;
        for (auto it = m_written.begin(); it != m_written.end();) {
            auto now = packages.find(it->first);
            if (now != packages.end() && now->second == it->second) {
                ++it;
                continue;
            }
            fs::remove_all(site_packages() / dist_info(it->first, it->second.version));
            it = m_written.erase(it);
        }
        for (const auto& [name, pkg] : packages) {
            if (m_written.count(name)) continue;
            const std::string dir = dist_info(name, pkg.version);
            fs::create_directories(site_packages() / dir);
            std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + pkg.version + "\n";
            for (const auto& r : pkg.requires_dist) metadata += "Requires-Dist: " + r + "\n";
            put(site_packages() / dir / "METADATA", metadata + "\n");
            put(site_packages() / dir / "INSTALLER", "uv\n");
            // Sizes without hashes: the RECORD (and its digest) changes with METADATA, and the
            // repair's file check has nothing to hash.
            put(site_packages() / dir / "RECORD", dir + "/METADATA,," + std::to_string(metadata.size() + 1) + "\n" +
                                                      dir + "/INSTALLER,,3\n" + dir + "/RECORD,,\n");
            m_written[name] = pkg;
        }
    }

    static std::string dist_info(const std::string& name, const std::string& version) {
        return name + "-" + version + ".dist-info";
    }

    fs::path m_root;
    fs::path m_bin;
    std::map<std::string, FakePackage> m_written;
};

/// Hears everything a run says.
struct RecordingObserver : engine::RunObserver {
    std::vector<std::string> messages;
    void step_started(size_t, size_t, const steps::ResolvedStep&) override {}
    void step_finished(size_t, size_t, const engine::StepReport&) override {}
    void message(std::string_view text) override { messages.emplace_back(text); }
};

/// A temp dir in memory (/dev/shm) where there is one: a run writes every file atomically,
/// with an fsync that costs milliseconds on a disk and nothing there.
class ScratchDir {
public:
    ScratchDir() {
        std::error_code ec;
        const bool shm = ::access("/dev/shm", W_OK | X_OK) == 0 && fs::is_directory("/dev/shm", ec);
        std::string tmpl = ((shm ? fs::path("/dev/shm") : fs::temp_directory_path()) / "bs-run-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        m_path = tmpl;
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

/// A temp dir, a fake world in it, and a recipe whose venv is the world's.
struct RunBench {
    ScratchDir dir;
    FakeWorld world{dir.path()};
    engine::RunOptions options;
    RecordingObserver observer;

    RunBench() {
        options.backoff_base = 2;
        options.plan.cache_tool_versions = true;  // one `uv --version` per bench, not per plan
    }

    recipe::Recipe recipe(const std::string& steps) const {
        const std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + world.venv().string() +
                                 "\"\npython = \"3.11\"\ninstaller = \"uv\"\n" + steps;
        auto r = steps::parse_recipe(text, (dir.path() / "recipe.toml").string());
        REQUIRE(r);
        return *r;
    }

    /// Run `steps` (TOML) from a fresh record of what happened.
    engine::RunReport run(const std::string& steps) {
        world.forget();
        observer.messages.clear();
        const auto r = recipe(steps);
        auto report = engine::run_recipe(r, options, observer, world);
        REQUIRE(report);
        return *report;
    }

    state::Journal journal() const {
        auto j = state::Journal::load(world.venv());
        REQUIRE(j);
        return *j;
    }

    /// Every file under the venv's .bootstrap/ with its stamp: equal before and after a run
    /// that wrote nothing.
    std::map<std::string, core::FileStamp> state_files() const {
        std::map<std::string, core::FileStamp> out;
        std::error_code ec;
        for (const auto& e : fs::recursive_directory_iterator(world.venv() / ".bootstrap", ec)) {
            struct stat st {};
            if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0)
                out[e.path().string()] = core::FileStamp{static_cast<std::uint64_t>(st.st_size),
                                                         st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec,
                                                         static_cast<std::uint64_t>(st.st_ino)};
        }
        return out;
    }
};

}  // namespace bootstrap::test
