#include "steps/executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "inspect/elf_symbols.hpp"
#include "inspect/fatbin.hpp"
#include "pyenv/import_probe.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/module_owner.hpp"
#include "pyenv/venv_library.hpp"
#include "steps/child_output.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

constexpr size_t k_tail_lines = 40;
// The installer's terminal: wide, so that its own lines (an error naming a long URL) rarely wrap.
constexpr unsigned short k_installer_columns = 200;

// The lines the verify probes print for us (pyenv/import_probe.hpp and k_find_spec_probe).
constexpr std::string_view k_verify_prefix = "bootstrap-verify: ";
constexpr std::string_view k_origin_prefix = "bootstrap-verify-origin: ";

/// The rest of `line` after `prefix`, or nullopt when it does not start with it.
std::optional<std::string> after_prefix(const std::string& line, std::string_view prefix) {
    if (!core::starts_with(line, prefix)) return std::nullopt;
    return line.substr(prefix.size());
}

}  // namespace

exec::ProcessSpec child_spec(const ResolvedStep& step, const StepContext& ctx, std::vector<std::string> argv) {
    exec::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.cwd = step.cwd;
    spec.env = step.child_env;
    if (step.timeout > 0) spec.timeout = std::chrono::milliseconds(static_cast<long>(step.timeout * 1000));
    spec.log_path = ctx.log_path;
    spec.on_output = ctx.on_output;
    return spec;
}

namespace {

/// What the child printed: the step log from `offset` (earlier attempts and children come
/// before it), or the captured output when there is no log.
std::string child_output(const StepContext& ctx, const exec::ProcessResult& result, std::uintmax_t offset) {
    if (ctx.log_path.empty()) return result.output;
    auto text = core::read_file(ctx.log_path);
    if (!text || text->size() < offset) return {};
    return text->substr(offset);
}

/// The installer on a pseudo-terminal, so that it draws its progress bars: its output reaches
/// the log as plain lines (a bar's redraws dropped, its last drawing kept only when the installer
/// ended the line) and what the bars say reaches ctx.on_progress.
void show_downloads(exec::ProcessSpec& spec, const StepContext& ctx) {
    struct Reading {
        pyenv::DownloadMeter meter;
        core::TerminalTranscript transcript;
    };
    auto reading = std::make_shared<Reading>();
    spec.terminal = true;
    spec.terminal_columns = k_installer_columns;
    reading->transcript = core::TerminalTranscript(
        [meter = &reading->meter, on_progress = ctx.on_progress](std::string_view segment) {
        if (meter->feed(segment) && on_progress) on_progress(meter->progress());
        },
        spec.terminal_columns);
    spec.env.erase("UV_NO_PROGRESS");  // the installer's commands set it for a pipe
    spec.filter = [reading](std::string_view chunk) {
        if (!chunk.empty()) return reading->transcript.feed(chunk);
        // The log keeps what the bars said: their redraws are gone from it.
        std::string rest = reading->transcript.finish();
        const auto& p = reading->meter.progress();
        if (p.files > 0)
            rest += fmt::format("bootstrap: the installer's bars showed {} of {} downloaded, {} of {} file(s)\n",
                                core::format_bytes(p.done), core::format_bytes(p.total), p.files_done, p.files);
        return rest;
    };
}

}  // namespace

Status run_child(const ResolvedStep& step, StepContext& ctx, std::vector<std::string> argv, const fs::path& cwd) {
    auto spec = child_spec(step, ctx, std::move(argv));
    if (!cwd.empty()) spec.cwd = cwd;
    if (kind_of(step.kind).shows_downloads) show_downloads(spec, ctx);
    log_line(ctx, "$ " + core::redact_text(core::format_argv(spec.argv)));
    std::error_code ec;
    std::uintmax_t offset = ctx.log_path.empty() ? 0 : fs::file_size(ctx.log_path, ec);
    if (ec) offset = 0;
    BS_TRY(auto result, ctx.run(spec));
    if (result.ok()) return {};
    auto err = child_failure(step, spec, result, ctx.log_path);
    // Installers (uv, pip) say why they failed in a line of their own: that line, not "uv
    // exit code 1", heads the error.
    if (kind_of(step.kind).runs_installer && !result.timed_out && !result.interrupted) {
        const std::string output = child_output(ctx, result, offset);
        ctx.failure = classify_installer_output(output);
        std::string cause = core::redact_text(installer_cause(output));
        if (!cause.empty())
            err.message = fmt::format("step '{}' ({}) failed: {} ({} {})", step.id, step.kind, cause,
                                      fs::path(spec.argv[0]).filename().string(), result.describe());
    }
    return tl::unexpected(err);
}

namespace {

/// child_failure with `shown` in place of the probe's argv on the `command:` line.
Error probe_failure(const ResolvedStep& step, const exec::ProcessSpec& spec, const std::string& shown,
                    const exec::ProcessResult& result, const fs::path& log_path) {
    auto err = child_failure(step, spec, result, log_path);
    // The argv line may span lines (the script is quoted whole): cut up to the cwd line.
    if (size_t cwd = err.detail.find("\ncwd: "); core::starts_with(err.detail, "command: ") && cwd != std::string::npos)
        err.detail = "command: " + shown + err.detail.substr(cwd);
    return err;
}

// Where a module's file is, without importing it (a CUDA extension may not import on a host
// without a GPU, but its library can still be inspected).
const char* k_find_spec_probe = R"PY(
import importlib.util, sys
spec = importlib.util.find_spec(sys.argv[1])
if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
    print("bootstrap-verify: module %s has no file in this venv" % sys.argv[1])
    sys.exit(3)
print("bootstrap-verify-origin: " + spec.origin)
)PY";

/// The file a cuda_arch clause inspects: the module's origin (asked of the venv's python in its
/// own interpreter) or the clause's path.
Result<fs::path> cuda_library(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    if (!clause.library_is_module) return fs::path(clause.library);
    auto spec =
        child_spec(step, ctx, {(ctx.venv / "bin" / "python").string(), "-c", k_find_spec_probe, clause.library});
    spec.capture = true;
    spec.cwd = "/";
    if (step.timeout <= 0) spec.timeout = std::chrono::minutes(2);
    BS_TRY(auto result, ctx.run(spec));
    std::string origin, why;
    for (const auto& line : core::split(result.output, '\n')) {
        if (auto rest = after_prefix(line, k_origin_prefix)) origin = *rest;
        if (auto rest = after_prefix(line, k_verify_prefix)) why = *rest;
    }
    if (result.interrupted || (!result.ok() && why.empty()))
        return tl::unexpected(probe_failure(
            step, spec, fmt::format("{} -c <find-spec probe>: locate module {}", spec.argv[0], clause.library), result,
            ctx.log_path));
    if (!result.ok() || origin.empty())
        return fail(ErrorCode::step_failed, fmt::format("step '{}': verify failed: {}", step.id,
                                                        why.empty() ? "cannot locate module " + clause.library : why));
    return fs::path(origin);
}

Status verify_cuda_arch(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    BS_TRY(fs::path file, cuda_library(step, ctx, clause));
    auto contents = inspect::read_cuda_contents(file);
    if (!contents)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {}", step.id, contents.error().message),
                    contents.error().detail);
    std::string what =
        clause.library_is_module ? fmt::format("module {} ({})", clause.library, file.string()) : file.string();
    auto ok = inspect::check_cuda_arch(contents->entries, clause.target, what);
    if (!ok)
        return fail(ok.error().code == ErrorCode::usage ? ErrorCode::usage : ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {}", step.id, ok.error().message));
    log_line(ctx, fmt::format("verify: {} ok ({} carries {})", clause.describe(), file.string(),
                              inspect::summarize(contents->entries)));
    return {};
}

/// The library that will load (the venv's site-packages first, then the system; an absolute
/// path is that file) must define the symbol; the messages name the file checked.
Status verify_elf_symbol(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    std::vector<fs::path> sites;
    if (!fs::path(clause.library).is_absolute()) {
        BS_TRY(auto facts, pyenv::venv_facts(ctx.venv, step.child_env));
        sites.push_back(facts.purelib);
        if (facts.platlib != facts.purelib) sites.push_back(facts.platlib);
    }
    auto loaded = pyenv::find_loaded_library(sites, clause.library, step.child_env);
    if (loaded.file.empty())
        return fail(ErrorCode::step_failed,
                    fs::path(clause.library).is_absolute()
                        ? fmt::format("step '{}': verify failed: {}: {} is not a file", step.id, clause.describe(),
                                      clause.library)
                        : fmt::format("step '{}': verify failed: {}: no library matches {} in the "
                                      "venv or the system",
                                      step.id, clause.describe(), clause.library),
                    "searched: " + core::join(loaded.searched, ", "));
    const std::string checked = fmt::format("{} (from {})", loaded.file.string(), loaded.where);
    auto symbols = inspect::read_dynamic_symbols(loaded.file);
    if (!symbols)
        return fail(
            ErrorCode::step_failed,
            fmt::format("step '{}': verify failed: {}: {}", step.id, clause.describe(), symbols.error().message),
            "checked: " + checked);
    const auto* found = inspect::find_defined(*symbols, clause.target);
    if (found == nullptr)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {} does not define {} (checked {})", step.id,
                                loaded.file.string(), clause.target, loaded.where),
                    fmt::format("checked: {}\nthe library that loads is the venv's match for {} "
                                "first, then the system's; a process importing a module that "
                                "needs {} fails with 'undefined symbol'",
                                checked, clause.library, clause.target));
    log_line(ctx, fmt::format("verify: {} ok: {} defines it{}", clause.describe(), checked,
                              found->version.empty() ? "" : ", version " + found->version));
    return {};
}

/// The version half of `{ import = "x", version = ">=2.1" }`: the distribution whose files
/// provide the module (from the venv's dist-infos; nothing is imported) must satisfy it.
Status verify_version(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    auto specifiers = pyenv::SpecifierSet::parse(clause.version);
    if (!specifiers)  // the plan checks a literal specifier; this one came from a placeholder
        return fail(ErrorCode::invalid_recipe, fmt::format("step '{}': verify clause '{}': {}", step.id,
                                                           clause.describe(), specifiers.error().message));
    BS_TRY(auto facts, pyenv::venv_facts(ctx.venv, step.child_env));
    BS_TRY(auto installed, pyenv::scan_venv_packages(facts));
    auto dist = pyenv::check_module_version(clause.target, *specifiers, installed);
    if (!dist)
        return fail(dist.error().code, fmt::format("step '{}': verify failed: {}", step.id, dist.error().message));
    log_line(ctx, fmt::format("verify: {} ok ({} {})", clause.describe(), dist->name, dist->version));
    return {};
}

/// Where the probe rule looks for a module's file: PYTHONPATH's entries (a pybind11 output
/// dir first), then site-packages (and its .pth directories), as the interpreter would.
std::vector<fs::path> probe_search_dirs(const fs::path& venv, const exec::EnvMap& env) {
    std::vector<fs::path> dirs;
    if (auto it = env.find("PYTHONPATH"); it != env.end())
        for (const auto& entry : core::split(it->second, ':'))
            if (!entry.empty()) dirs.emplace_back(entry);
    auto facts = pyenv::venv_facts(venv, env);
    if (!facts) return dirs;  // the probe itself will say what is wrong with the interpreter
    for (auto& d : pyenv::module_search_dirs(facts->purelib)) dirs.push_back(std::move(d));
    if (facts->platlib != facts->purelib)
        for (auto& d : pyenv::module_search_dirs(facts->platlib)) dirs.push_back(std::move(d));
    return dirs;
}

}  // namespace

void log_line(const StepContext& ctx, const std::string& line) { core::append_log_line(ctx.log_path, line); }

std::string ResolvedVerify::describe() const {
    if (kind == recipe::VerifyClause::Kind::file) return "file " + target;
    if (kind == recipe::VerifyClause::Kind::cuda_arch)
        return "cuda_arch " + target + " in " + (library_is_module ? "module " : "") + library;
    if (kind == recipe::VerifyClause::Kind::elf_symbol) return "elf_symbol " + target + " in " + library;
    return "import " + target + (attr.empty() ? "" : "." + attr) + (equals ? " == '" + *equals + "'" : "") +
           (path_entry.empty() ? "" : " (from " + path_entry + ")") + (version.empty() ? "" : " version " + version) +
           (preload.empty() ? "" : " after " + core::join(preload, ","));
}

Error child_failure(const ResolvedStep& step, const exec::ProcessSpec& spec, const exec::ProcessResult& result,
                    const fs::path& log_path) {
    ErrorCode code = result.interrupted ? ErrorCode::interrupted
                     : result.timed_out ? ErrorCode::timeout
                                        : ErrorCode::step_failed;
    std::string tail;
    if (!log_path.empty()) {
        if (auto text = core::read_file(log_path)) tail = core::last_lines(*text, k_tail_lines);
    } else {
        tail = core::last_lines(result.output, k_tail_lines);
    }
    tail = core::redact_text(tail);
    std::string detail = fmt::format("command: {}\ncwd: {}\n", core::redact_text(core::format_argv(spec.argv)),
                                     spec.cwd.empty() ? "." : spec.cwd.string());
    if (!tail.empty()) detail += fmt::format("--- last lines of the log ---\n{}\n", tail);
    if (!log_path.empty()) detail += fmt::format("log: {}", log_path.string());
    return Error{code,
                 fmt::format("step '{}' ({}) failed: {} {}", step.id, step.kind,
                             spec.argv.empty() ? "" : fs::path(spec.argv[0]).filename().string(), result.describe()),
                 detail};
}

Result<Outcome> execute(const ResolvedStep& step, StepContext& ctx) {
    const Kind& kind = kind_of(step.kind);
    if (step.spec.index() != kind.spec)
        return fail(ErrorCode::internal,
                    fmt::format("step '{}': its resolved form is not a {} step's", step.id, step.kind));
    return kind.execute(step, ctx);
}

Status verify(const ResolvedStep& step, StepContext& ctx) {
    for (const auto& clause : step.verify) {
        if (core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id));
        if (clause.kind == recipe::VerifyClause::Kind::file) {
            std::error_code ec;
            if (!fs::exists(clause.target, ec))
                return fail(ErrorCode::step_failed,
                            fmt::format("step '{}': verify failed: {} does not exist", step.id, clause.target));
            log_line(ctx, "verify: " + clause.describe() + " ok");
            continue;
        }
        if (clause.kind == recipe::VerifyClause::Kind::cuda_arch) {
            BS_CHECK(verify_cuda_arch(step, ctx, clause));
            continue;
        }
        if (clause.kind == recipe::VerifyClause::Kind::elf_symbol) {
            BS_CHECK(verify_elf_symbol(step, ctx, clause));
            continue;
        }
        const fs::path python = ctx.venv / "bin" / "python";
        exec::EnvMap env = step.child_env;
        if (!clause.path_entry.empty()) {  // a pybind11 module lives in its output dir
            auto it = env.find("PYTHONPATH");
            env["PYTHONPATH"] =
                clause.path_entry + (it == env.end() || it->second.empty() ? std::string() : ":" + it->second);
        }
        auto preload = pyenv::probe_preload(clause.target, probe_search_dirs(ctx.venv, env), clause.preload);
        // cwd "/" (never import from a project directory by accident), the step's limits and log.
        auto spec = pyenv::import_probe_spec(python, clause.target, clause.attr, env, preload.modules, clause.equals);
        const auto stepwise = child_spec(step, ctx, {});
        spec.timeout = stepwise.timeout;
        spec.log_path = stepwise.log_path;
        spec.on_output = stepwise.on_output;
        if (step.timeout <= 0) spec.timeout = std::chrono::minutes(10);
        log_line(ctx, "verify: " + clause.describe() +
                          (preload.reason.empty() || preload.modules.empty()
                               ? ""
                               : fmt::format(" (importing {} first: {})", core::join(preload.modules, ", "),
                                             preload.reason)));
        BS_TRY(auto result, ctx.run(spec));
        // An error shows what the probe did, not its Python source.
        const std::string shown =
            pyenv::describe_probe(python, clause.target, clause.attr, preload.modules, clause.equals);
        if (result.interrupted) return tl::unexpected(probe_failure(step, spec, shown, result, ctx.log_path));
        if (!result.ok()) {
            // The probe's own summary lines name the real exception (and its root cause).
            auto failure = pyenv::parse_import_probe(result.output);
            std::string summary = failure.summary.empty() ? result.describe() : failure.summary;
            auto err = probe_failure(step, spec, shown, result, ctx.log_path);
            err.code = result.timed_out ? ErrorCode::timeout : ErrorCode::step_failed;
            err.message = fmt::format("step '{}': verify failed: {}", step.id, summary);
            return tl::unexpected(err);
        }
        if (!clause.version.empty()) BS_CHECK(verify_version(step, ctx, clause));
    }
    return {};
}

}  // namespace bootstrap::steps
