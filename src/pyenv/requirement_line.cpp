#include "pyenv/requirement_line.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "pyenv/marker.hpp"
#include "pyenv/name.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// A path pip and uv both read as is: no space, '#', ';', quote, '%' or '@' (uv percent-decodes
/// a path it turns into a URL; pip reads "x @ y" as a direct reference).
bool is_plain_path(std::string_view path) {
    return std::all_of(path.begin(), path.end(), [](char c) {
        return is_alnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '~';
    });
}

/// RFC 3986: every byte but the unreserved ones and '/' as %XX.
std::string file_url(std::string_view path) {
    std::string out = "file://";
    for (char c : path) {
        if (is_alnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') out += c;
        else out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
    return out;
}

bool is_hex64(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Error unwritable(const HashedRequirement& r, std::string_view what) {
    return Error{ErrorCode::usage, fmt::format("{}: {}: not written to a requirements file", r.name, what), ""};
}

}  // namespace

std::optional<std::string> unsafe_installer_value(std::string_view value) {
    for (size_t i = 0; i < value.size(); ++i)
        if (is_control(static_cast<unsigned char>(value[i])))
            return fmt::format("holds a control character (U+{:04X} at byte {})", static_cast<unsigned char>(value[i]),
                               i);
    if (!value.empty() && value.front() == '-')
        return std::string("starts with '-' (an installer reads it as an option)");
    return std::nullopt;
}

Result<std::string> hashed_requirement_line(const HashedRequirement& r) {
    if (!is_valid_name(r.name)) return tl::unexpected(unwritable(r, "the name is not a PEP 508 name"));
    if (auto bad = unsafe_installer_value(r.version))
        return tl::unexpected(unwritable(r, fmt::format("version '{}' {}", r.version, *bad)));
    if (r.version.find(' ') != std::string::npos || !Version::parse(r.version))
        return tl::unexpected(unwritable(r, fmt::format("version '{}' is not a PEP 440 version", r.version)));
    std::string line;
    if (r.wheel.empty()) {
        line = r.name + "==" + r.version;
    } else {
        if (auto bad = unsafe_installer_value(r.wheel))
            return tl::unexpected(unwritable(r, fmt::format("wheel path {}", *bad)));
        if (r.wheel.front() != '/')
            return tl::unexpected(unwritable(r, "wheel path '" + r.wheel + "' is not absolute"));
        line = is_plain_path(r.wheel) ? r.wheel : r.name + " @ " + file_url(r.wheel);
    }
    if (!r.marker.empty()) {
        auto marker = Marker::parse(r.marker);
        if (!marker) return tl::unexpected(unwritable(r, "marker: " + marker.error().message));
        // Written in its canonical form; a word of it that pip would read as an option or a
        // comment (inside a quoted string too: pip splits before it reads quotes) is refused.
        const std::string& text = marker->str();
        for (size_t i = 0; i < text.size(); ++i) {
            const bool word_start = i == 0 || text[i - 1] == ' ';
            if (is_control(static_cast<unsigned char>(text[i])) || text[i] == '\\' ||
                (word_start && (text[i] == '-' || text[i] == '#')))
                return tl::unexpected(unwritable(
                    r, fmt::format("marker '{}' has a word an installer reads as an option or a comment", text)));
        }
        line += " ; " + text;
    }
    if (r.sha256.empty()) return tl::unexpected(unwritable(r, "no sha256"));
    for (const auto& h : r.sha256) {
        if (!is_hex64(h)) return tl::unexpected(unwritable(r, fmt::format("sha256 '{}' is not 64 hex digits", h)));
        line += " --hash=sha256:" + h;
    }
    return line;
}

}  // namespace bootstrap::pyenv
