#include "steps/child_output.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/terminal_text.hpp"

namespace bootstrap::steps {

using core::cut_to_columns;
using core::plain_text;

namespace {

constexpr size_t k_cause_max = 400;

bool has_space(std::string_view s) { return s.find(' ') != std::string_view::npos; }

std::string_view after(std::string_view s, std::string_view prefix) { return s.substr(prefix.size()); }

/// The rest of a uv cause line ("cause: ", "Caused by: ", "├─▶ ", "╰─▶ "), or nullopt.
std::optional<std::string_view> cause_text(std::string_view trimmed) {
    for (std::string_view prefix : {"cause: ", "Caused by: ", "├─▶ ", "╰─▶ "})
        if (trimmed.starts_with(prefix)) return core::trim(after(trimmed, prefix));
    return std::nullopt;
}

/// A line that belongs to a diagram rather than continuing a cause's text.
bool is_glyph_line(std::string_view trimmed) {
    for (std::string_view glyph : {"│", "├", "╰", "×", "help:", "hint:"})
        if (trimmed.starts_with(glyph)) return true;
    return false;
}

std::string cut(std::string text) {
    if (text.size() <= k_cause_max) return text;
    return cut_to_columns(text, k_cause_max);
}

}  // namespace

std::string installer_cause(std::string_view output) {
    std::vector<std::string> lines = core::split(plain_text(output), '\n');
    for (const auto& line : lines)
        if (line.starts_with("ERROR: ")) return cut(std::string(core::trim(after(line, "ERROR: "))));

    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        std::string_view trimmed = core::trim(line);
        std::string_view headline;
        // pip's "error: subprocess-exited-with-error" is an id, not a sentence: its "× ..." says it.
        if (line.starts_with("error: ") && has_space(core::trim(after(line, "error: "))))
            headline = core::trim(after(line, "error: "));
        else if (trimmed.starts_with("× "))
            headline = core::trim(after(trimmed, "× "));
        else
            continue;
        while (!headline.empty() && headline.back() == ':') headline.remove_suffix(1);

        std::vector<std::string> causes;
        for (size_t j = i + 1; j < lines.size(); ++j) {
            std::string_view next = core::trim(lines[j]);
            if (auto cause = cause_text(next)) {
                causes.emplace_back(*cause);
            } else if (!next.empty() && !causes.empty() && lines[j].starts_with(" ") &&
                       !is_glyph_line(next)) {
                causes.back() += " " + std::string(next);  // a wrapped cause goes on
            } else {
                break;
            }
        }
        if (causes.empty()) return cut(std::string(headline));
        if (causes.back().starts_with("Because ")) return cut(causes.back());
        return cut(fmt::format("{}: {}", headline, causes.back()));
    }
    return {};
}

}  // namespace bootstrap::steps
