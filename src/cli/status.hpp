#pragma once
// Terminal status on stderr, in the manner of ninja's LinePrinter: one live, overprinted line on
// a smart terminal (isatty, TERM != dumb), plain lines otherwise (CI, `docker build`); colour
// only on a terminal and never with NO_COLOR.

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "engine/runner.hpp"

namespace bootstrap::cli {

class TerminalStatus final : public engine::RunObserver {
public:
    TerminalStatus();
    ~TerminalStatus() override;

    void step_started(size_t index, size_t total, const steps::ResolvedStep& step) override;
    void step_finished(size_t index, size_t total, const engine::StepReport& report) override;
    void message(std::string_view text) override;

    /// The final table: step, kind, result, time, reason.
    void summary(const engine::RunReport& report);
    /// Print an error with its detail (log tail etc.).
    void error(const Error& error);

    [[nodiscard]] bool smart() const { return m_smart; }

private:
    void ticker();
    void draw_live_locked();
    void clear_live_locked();
    std::string paint(std::string_view text, const char* color) const;

    bool m_smart = false;
    bool m_color = false;
    std::mutex m_mutex;
    std::string m_live;  // "[3/8] torch  install" while a step runs
    std::chrono::steady_clock::time_point m_started;
    std::atomic<bool> m_running{false};
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

/// Same decisions, for other commands: should stderr get colour?
[[nodiscard]] bool stderr_is_smart();

}  // namespace bootstrap::cli
