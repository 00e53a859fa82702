#pragma once
// bootstrap's debug log (spdlog): plan decisions, step keys, skip reasons, the children it
// starts (argv, cwd, the environment they get on top of bootstrap's own), exit statuses and
// timings. Two destinations:
//   - the console (stderr): `warn` by default; `-v` raises it to `info`, `-vv` to `debug`, and
//     BOOTSTRAP_LOG=trace|debug|info|warn|error|off sets it outright;
//   - a run's file, `<venv>/.bootstrap/logs/<run-id>/bootstrap.log`, always at `debug`. A run
//     keeps its lines in memory until it first changes something (persist_run_log), so a
//     no-op run writes no file.
// Every message is redacted before it reaches either (core/redact.hpp): URL credentials, and
// the values of secret-named variables in what log_env prints. This is the log, not the UI:
// the status line, results and errors are printed by the CLI as before.

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"

namespace bootstrap::core::log {

enum class Level { trace, debug, info, warn, error, off };

/// "debug" -> Level::debug; nullopt for anything else (names as BOOTSTRAP_LOG takes them).
[[nodiscard]] std::optional<Level> parse_level(std::string_view name);

/// The console level for `-v` given `verbose` times, unless BOOTSTRAP_LOG names one. Returns a
/// warning to show when BOOTSTRAP_LOG is set to something that is not a level ("" otherwise).
std::string configure_console(int verbose);
[[nodiscard]] Level console_level();

/// Who prints console lines (each ends in '\n'): a terminal UI that keeps a live status line
/// or a half-streamed line of output registers itself so a log line never lands inside one.
/// An empty function restores plain stderr.
void set_console_writer(std::function<void(std::string_view line)> writer);

/// Names whose values are secrets beyond the built-in patterns (a recipe's `[env] secret`).
void set_secret_names(std::set<std::string> names);
[[nodiscard]] const std::set<std::string>& secret_names();

/// A run starts: its lines are kept in memory (bounded) until persist_run_log or end_run.
void begin_run();
/// Write the kept lines to `file` (created with its directory) and every later line too.
[[nodiscard]] Status persist_run_log(const std::filesystem::path& file);
/// The run's file, when persisted ("" otherwise).
[[nodiscard]] std::filesystem::path run_log_path();
/// The run is over: flush and close its file, drop the kept lines.
void end_run();

/// Whether a message at `level` goes anywhere (skip building costly messages when not).
[[nodiscard]] bool enabled(Level level);

/// Log one already-formatted message (redacted here).
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::debug)) write(Level::debug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::info)) write(Level::info, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::warn)) write(Level::warn, fmt::format(format, std::forward<Args>(args)...));
}

/// "NAME=value" for logging an environment entry: "***" for secret names, URL credentials
/// redacted otherwise.
[[nodiscard]] std::string shown_env(std::string_view name, std::string_view value);

}  // namespace bootstrap::core::log
