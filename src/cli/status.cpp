#include "cli/status.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/strings.hpp"

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
}  // namespace

bool stderr_is_smart() {
    const char* term = std::getenv("TERM");
    return ::isatty(STDERR_FILENO) && term && std::strcmp(term, "dumb") != 0;
}

TerminalStatus::TerminalStatus() {
    m_smart = stderr_is_smart();
    m_color = m_smart && std::getenv("NO_COLOR") == nullptr;
    if (m_smart) m_thread = std::thread([this] { ticker(); });
}

TerminalStatus::~TerminalStatus() {
    m_stop = true;
    if (m_thread.joinable()) m_thread.join();
}

std::string TerminalStatus::paint(std::string_view text, const char* color) const {
    if (!m_color) return std::string(text);
    return fmt::format("{}{}\x1b[0m", color, text);
}

void TerminalStatus::ticker() {
    while (!m_stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        std::lock_guard lock(m_mutex);
        if (m_running) draw_live_locked();
    }
}

void TerminalStatus::draw_live_locked() {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    auto secs = static_cast<long>(s);
    fmt::print(stderr, "\r{}  {}:{:02}\x1b[K", m_live, secs / 60, secs % 60);
    std::fflush(stderr);
}

void TerminalStatus::clear_live_locked() {
    if (m_smart) fmt::print(stderr, "\r\x1b[K");
}

void TerminalStatus::step_started(size_t index, size_t total, const steps::ResolvedStep& step) {
    std::lock_guard lock(m_mutex);
    m_live = fmt::format("[{}/{}] {}  {}", index + 1, total, step.id, recipe::to_string(step.kind));
    m_started = std::chrono::steady_clock::now();
    if (m_smart) {
        m_running = true;
        draw_live_locked();
    } else {
        fmt::print(stderr, "{} ...\n", m_live);
        std::fflush(stderr);
    }
}

void TerminalStatus::step_finished(size_t index, size_t total, const engine::StepReport& report) {
    std::lock_guard lock(m_mutex);
    m_running = false;
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
    if (m_running) draw_live_locked();
    std::fflush(stderr);
}

void TerminalStatus::summary(const engine::RunReport& report) {
    std::lock_guard lock(m_mutex);
    m_running = false;
    clear_live_locked();
    size_t w_id = 4, w_kind = 4, w_res = 6;
    for (const auto& s : report.steps) {
        w_id = std::max(w_id, s.id.size());
        w_kind = std::max(w_kind, s.kind.size());
        w_res = std::max(w_res, std::string(engine::to_string(s.result)).size());
    }
    fmt::print(stderr, "\n{}\n", paint(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>7}", "step", w_id, "kind", w_kind,
                                                   "result", w_res, "time"),
                                       k_bold));
    for (const auto& s : report.steps) {
        std::string res = fmt::format("{:<{}}", engine::to_string(s.result), w_res);
        fmt::print(stderr, "{:<{}}  {:<{}}  {}  {:>7}{}\n", s.id, w_id, s.kind, w_kind,
                   paint(res, color_for(s.result)), core::format_duration(s.seconds),
                   s.reason.empty() ? "" : "  " + s.reason);
    }
    if (report.history_after) {
        fmt::print(stderr, "\nchanges: {} (history #{} -> #{})\n", report.changes_summary,
                   report.history_before ? std::to_string(*report.history_before) : "-", *report.history_after);
        if (!report.changes.empty()) fmt::print(stderr, "{}", report.changes);
    }
    if (report.rolled_back) fmt::print(stderr, "rolled back: the venv is as it was before this run\n");
    for (const auto& w : report.warnings) fmt::print(stderr, "{} {}\n", paint("warning:", k_yellow), w);
    fmt::print(stderr, "{} in {} (venv {})\n",
               report.ok() ? paint("done", k_green) : paint("failed", k_red),
               core::format_duration(report.seconds), report.venv.string());
    std::fflush(stderr);
}

void TerminalStatus::error(const Error& error) {
    std::lock_guard lock(m_mutex);
    m_running = false;
    clear_live_locked();
    fmt::print(stderr, "{} {}\n", paint("error:", k_red), error.message);
    // A recipe error's detail lists every problem, the first of which is the message itself.
    std::string_view detail = error.detail;
    if (detail.starts_with(error.message)) detail.remove_prefix(error.message.size());
    while (!detail.empty() && detail.front() == '\n') detail.remove_prefix(1);
    if (!detail.empty()) fmt::print(stderr, "{}\n", detail);
    std::fflush(stderr);
}

}  // namespace bootstrap::cli
