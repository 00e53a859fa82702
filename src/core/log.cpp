#include "core/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include "core/fs.hpp"
#include "core/redact.hpp"

namespace bootstrap::core::log {

namespace {

namespace fs = std::filesystem;

/// A run's lines: kept in memory (up to k_buffer_cap bytes) until the run persists them to a
/// file, then appended to that file one write(2) per line, so a killed run loses nothing.
class RunSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    static constexpr size_t k_buffer_cap = 4u << 20;

    void begin() {
        std::lock_guard<std::mutex> guard(mutex_);
        reset();
        m_active = true;
    }

    Status persist(const fs::path& file) {
        std::lock_guard<std::mutex> guard(mutex_);
        if (m_fd >= 0) return {};
        if (file.has_parent_path()) BS_CHECK(core::create_directories(file.parent_path()));
        int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
            return fail(ErrorCode::io,
                        fmt::format("cannot open the run log {}: {}", file.string(), std::strerror(errno)));
        m_fd = fd;
        m_path = file;
        if (m_dropped > 0)
            m_buffer += fmt::format(
                "[{} earlier lines left out: the run kept at most {} bytes "
                "before it changed anything]\n",
                m_dropped, k_buffer_cap);
        write_all(m_buffer);
        m_buffer.clear();
        m_buffer.shrink_to_fit();
        return {};
    }

    void end() {
        std::lock_guard<std::mutex> guard(mutex_);
        reset();
    }

    fs::path path() {
        std::lock_guard<std::mutex> guard(mutex_);
        return m_path;
    }

    bool active() const { return m_active; }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        if (!m_active) return;
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        std::string_view line(formatted.data(), formatted.size());
        if (m_fd >= 0) {
            write_all(line);
        } else if (m_buffer.size() + line.size() <= k_buffer_cap) {
            m_buffer.append(line);
        } else {
            ++m_dropped;
        }
    }
    void flush_() override {}

private:
    void write_all(std::string_view text) {
        while (!text.empty()) {
            ssize_t n = ::write(m_fd, text.data(), text.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                return;  // a log that cannot be written must not fail the run
            }
            text.remove_prefix(static_cast<size_t>(n));
        }
    }
    void reset() {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
        m_path.clear();
        m_buffer.clear();
        m_dropped = 0;
        m_active = false;
    }

    bool m_active = false;
    int m_fd = -1;
    fs::path m_path;
    std::string m_buffer;
    size_t m_dropped = 0;
};

/// stderr, or the writer a terminal UI registered (set_console_writer).
class ConsoleSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    void set_writer(std::function<void(std::string_view)> writer) {
        std::lock_guard<std::mutex> guard(mutex_);
        m_writer = std::move(writer);
    }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        std::string_view line(formatted.data(), formatted.size());
        if (m_writer) {
            m_writer(line);
        } else {
            std::fwrite(line.data(), 1, line.size(), stderr);
            std::fflush(stderr);
        }
    }
    void flush_() override { std::fflush(stderr); }

private:
    std::function<void(std::string_view)> m_writer;
};

spdlog::level::level_enum to_spdlog(Level level) {
    switch (level) {
        case Level::trace: return spdlog::level::trace;
        case Level::debug: return spdlog::level::debug;
        case Level::info: return spdlog::level::info;
        case Level::warn: return spdlog::level::warn;
        case Level::error: return spdlog::level::err;
        case Level::off: return spdlog::level::off;
    }
    return spdlog::level::off;
}

struct State {
    std::shared_ptr<ConsoleSink> console = std::make_shared<ConsoleSink>();
    std::shared_ptr<RunSink> run = std::make_shared<RunSink>();
    std::shared_ptr<spdlog::logger> logger;
    Level console_level = Level::warn;
    std::set<std::string> secrets;

    State() {
        console->set_pattern("bootstrap [%H:%M:%S.%e] %l: %v");
        console->set_level(to_spdlog(console_level));
        run->set_pattern("%Y-%m-%dT%H:%M:%S.%e %-5l %v");
        run->set_level(spdlog::level::debug);
        logger = std::make_shared<spdlog::logger>("bootstrap", spdlog::sinks_init_list{console, run});
        update_level();
    }

    /// The logger passes what at least one destination takes.
    void update_level() {
        auto level = to_spdlog(console_level);
        if (run->active()) level = std::min(level, spdlog::level::debug);
        logger->set_level(level);
    }
};

State& state() {
    static State s;
    return s;
}

}  // namespace

std::optional<Level> parse_level(std::string_view name) {
    if (name == "trace") return Level::trace;
    if (name == "debug") return Level::debug;
    if (name == "info") return Level::info;
    if (name == "warn" || name == "warning") return Level::warn;
    if (name == "error") return Level::error;
    if (name == "off") return Level::off;
    return std::nullopt;
}

std::string configure_console(int verbose) {
    Level level = verbose >= 2 ? Level::debug : verbose == 1 ? Level::info : Level::warn;
    std::string warning;
    if (const char* env = std::getenv("BOOTSTRAP_LOG"); env && *env) {
        if (auto parsed = parse_level(env)) {
            level = *parsed;
        } else {
            warning = fmt::format(
                "BOOTSTRAP_LOG={} is not a log level (trace, debug, info, warn, "
                "error, off); using {}",
                core::redact_text(env),
                verbose >= 2   ? "debug"
                : verbose == 1 ? "info"
                               : "warn");
        }
    }
    auto& s = state();
    s.console_level = level;
    s.console->set_level(to_spdlog(level));
    s.update_level();
    return warning;
}

Level console_level() { return state().console_level; }

void set_console_writer(std::function<void(std::string_view line)> writer) {
    state().console->set_writer(std::move(writer));
}

void set_secret_names(std::set<std::string> names) { state().secrets = std::move(names); }

const std::set<std::string>& secret_names() { return state().secrets; }

void begin_run() {
    auto& s = state();
    s.run->begin();
    s.update_level();
}

Status persist_run_log(const std::filesystem::path& file) {
    auto& s = state();
    if (!s.run->active()) return {};
    return s.run->persist(file);
}

std::filesystem::path run_log_path() { return state().run->path(); }

void end_run() {
    auto& s = state();
    s.run->end();
    s.update_level();
}

bool enabled(Level level) { return state().logger->should_log(to_spdlog(level)); }

void write(Level level, std::string_view message) {
    // One record, one line: a newline inside (a `python -c` script in argv) is written as \n.
    std::string text = core::redact_text(message);
    std::string one_line;
    one_line.reserve(text.size());
    for (char c : text) {
        if (c == '\n') one_line += "\\n";
        else one_line += c;
    }
    state().logger->log(to_spdlog(level), "{}", one_line);
}

std::string shown_env(std::string_view name, std::string_view value) {
    return fmt::format("{}={}", name, core::shown_value(name, value, state().secrets));
}

}  // namespace bootstrap::core::log
