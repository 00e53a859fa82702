#include "steps/executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "core/terminal_filter.hpp"
#include "core/terminal_text.hpp"
#include "pyenv/interpreter.hpp"
#include "steps/child_output.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

constexpr size_t k_tail_lines = 40;
// Of a step's log, only its end is read to show its last lines, and to find an installer's
// cause: a child may print gigabytes, and the memory bootstrap takes must not grow with them.
constexpr std::uint64_t k_tail_bytes = 64 * 1024;
constexpr std::uint64_t k_cause_bytes = 4 * 1024 * 1024;
// The installer's terminal: wide, so that its own lines (an error naming a long URL) rarely wrap.
constexpr unsigned short k_installer_columns = 200;

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

/// The end of a log, from `offset` on, at most `max_bytes`: whole lines (a first line cut by the
/// bound is left out).
std::string log_tail(const fs::path& log_path, std::uintmax_t offset, std::uint64_t max_bytes) {
    auto text = core::read_file_tail(log_path, offset, max_bytes);
    if (!text) return {};
    std::error_code ec;
    const auto size = fs::file_size(log_path, ec);
    if (!ec && size > offset + text->size()) text->erase(0, std::min(text->size(), text->find('\n') + 1));
    return std::move(*text);
}

/// What the child printed: the step log from `offset` (earlier attempts and children come
/// before it; of a long one, its last k_cause_bytes), or the captured output when there is no
/// log.
std::string child_output(const StepContext& ctx, const exec::ProcessResult& result, std::uintmax_t offset) {
    if (ctx.log_path.empty()) return result.output;
    return log_tail(ctx.log_path, offset, k_cause_bytes);
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

void log_line(const StepContext& ctx, const std::string& line) { core::append_log_line(ctx.log_path, line); }

Error child_failure(const ResolvedStep& step, const exec::ProcessSpec& spec, const exec::ProcessResult& result,
                    const fs::path& log_path) {
    ErrorCode code = result.interrupted ? ErrorCode::interrupted
                     : result.timed_out ? ErrorCode::timeout
                                        : ErrorCode::step_failed;
    std::string tail;
    if (!log_path.empty()) {
        tail = core::last_lines(log_tail(log_path, 0, k_tail_bytes), k_tail_lines);
    } else {
        tail = core::last_lines(result.output, k_tail_lines);
    }
    // The log holds text (exec::run_process strips escapes), but one an older bootstrap wrote,
    // or a child's own lines appended to it, may not: what reaches the terminal is text.
    tail = core::redact_text(core::printable_text(tail));
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

}  // namespace bootstrap::steps
