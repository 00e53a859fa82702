#include "cli/status.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "cli/json_output.hpp"
#include "core/log.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "core/terminal_filter.hpp"

namespace bootstrap::cli {

namespace {
constexpr const char* k_green = "\x1b[32m";
constexpr const char* k_yellow = "\x1b[33m";
constexpr const char* k_red = "\x1b[31m";
constexpr const char* k_bold = "\x1b[1m";

const char* color_for(engine::StepResult r) {
    switch (r) {
        case engine::StepResult::ran:
        case engine::StepResult::verified: return k_green;
        case engine::StepResult::skipped:
        case engine::StepResult::not_selected: return k_yellow;
        default: return k_red;
    }
}

constexpr auto k_tick = std::chrono::milliseconds(250);
constexpr double k_default_heartbeat = 20;               // seconds; CI logs show a long step is alive
constexpr size_t k_heartbeat_tail = 160;                 // characters of the last line in a heartbeat
constexpr auto k_rate_window = std::chrono::seconds(5);  // the download rate is over this long
constexpr size_t k_stream_max = 64 * 1024;               // -v: a line longer is printed in pieces
constexpr size_t k_stream_break_window = 4096;           // where such a piece may end

bool is_scheme_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

/// Where to cut a line too long to hold (-v): after its last blank, else before the scheme of
/// its last URL, so that core::redact_text sees a URL's credentials whole; searched in its
/// last k_stream_break_window bytes only (what is left stays below that: linear).
size_t stream_break(std::string_view line) {
    const size_t from = line.size() - std::min(line.size(), k_stream_break_window);
    const std::string_view window = line.substr(from);
    if (size_t blank = window.find_last_of(" \t"); blank != std::string_view::npos) return from + blank + 1;
    if (size_t sep = window.rfind("://"); sep != std::string_view::npos) {
        size_t start = from + sep;
        while (start > from && is_scheme_char(line[start - 1])) --start;
        if (start > 0) return start;
    }
    return line.size();
}

size_t terminal_columns() {
    struct winsize ws {};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* columns = std::getenv("COLUMNS"))
        if (auto n = core::parse_int<int>(columns); n && *n > 0) return static_cast<size_t>(*n);
    return 80;
}

double heartbeat_seconds(double configured) {
    if (configured > 0) return configured;
    if (const char* env = std::getenv("BOOTSTRAP_HEARTBEAT"))
        if (auto seconds = core::parse_double(env); seconds && *seconds > 0) return *seconds;
    return k_default_heartbeat;
}
}  // namespace

bool stderr_is_smart() {
    const char* term = std::getenv("TERM");
    return ::isatty(STDERR_FILENO) && term && std::strcmp(term, "dumb") != 0;
}

TerminalStatus::TerminalStatus(StatusOptions options) : m_options(options) {
    m_smart = stderr_is_smart();
    m_color = m_smart && std::getenv("NO_COLOR") == nullptr;
    m_options.heartbeat_seconds = heartbeat_seconds(m_options.heartbeat_seconds);
    // Log lines (-vv, BOOTSTRAP_LOG) end a half-streamed line and step around the live line.
    core::log::set_console_writer([this](std::string_view line) {
        std::lock_guard lock(m_mutex);
        flush_stream_locked();
        clear_live_locked();
        fmt::print(stderr, "{}", line);
        if (m_running && m_smart) draw_live_locked();
        std::fflush(stderr);
    });
}

TerminalStatus::~TerminalStatus() {
    core::log::set_console_writer({});
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

std::string TerminalStatus::paint(std::string_view text, const char* color) const {
    if (!m_color) return std::string(text);
    return fmt::format("{}{}\x1b[0m", color, text);
}

/// Wakes every tick while a step runs: on a smart terminal it redraws the live line (the clock
/// moves even when the step prints nothing); on plain stderr it prints a heartbeat line when
/// one is due.
void TerminalStatus::ticker() {
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        m_wake.wait_for(lock, k_tick);
        if (m_stop || !m_running) continue;
        if (m_smart) draw_live_locked();
        else heartbeat_locked();
    }
}

void TerminalStatus::draw_live_locked() {
    auto secs = static_cast<long>(std::chrono::duration<double>(Clock::now() - m_started).count());
    std::string line = fmt::format("{}  {}  {}:{:02}", m_label, m_kind, secs / 60, secs % 60);
    std::string last = downloads_locked(Clock::now());
    if (last.empty()) last = core::redact_text(m_tail.last_line());
    if (!last.empty()) line += "  " + last;
    // One column short of the width: writing the last column makes some terminals wrap.
    fmt::print(stderr, "\r{}\x1b[K", core::cut_to_columns(line, terminal_columns() - 1));
    std::fflush(stderr);
}

void TerminalStatus::clear_live_locked() {
    if (m_smart) fmt::print(stderr, "\r\x1b[K");
}

void TerminalStatus::heartbeat_locked() {
    auto now = Clock::now();
    if (std::chrono::duration<double>(now - m_last_beat).count() < m_options.heartbeat_seconds) return;
    m_last_beat = now;
    // Streamed output (-v) already shows the step is alive.
    bool streamed = m_options.verbose > 0 && m_tail.bytes() > m_bytes_at_beat;
    m_bytes_at_beat = m_tail.bytes();
    if (streamed) return;
    std::string elapsed = core::format_duration(std::chrono::duration<double>(now - m_started).count());
    if (std::string downloads = downloads_locked(now); !downloads.empty()) {
        fmt::print(stderr, "  {}: {}, {}\n", m_label, elapsed, downloads);
        std::fflush(stderr);
        return;
    }
    std::string last = core::redact_text(m_tail.last_line());
    if (m_tail.bytes() == 0) fmt::print(stderr, "  {}: {}, no output yet\n", m_label, elapsed);
    else
        fmt::print(stderr, "  {}: {}, {} of output ({} lines){}\n", m_label, elapsed,
                   core::format_bytes(m_tail.bytes()), m_tail.lines(),
                   last.empty() ? "" : ", last: " + core::cut_to_columns(last, k_heartbeat_tail));
    std::fflush(stderr);
}

void TerminalStatus::step_started(size_t index, size_t total, const steps::ResolvedStep& step) {
    std::lock_guard lock(m_mutex);
    m_label = fmt::format("[{}/{}] {}", index + 1, total, step.id);
    m_kind = step.kind;
    m_started = m_last_beat = Clock::now();
    m_tail.reset();
    m_download.reset();
    m_samples.clear();
    m_bytes_at_beat = 0;
    m_stream.clear();
    m_running = true;
    if (m_smart) {
        draw_live_locked();
    } else {
        fmt::print(stderr, "{}  {} ...\n", m_label, m_kind);
        std::fflush(stderr);
    }
    if (!m_thread.joinable()) m_thread = std::thread([this] { ticker(); });
}

void TerminalStatus::step_output(std::string_view chunk) {
    std::lock_guard lock(m_mutex);
    m_tail.feed(chunk);
    if (m_options.verbose <= 0) return;
    // Whole lines only, so the live line is never drawn into the middle of one. Only the new
    // chunk is searched for a line end: a line that does not end is not searched again for
    // every chunk, and past k_stream_max it is printed in pieces rather than held.
    const size_t end_in_chunk = chunk.rfind('\n');
    m_stream += chunk;
    if (end_in_chunk != std::string_view::npos) {
        print_stream_locked(m_stream.size() - chunk.size() + end_in_chunk + 1, false);
    } else if (m_stream.size() >= k_stream_max) {
        print_stream_locked(stream_break(m_stream), true);
    }
}

void TerminalStatus::step_progress(const pyenv::DownloadProgress& progress) {
    std::lock_guard lock(m_mutex);
    m_download = progress;
    const auto now = Clock::now();
    m_samples.emplace_back(now, progress.done);
    drop_old_samples_locked(now);
}

/// Samples older than the rate's window go, but for the newest of them (the window's start).
void TerminalStatus::drop_old_samples_locked(Clock::time_point now) {
    while (m_samples.size() > 1 && now - m_samples[1].first >= k_rate_window) m_samples.pop_front();
}

std::string TerminalStatus::downloads_locked(Clock::time_point now) {
    if (!m_download || m_download->files_done >= m_download->files) return {};
    // The rate over the last few seconds: it falls to 0 when the bytes stop coming.
    drop_old_samples_locked(now);
    std::string rate;
    if (!m_samples.empty()) {
        double seconds = std::chrono::duration<double>(now - m_samples.front().first).count();
        if (seconds >= 0.5)
            rate = ", " +
                   core::format_bytes(static_cast<std::uint64_t>(
                       static_cast<double>(m_download->done - std::min(m_download->done, m_samples.front().second)) /
                       seconds)) +
                   "/s";
    }
    std::string text = fmt::format("downloading {} of {}{}", core::format_bytes(m_download->done),
                                   core::format_bytes(m_download->total), rate);
    if (m_download->files > 1) text += fmt::format(", {} of {} files", m_download->files_done, m_download->files);
    // A file name pip took from a URL: shown as every child's text is, credentials masked.
    if (!m_download->current.empty()) text += ", " + core::redact_text(m_download->current);
    return text;
}

void TerminalStatus::flush_stream_locked() {
    if (!m_stream.empty()) print_stream_locked(m_stream.size(), true);
}

/// Prints the first `size` bytes of the stream (with a line end after them when `end_line`) and
/// drops them. Children's output reaches us as text already (exec::run_process); anything else
/// is made so here too, since it goes to the user's terminal.
void TerminalStatus::print_stream_locked(size_t size, bool end_line) {
    clear_live_locked();
    fmt::print(stderr, "{}{}", core::redact_text(core::printable_text(std::string_view(m_stream).substr(0, size))),
               end_line ? "\n" : "");
    m_stream.erase(0, size);
    if (m_smart && m_running) draw_live_locked();
    std::fflush(stderr);
}

void TerminalStatus::step_finished(size_t index, size_t total, const engine::StepReport& report) {
    std::lock_guard lock(m_mutex);
    m_running = false;
    flush_stream_locked();
    clear_live_locked();
    std::string result = engine::to_string(report.result);
    fmt::print(stderr, "[{}/{}] {}  {}  {}{}\n", index + 1, total, report.id, report.kind,
               paint(result, color_for(report.result)),
               report.reason.empty() ? fmt::format(" ({})", core::format_duration(report.seconds))
                                     : fmt::format(": {} ({})", report.reason, core::format_duration(report.seconds)));
    std::fflush(stderr);
}

void TerminalStatus::message(std::string_view text) {
    std::lock_guard lock(m_mutex);
    clear_live_locked();
    fmt::print(stderr, "{}\n", text);
    if (m_running && m_smart) draw_live_locked();
    std::fflush(stderr);
}

void TerminalStatus::summary(const engine::RunReport& report) {
    std::lock_guard lock(m_mutex);
    m_running = false;
    flush_stream_locked();
    clear_live_locked();
    size_t w_id = 4, w_kind = 4, w_res = 6;
    for (const auto& s : report.steps) {
        w_id = std::max(w_id, s.id.size());
        w_kind = std::max(w_kind, s.kind.size());
        w_res = std::max(w_res, std::string(engine::to_string(s.result)).size());
    }
    fmt::print(
        stderr, "\n{}\n",
        paint(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>7}", "step", w_id, "kind", w_kind, "result", w_res, "time"),
              k_bold));
    for (const auto& s : report.steps) {
        std::string res = fmt::format("{:<{}}", engine::to_string(s.result), w_res);
        fmt::print(stderr, "{:<{}}  {:<{}}  {}  {:>7}{}\n", s.id, w_id, s.kind, w_kind, paint(res, color_for(s.result)),
                   core::format_duration(s.seconds), s.reason.empty() ? "" : "  " + s.reason);
    }
    if (report.history_after) {
        // No "before" entry: the venv did not exist (or had no interpreter) when the run began.
        fmt::print(stderr, "\nchanges: {} ({})\n", report.changes_summary,
                   report.history_before
                       ? fmt::format("history #{} -> #{}", *report.history_before, *report.history_after)
                       : fmt::format("history #{}; no venv before this run", *report.history_after));
        if (!report.changes.empty()) fmt::print(stderr, "{}", report.changes);
    }
    if (report.rolled_back) fmt::print(stderr, "rolled back: the venv is as it was before this run\n");
    for (const auto& w : report.warnings) fmt::print(stderr, "{} {}\n", paint("warning:", k_yellow), w);
    fmt::print(stderr, "{} in {} (venv {})\n", report.ok() ? paint("done", k_green) : paint("failed", k_red),
               core::format_duration(report.seconds), report.venv.string());
    std::fflush(stderr);
}

void TerminalStatus::error(const Error& error) {
    std::lock_guard lock(m_mutex);
    m_running = false;
    flush_stream_locked();
    clear_live_locked();
    // An error may quote a child's output (its log's last lines, a probe's answer): printed as
    // text, so that no escape in it acts on the terminal.
    const std::string message = core::printable_text(error.message);
    const std::string text = core::printable_text(error.detail);
    fmt::print(stderr, "{} {}\n", paint("error:", k_red), message);
    // A recipe error's detail lists every problem, the first of which is the message itself.
    std::string_view detail = text;
    if (detail.starts_with(message)) detail.remove_prefix(message.size());
    while (!detail.empty() && detail.front() == '\n') detail.remove_prefix(1);
    if (!detail.empty()) fmt::print(stderr, "{}\n", detail);
    std::fflush(stderr);
}

int report_error(const Error& e, bool json) {
    TerminalStatus status;
    status.error(e);
    if (json) fmt::print("{}", error_json(e));
    return exit_code_for(e);
}

}  // namespace bootstrap::cli
