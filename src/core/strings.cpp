#include "core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace bootstrap::core {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<std::string_view> after_prefix(std::string_view s, std::string_view prefix) {
    if (!starts_with(s, prefix)) return std::nullopt;
    return s.substr(prefix.size());
}

bool consume_prefix(std::string_view& s, std::string_view prefix) {
    if (!starts_with(s, prefix)) return false;
    s.remove_prefix(prefix.size());
    return true;
}

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

std::string shell_quote(std::string_view arg) {
    if (!arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
        }))
        return std::string(arg);
    std::string out = "'";
    for (char c : arg) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string format_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (size_t i = 0; i < argv.size(); ++i) {
        if (i) out += ' ';
        out += shell_quote(argv[i]);
    }
    return out;
}

std::string last_lines(std::string_view text, size_t n) {
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    size_t pos = text.size();
    for (size_t count = 0; count < n; ++count) {
        size_t nl = text.rfind('\n', pos == 0 ? 0 : pos - 1);
        if (nl == std::string_view::npos || pos == 0) return std::string(text);
        pos = nl;
    }
    return std::string(text.substr(pos + 1));
}

std::string percent_decode(std::string_view text) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
            continue;
        }
        out += text[i];
    }
    return out;
}

std::string format_duration(double seconds) {
    if (seconds < 10) return fmt::format("{:.2f}s", seconds);
    if (seconds < 60) return fmt::format("{:.0f}s", seconds);
    auto total = static_cast<long>(seconds);
    if (total < 3600) return fmt::format("{}:{:02}", total / 60, total % 60);
    return fmt::format("{}:{:02}:{:02}", total / 3600, (total / 60) % 60, total % 60);
}

std::string clip(std::string_view s, size_t max) {
    if (s.size() <= max) return std::string(s);
    return fmt::format("{}... ({} characters)", s.substr(0, max), s.size());
}

std::optional<double> parse_double(std::string_view s) {
    double value = 0;
    const char* end = s.data() + s.size();
    // chars_format::general: decimal and scientific, no hex; from_chars takes no leading '+'.
    auto [ptr, ec] = std::from_chars(s.data(), end, value, std::chars_format::general);
    if (s.empty() || ec != std::errc{} || ptr != end || !std::isfinite(value)) return std::nullopt;
    return value;
}

}  // namespace bootstrap::core
