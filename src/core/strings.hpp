#pragma once
// Small string utilities shared by every module.

#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::core {

[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] std::vector<std::string> split(std::string_view s, char sep);
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep);
[[nodiscard]] std::string to_lower(std::string_view s);
[[nodiscard]] bool starts_with(std::string_view s, std::string_view prefix);

/// Levenshtein distance, for "did you mean" suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` (distance <= max(2, len/3)), or "" when none is close.
[[nodiscard]] std::string closest_match(std::string_view word,
                                        const std::vector<std::string>& candidates);

/// Quote an argv element for display, shell-style, only when it needs it.
[[nodiscard]] std::string shell_quote(std::string_view arg);
[[nodiscard]] std::string format_argv(const std::vector<std::string>& argv);

/// The last `n` lines of `text`.
[[nodiscard]] std::string last_lines(std::string_view text, size_t n);

/// Seconds as "0.12s", "42s", "3:05".
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace bootstrap::core
