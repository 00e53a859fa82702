#include "steps/executor.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"

namespace bootstrap::steps {

namespace {

constexpr size_t k_tail_lines = 40;

exec::ProcessSpec spec_for(const ResolvedStep& step, const StepContext& ctx,
                           std::vector<std::string> argv) {
    exec::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.cwd = step.cwd;
    spec.env = step.child_env;
    if (step.timeout > 0)
        spec.timeout = std::chrono::milliseconds(static_cast<long>(step.timeout * 1000));
    spec.log_path = ctx.log_path;
    spec.on_output = ctx.on_output;
    return spec;
}

void log_line(const StepContext& ctx, const std::string& line) {
    if (ctx.log_path.empty()) return;
    std::error_code ec;
    fs::create_directories(ctx.log_path.parent_path(), ec);
    std::ofstream(ctx.log_path, std::ios::app) << line << '\n';
}

Status run_child(const ResolvedStep& step, StepContext& ctx, std::vector<std::string> argv) {
    auto spec = spec_for(step, ctx, std::move(argv));
    log_line(ctx, "$ " + core::format_argv(spec.argv));
    BS_TRY(auto result, ctx.run(spec));
    if (!result.ok()) return tl::unexpected(child_failure(step, spec, result, ctx.log_path));
    return {};
}

/// Remove everything in an existing venv but bootstrap's own state (journal, logs, history).
Status clear_venv(const fs::path& venv) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(venv, ec)) {
        if (entry.path().filename() == ".bootstrap") continue;
        fs::remove_all(entry.path(), ec);
        if (ec)
            return fail(ErrorCode::io, fmt::format("cannot remove {} to recreate the venv: {}",
                                                   entry.path().string(), ec.message()));
    }
    return {};
}

const char* k_import_probe = R"PY(
import importlib, sys, traceback
mod, attr = sys.argv[1], sys.argv[2]
try:
    m = importlib.import_module(mod)
except BaseException as e:
    traceback.print_exc()
    chain, seen = [], set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    root = chain[-1]
    print("bootstrap-verify: import %s failed: %s: %s" % (mod, type(chain[0]).__name__, chain[0]))
    if root is not chain[0]:
        print("bootstrap-verify: root cause: %s: %s" % (type(root).__name__, root))
    sys.exit(3)
if attr and not hasattr(m, attr):
    print("bootstrap-verify: module %s (%s) has no attribute %r" % (mod, getattr(m, "__file__", "?"), attr))
    sys.exit(4)
print("bootstrap-verify: import %s%s ok (%s)" % (mod, "." + attr if attr else "", getattr(m, "__file__", "built-in")))
)PY";

}  // namespace

std::string ResolvedVerify::describe() const {
    if (kind == recipe::VerifyClause::Kind::file) return "file " + target;
    return "import " + target + (attr.empty() ? "" : "." + attr);
}

Error child_failure(const ResolvedStep& step, const exec::ProcessSpec& spec,
                    const exec::ProcessResult& result, const fs::path& log_path) {
    ErrorCode code = result.interrupted ? ErrorCode::interrupted
                     : result.timed_out ? ErrorCode::timeout
                                        : ErrorCode::step_failed;
    std::string tail;
    if (!log_path.empty()) {
        if (auto text = core::read_file(log_path)) tail = core::last_lines(*text, k_tail_lines);
    } else {
        tail = core::last_lines(result.output, k_tail_lines);
    }
    std::string detail = fmt::format("command: {}\ncwd: {}\n", core::format_argv(spec.argv),
                                     spec.cwd.empty() ? "." : spec.cwd.string());
    if (!tail.empty()) detail += fmt::format("--- last lines of the log ---\n{}\n", tail);
    if (!log_path.empty()) detail += fmt::format("log: {}", log_path.string());
    return Error{code,
                 fmt::format("step '{}' ({}) failed: {} {}", step.id, recipe::to_string(step.kind),
                             spec.argv.empty() ? "" : fs::path(spec.argv[0]).filename().string(),
                             result.describe()),
                 detail};
}

Result<Outcome> execute(const ResolvedStep& step, StepContext& ctx) {
    switch (step.kind) {
        case recipe::StepKind::venv:
            if (step.keep_venv) return Outcome::kept;
            if (step.recreate) BS_CHECK(clear_venv(ctx.venv));
            BS_CHECK(run_child(step, ctx, step.argv));
            return Outcome::ran;
        case recipe::StepKind::install:
            if (!step.requirements_file.empty()) {
                if (step.requirements_text.empty()) return Outcome::ran;  // the lock gives it nothing
                BS_CHECK(core::write_file_atomic(step.requirements_file, step.requirements_text));
            }
            BS_CHECK(run_child(step, ctx, step.argv));
            return Outcome::ran;
        case recipe::StepKind::sync:
            BS_CHECK(run_child(step, ctx, step.argv));
            return Outcome::ran;
        case recipe::StepKind::run: {
            if (!step.creates.empty() && fs::exists(step.creates)) {
                log_line(ctx, fmt::format("skipped: {} exists", step.creates));
                return Outcome::skipped_creates;
            }
            if (!step.unless.empty()) {
                auto spec = spec_for(step, ctx, step.unless);
                log_line(ctx, "$ " + core::format_argv(spec.argv) + "   # unless");
                BS_TRY(auto result, ctx.run(spec));
                if (result.interrupted) return tl::unexpected(child_failure(step, spec, result, ctx.log_path));
                if (result.ok()) return Outcome::skipped_unless;
            }
            BS_CHECK(run_child(step, ctx, step.argv));
            return Outcome::ran;
        }
        case recipe::StepKind::check:
            return Outcome::ran;
    }
    return fail(ErrorCode::internal, "unknown step kind");
}

Status verify(const ResolvedStep& step, StepContext& ctx) {
    for (const auto& clause : step.verify) {
        if (core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id));
        if (clause.kind == recipe::VerifyClause::Kind::file) {
            if (!fs::exists(clause.target))
                return fail(ErrorCode::step_failed,
                            fmt::format("step '{}': verify failed: {} does not exist", step.id,
                                        clause.target));
            log_line(ctx, "verify: " + clause.describe() + " ok");
            continue;
        }
        auto spec = spec_for(step, ctx, {(ctx.venv / "bin" / "python").string(), "-c",
                                         k_import_probe, clause.target, clause.attr});
        spec.capture = true;
        spec.cwd = "/";  // never import from a project directory by accident
        if (step.timeout <= 0) spec.timeout = std::chrono::minutes(10);
        log_line(ctx, "verify: " + clause.describe());
        BS_TRY(auto result, ctx.run(spec));
        if (result.interrupted) return tl::unexpected(child_failure(step, spec, result, ctx.log_path));
        if (!result.ok()) {
            // The probe's own summary lines name the real exception (and its root cause).
            std::string summary;
            for (const auto& line : core::split(result.output, '\n'))
                if (core::starts_with(line, "bootstrap-verify: "))
                    summary += (summary.empty() ? "" : "; ") + line.substr(18);
            if (summary.empty()) summary = result.describe();
            auto err = child_failure(step, spec, result, ctx.log_path);
            err.code = result.timed_out ? ErrorCode::timeout : ErrorCode::step_failed;
            err.message = fmt::format("step '{}': verify failed: {}", step.id, summary);
            return tl::unexpected(err);
        }
    }
    return {};
}

}  // namespace bootstrap::steps
