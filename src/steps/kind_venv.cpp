// Step kind `venv`: create the venv with the recipe's Python, a version or an interpreter's path
// (or keep the one that has it).

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "exec/process.hpp"
#include "pyenv/interpreter.hpp"
#include "state/layout.hpp"
#include "steps/kind.hpp"
#include "steps/venv_swap.hpp"

namespace bootstrap::steps {

namespace {

/// An existing directory that is not a venv (no pyvenv.cfg) and holds someone's files: turning
/// it into a venv would mix the two, so only --recreate may (it replaces them).
/// No keys of its own: the venv comes from [venv].
std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader&) { return std::make_shared<recipe::KindFields>(); }

/// --recreate replaces the venv's contents: never those of `/`, the home directory, the
/// recipe's or the current directory, or an ancestor of one of them.
Status replaceable(const recipe::Step& s, const PlanContext& ctx) {
    std::string home;
    if (ctx.env)
        if (auto it = ctx.env->find("HOME"); it != ctx.env->end()) home = it->second;
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    auto ok = check_replaceable(ctx.venv, home, ctx.recipe->file.parent_path(), ec ? fs::path() : cwd);
    if (!ok) {
        Error e = ok.error();
        e.message = s.loc.str() + ": " + e.message;
        return tl::unexpected(e);
    }
    return {};
}

Status check_foreign_directory(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx) {
    std::error_code ec;
    if (!fs::is_directory(ctx.venv, ec)) return {};
    if (ctx.recreate) BS_CHECK(replaceable(s, ctx));  // the first thing to say about `~` or `/`
    // bootstrap's own state dir does not count: a first run that failed leaves only that.
    std::vector<std::string> names;
    fs::directory_iterator it(ctx.venv, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec))
        if (it->path().filename() != state::k_state_dir) names.push_back(it->path().filename().string());
    if (ec)
        return fail(ErrorCode::io, fmt::format("{}: cannot list {}: {}", s.loc.str(), ctx.venv.string(), ec.message()));
    std::sort(names.begin(), names.end());
    if (names.empty()) return {};
    // Only a venv bootstrap was making (its state dir is there: a first run that failed midway)
    // may be replaced; anyone else's directory is never deleted, --recreate or not.
    const bool ours = state::Layout(ctx.venv).exists();
    if (!ctx.recreate || !ours) {
        const size_t shown = std::min<size_t>(names.size(), 3);
        std::vector<std::string> some(names.begin(), names.begin() + static_cast<long>(shown));
        return fail(
            ErrorCode::usage,
            fmt::format("{}: {} exists and is not a venv (no pyvenv.cfg), but it is not "
                        "empty: it holds {}{}",
                        s.loc.str(), ctx.venv.string(), core::join(some, ", "),
                        names.size() > shown ? fmt::format(" and {} more", names.size() - shown) : std::string()),
            ours ? "choose another venv path, or re-run with --recreate to replace the "
                   "directory's contents with a venv (they are deleted)"
                 : "choose another venv path (a new or empty directory); bootstrap never deletes a "
                   "directory that is not a venv it made");
    }
    std::get<VenvSpec>(out.spec).recreate = true;  // replaceable: checked first thing above
    out.note = "not a venv: its contents are replaced by a new venv (--recreate)";
    return {};
}

/// `[venv] python = "/path/to/python3.12"`: the file must exist and be executable, or the
/// recipe names what does not exist, where.
Result<std::string> interpreter_path(const recipe::VenvSection& venv, PlanContext& ctx) {
    std::string path = ctx.local_path(venv.python);
    if (!ctx.this_machine) return path;  // the interpreter of the machine that runs it
    std::error_code ec;
    auto status = fs::status(path, ec);
    const char* problem = !fs::exists(status)            ? "does not exist"
                          : fs::is_directory(status)     ? "is a directory, not an interpreter"
                          : ::access(path.c_str(), X_OK) ? "is not executable"
                                                         : nullptr;
    if (problem)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("{}: [venv] python: {} {}", venv.python_loc.str(), path, problem),
                    "install that Python, or set [venv] python to an interpreter that exists "
                    "(a path, or a version such as \"3.12\" for the installer to find)");
    return path;
}

/// The version an interpreter file reports ("3.11.2"), asked of the interpreter itself.
Result<std::string> interpreter_version(const std::string& python, const exec::EnvMap& env) {
    exec::ProcessSpec spec;
    spec.argv = {python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"};
    spec.env = env;
    spec.cwd = "/";
    spec.capture = true;
    spec.timeout = std::chrono::seconds(30);
    BS_TRY(auto ran, exec::run_process(spec));
    if (!ran.ok())
        return fail(ErrorCode::process,
                    fmt::format("cannot ask {} its version: {}: {}", python, ran.describe(), core::trim(ran.output)));
    return std::string(core::trim(ran.output));
}

/// Does the existing venv come from `python` (an interpreter path)? Its bin/python links to
/// the same file (no process started), or that interpreter reports the venv's exact version.
Result<bool> made_from(const fs::path& venv, const std::string& python, const std::string& have,
                       const exec::EnvMap& env) {
    std::error_code ec1, ec2;
    auto mine = fs::canonical(venv / "bin" / "python", ec1);
    auto theirs = fs::canonical(python, ec2);
    if (!ec1 && !ec2 && mine == theirs) return true;
    BS_TRY(auto version, interpreter_version(python, env));
    return !have.empty() && version == have;
}

/// uv looks for a Python version on PATH and among its own managed ones, and otherwise downloads
/// one from GitHub (python-build-standalone) without asking: the plan says so when this machine
/// has no `pythonX.Y` on PATH, so an air-gapped node hears it before the download fails.
void note_possible_download(const std::string& version, ResolvedStep& out, PlanContext& ctx) {
    if (!ctx.installer || ctx.installer->name() != "uv" || ctx.base_env == nullptr) return;
    auto parts = core::split(version, '.');
    if (parts.size() < 2) return;
    const std::string program = "python" + parts[0] + "." + parts[1];
    if (!exec::find_program(program, *ctx.base_env).empty()) return;
    if (!out.note.empty()) out.note += "; ";
    auto downloads = ctx.base_env->find("UV_PYTHON_DOWNLOADS");
    if (downloads != ctx.base_env->end() && (downloads->second == "never" || downloads->second == "manual"))
        out.note += fmt::format(
            "no {} on PATH and UV_PYTHON_DOWNLOADS={}: uv needs a managed "
            "CPython {} installed already (or set [venv] python to an "
            "interpreter's path)",
            program, downloads->second, version);
    else
        out.note += fmt::format(
            "no {} on PATH: uv uses a managed CPython {} it already has, or "
            "downloads one from GitHub (set [venv] python to an interpreter's "
            "path, or UV_PYTHON_DOWNLOADS=never to forbid the download)",
            program, version);
}

/// A `pythonX.Y` on PATH that does not run (a pyenv shim for a version the shell has not
/// selected) stops uv and pip alike when they create the venv: said when the plan is made.
Status check_version_on_path(const recipe::VenvSection& section, const std::string& version, PlanContext& ctx) {
    if (ctx.base_env == nullptr || !ctx.this_machine) return {};
    auto parts = core::split(version, '.');
    if (parts.size() < 2) return {};
    const std::string program = "python" + parts[0] + "." + parts[1];
    const fs::path found = exec::find_program(program, *ctx.base_env);
    if (found.empty()) return {};
    auto ran = interpreter_version(found.string(), *ctx.base_env);
    if (ran) return {};
    std::string why;
    for (const auto& line : core::split(ran.error().message, '\n'))
        if (!core::trim(line).empty()) {
            why = std::string(core::trim(line));
            break;
        }
    return fail(ErrorCode::invalid_recipe,
                fmt::format("{}: [venv] python = \"{}\": {} on PATH is {}, which does not run ({}); {} would stop "
                            "at it when creating the venv",
                            section.python_loc.str(), version, program, found.string(), why,
                            ctx.installer ? ctx.installer->name() : std::string("the installer")),
                fmt::format("make it run (a pyenv shim: `pyenv shell` or `pyenv global` a {} it lists), put a "
                            "working {} first on PATH, or set [venv] python to an interpreter's path",
                            version, program));
}

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion&) {
    const recipe::VenvSection& section = ctx.recipe->venv;
    std::string want = section.python;
    if (section.python_is_path()) {
        BS_TRY(want, interpreter_path(section, ctx));
    }
    out.spec = VenvSpec{.recreate = false, .python = want};
    auto cfg = pyenv::read_pyvenv_cfg(ctx.venv);
    if (!cfg) BS_CHECK(check_foreign_directory(s, out, ctx));
    if (cfg) {
        std::string have = pyenv::venv_python_version(*cfg);
        bool matches = false;
        if (section.python_is_path()) {
            BS_TRY(matches, made_from(ctx.venv, want, have, ctx.base_env ? *ctx.base_env : exec::EnvMap{}));
        } else {
            matches = pyenv::python_version_matches(have, want);
        }
        if (matches && !ctx.recreate) {
            // The argv stays in the plan (and the key) whether or not it will run, so the
            // key does not depend on the venv existing yet.
            out.kept = true;
            out.note = fmt::format("venv exists (Python {}): kept", have);
        } else if (!ctx.recreate) {
            return fail(ErrorCode::usage,
                        fmt::format("{}: the venv {} has Python {}, but the recipe asks for {}", s.loc.str(),
                                    ctx.venv.string(), have, want),
                        "re-run with --recreate to replace it (its packages are removed; "
                        "bootstrap's journal and logs are kept)");
        } else {
            BS_CHECK(replaceable(s, ctx));
            std::get<VenvSpec>(out.spec).recreate = true;
            out.note = fmt::format("venv has Python {}: recreated with {}", have, want);
        }
    }
    if (!out.kept && !section.python_is_path()) {
        BS_CHECK(check_version_on_path(section, want, ctx));
        note_possible_download(want, out, ctx);
    }
    out.argv = ctx.installer->create_venv(ctx.venv, want).argv;
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key, const ToolName&) {
    key.add("python", std::get<VenvSpec>(step.spec).python);
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    BS_TRY(bool restored, restore_unfinished_recreate(ctx.venv));
    if (restored) log_line(ctx, "restored the venv whose recreation an earlier run did not finish");
    if (step.kept) return Outcome::kept;
    if (std::get<VenvSpec>(step.spec).recreate)
        BS_CHECK(recreate_venv(ctx.venv, [&] { return run_child(step, ctx, step.argv); }));
    else BS_CHECK(run_child(step, ctx, step.argv));
    return Outcome::ran;
}

}  // namespace

extern const Kind k_venv_kind;
const Kind k_venv_kind{
    .name = "venv",
    .parse = parse,
    .spec = k_spec_index<VenvSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .runs_installer = true,
    .makes_venv = true,
};

}  // namespace bootstrap::steps
