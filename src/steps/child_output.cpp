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
        else if (trimmed.starts_with("× ")) headline = core::trim(after(trimmed, "× "));
        else continue;
        while (!headline.empty() && headline.back() == ':') headline.remove_suffix(1);

        std::vector<std::string> causes;
        for (size_t j = i + 1; j < lines.size(); ++j) {
            std::string_view next = core::trim(lines[j]);
            if (auto cause = cause_text(next)) {
                causes.emplace_back(*cause);
            } else if (!next.empty() && !causes.empty() && lines[j].starts_with(" ") && !is_glyph_line(next)) {
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

namespace {

struct Pattern {
    std::string_view text;
    std::string_view why;
};

// uv's and pip's wording (uv 0.4-0.13, pip 23-25). Transient first: see classify_installer_output.
constexpr Pattern k_transient[] = {
    {"HTTP status server error", "the index answered with a server error (HTTP 5xx)"},
    {" Server Error", "the index answered with a server error (HTTP 5xx)"},
    {"429 Too Many Requests", "the index asked to slow down (HTTP 429)"},
    {"408 Request Timeout", "the index timed out the request (HTTP 408)"},
    {"error sending request", "a request to the index failed"},
    {"timed out", "a network operation timed out"},
    {"network timeout", "a network operation timed out"},
    {"ReadTimeoutError", "a network operation timed out"},
    {"ConnectTimeoutError", "a network operation timed out"},
    {"onnection reset", "the connection was reset"},
    {"onnection closed", "the connection was closed early"},
    {"onnection refused", "the connection was refused"},
    {"ConnectionResetError", "the connection was reset"},
    {"IncompleteRead", "a download was cut short"},
    {"ProtocolError", "a download was cut short"},
    {"unexpected EOF", "a download was cut short"},
    {"end of file before message length reached", "a download was cut short"},
    {"error decoding response body", "a download was cut short"},
    {"Max retries exceeded", "the index could not be reached"},
    {"dns error", "a host name did not resolve"},
    {"failed to lookup address", "a host name did not resolve"},
    {"Temporary failure in name resolution", "a host name did not resolve"},
};

constexpr Pattern k_permanent[] = {
    {"No solution found when resolving", "the requirements have no solution"},
    {"requirements are unsatisfiable", "the requirements have no solution"},
    {"ResolutionImpossible", "the requirements have no solution"},
    {"Could not find a version that satisfies the requirement", "no version satisfies the requirement"},
    {"No matching distribution found", "no version satisfies the requirement"},
    {"was not found in the package registry", "a package is not on the index"},
    {"HTTP status client error", "the index refused the request (HTTP 4xx)"},
    {" Client Error", "the index refused the request (HTTP 4xx)"},
    {"ash mismatch", "a file's hash differs from the one required"},
    {"DO NOT MATCH THE HASHES", "a file's hash differs from the one required"},
    {"No `pyproject.toml` found", "the project directory holds no pyproject.toml"},
    {"File not found", "a file the command names does not exist"},
    {"Distribution not found at", "a file the command names does not exist"},
    {"needs to be updated, but `--locked` was provided", "the project's uv.lock is out of date"},
    {"Failed to parse", "an input could not be parsed"},
};

}  // namespace

FailureClass classify_installer_output(std::string_view output) {
    const std::string text = plain_text(output);
    for (const auto& p : k_transient)
        if (text.find(p.text) != std::string::npos) return {FailureKind::transient, std::string(p.why)};
    for (const auto& p : k_permanent)
        if (text.find(p.text) != std::string::npos) return {FailureKind::permanent, std::string(p.why)};
    return {};
}

}  // namespace bootstrap::steps
