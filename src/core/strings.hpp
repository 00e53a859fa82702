#pragma once
// Small string utilities shared by every module.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace bootstrap::core {

[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] std::vector<std::string> split(std::string_view s, char sep);
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep);
[[nodiscard]] std::string to_lower(std::string_view s);
[[nodiscard]] bool starts_with(std::string_view s, std::string_view prefix);
/// What follows `prefix` in `s`, or nothing when `s` does not start with it: the way to take a
/// known prefix off without counting its characters.
[[nodiscard]] std::optional<std::string_view> after_prefix(std::string_view s, std::string_view prefix);
/// Take `prefix` off the front of `s` when it is there; true when it was.
bool consume_prefix(std::string_view& s, std::string_view prefix);

/// Levenshtein distance, for "did you mean" suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` (distance <= max(2, len/3)), or "" when none is close.
[[nodiscard]] std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Quote an argv element for display, shell-style, only when it needs it.
[[nodiscard]] std::string shell_quote(std::string_view arg);
[[nodiscard]] std::string format_argv(const std::vector<std::string>& argv);

/// The last `n` lines of `text`.
[[nodiscard]] std::string last_lines(std::string_view text, size_t n);

/// "%2B" -> "+" (a URL's path part). A '%' not followed by two hex digits is kept as
/// written; never throws.
[[nodiscard]] std::string percent_decode(std::string_view text);

/// Seconds as "0.12s", "42s", "3:05".
[[nodiscard]] std::string format_duration(double seconds);

/// `s` for an error message: itself when at most `max` characters, else its first `max`
/// characters and "... (N characters)", so hostile input cannot flood a terminal.
[[nodiscard]] std::string clip(std::string_view s, size_t max = 200);

// Numbers read from files, logs, headers and the command line. Nothing here throws: a text that
// is not a number of the type, or one that does not fit it, is nullopt (std::sto* would throw
// std::out_of_range on "1" followed by 400 zeros, and atoi is undefined there).

/// A decimal integer that is the whole of `s` and fits T: digits, with one leading '-' only
/// for a signed T; no '+', no spaces.
template <class T>
[[nodiscard]] std::optional<T> parse_int(std::string_view s) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    T value{};
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (s.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
    return value;
}

/// The decimal digits `s` starts with, as T ("30abc" -> 30, as atoi reads it); nullopt when
/// `s` does not start with a digit or the number does not fit T.
template <class T>
[[nodiscard]] std::optional<T> parse_leading_int(std::string_view s) {
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
    return parse_int<T>(s.substr(0, digits));
}

/// A finite decimal number that is the whole of `s` ("412.3", "1e3", "-2"); nullopt for
/// anything else, "inf", "nan" and numbers beyond double's range.
[[nodiscard]] std::optional<double> parse_double(std::string_view s);

}  // namespace bootstrap::core
