#pragma once
// Terminal status on stderr, in the manner of ninja's LinePrinter: one live, overprinted line on
// a smart terminal (isatty, TERM != dumb) showing the running step, its time and the last line
// its children printed, or while an installer downloads, the bytes done, the total and the rate;
// plain lines otherwise (CI, `docker build`), with a heartbeat line while a long step runs
// (with the same byte counts while it downloads). Colour only on a terminal and never with NO_COLOR. With `verbose`, the
// children's output is streamed to stderr as it arrives (it always goes to the step log).

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/terminal_text.hpp"
#include "engine/runner.hpp"

namespace bootstrap::cli {

struct StatusOptions {
    int verbose = 0;  // -v: stream step output
    /// Plain stderr: seconds between heartbeat lines of a running step; 0 takes
    /// $BOOTSTRAP_HEARTBEAT, else 20.
    double heartbeat_seconds = 0;
};

class TerminalStatus final : public engine::RunObserver {
public:
    explicit TerminalStatus(StatusOptions options = {});
    ~TerminalStatus() override;

    void step_started(size_t index, size_t total, const steps::ResolvedStep& step) override;
    void step_output(std::string_view chunk) override;
    void step_progress(const pyenv::DownloadProgress& progress) override;
    void step_finished(size_t index, size_t total, const engine::StepReport& report) override;
    void message(std::string_view text) override;

    /// The final table: step, kind, result, time, reason.
    void summary(const engine::RunReport& report);
    /// Print an error with its detail (log tail etc.).
    void error(const Error& error);

    [[nodiscard]] bool smart() const { return m_smart; }

private:
    using Clock = std::chrono::steady_clock;
    void ticker();
    void draw_live_locked();
    void clear_live_locked();
    void heartbeat_locked();
    void flush_stream_locked();
    void print_stream_locked(size_t size, bool end_line);
    std::string paint(std::string_view text, const char* color) const;
    /// "downloading 1.2 GB of 2.5 GB, 31.2 MB/s, torch" while files are in flight, else "".
    std::string downloads_locked(Clock::time_point now);
    void drop_old_samples_locked(Clock::time_point now);

    bool m_smart = false;
    bool m_color = false;
    StatusOptions m_options;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::string m_label;  // "[3/8] torch" while a step runs
    std::string m_kind;   // "install"
    Clock::time_point m_started;
    Clock::time_point m_last_beat;
    std::uint64_t m_bytes_at_beat = 0;
    core::OutputTail m_tail;                            // the running step's output so far
    std::string m_stream;                               // -v: the unfinished line of output not yet printed
    std::optional<pyenv::DownloadProgress> m_download;  // the running step's, once it has any
    std::deque<std::pair<Clock::time_point, std::uint64_t>> m_samples;  // bytes done, for the rate
    bool m_running = false;
    bool m_stop = false;
    std::thread m_thread;  // started with the first step
};

/// Same decisions, for other commands: should stderr get colour?
[[nodiscard]] bool stderr_is_smart();

/// Print `e` on stderr (and its JSON on stdout with `json`); the exit code it maps to.
int report_error(const Error& e, bool json = false);

}  // namespace bootstrap::cli
