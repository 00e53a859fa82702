#include "recipe/recipe.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "recipe/validate.hpp"

namespace bootstrap::recipe {

std::string SourceLoc::str() const {
    if (line <= 0) return file;
    return fmt::format("{}:{}:{}", file, line, column);
}

const char* to_string(InstallerKind kind) {
    switch (kind) {
        case InstallerKind::uv: return "uv";
        case InstallerKind::pip: return "pip";
    }
    return "?";
}

namespace detail {

bool is_python_version(std::string_view v) {
    auto parts = core::split(v, '.');
    return (parts.size() == 2 || parts.size() == 3) && std::all_of(parts.begin(), parts.end(),
                                                                   [](const std::string& p) {
        return !p.empty() &&
               std::all_of(p.begin(), p.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
           });
}

bool is_arch(std::string_view v) {
    if (!v.empty() && std::isalpha(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
    return is_python_version(v) && core::split(v, '.').size() == 2;
}

bool is_step_id(std::string_view id) {
    return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
}

bool is_var_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
}

}  // namespace detail

namespace {
bool all_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}
}  // namespace

bool is_commit_id(std::string_view s) { return (s.size() == 40 || s.size() == 64) && all_hex(s); }

std::string git_url_problem(std::string_view url) {
    if (url.empty()) return "it is empty";
    if (url.front() == '-') return "it starts with '-', which git would read as an option";
    for (unsigned char c : url)
        if (c < 0x20 || c == 0x7f || c == ' ') return "it contains a blank or a control character";
    auto scheme_end = url.find("://");
    if (scheme_end != std::string_view::npos) {
        std::string scheme(url.substr(0, scheme_end));
        for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const char* ok : {"https", "http", "ssh", "git", "file", "git+ssh", "ssh+git"})
            if (scheme == ok) return {};
        return fmt::format("scheme '{}' is not one of https, http, ssh, git, file", scheme);
    }
    if (url.find("::") != std::string_view::npos)
        return "git's '<transport>::<address>' form (ext::, fd::) runs commands; use a URL";
    if (url.front() == '/' || url.starts_with("./") || url.starts_with("../") || url.starts_with("~"))
        return {};  // a local path
    // scp-like: [user@]host:path, the host before the first ':' and no '/' before it.
    auto colon = url.find(':');
    auto slash = url.find('/');
    if (colon != std::string_view::npos && colon > 0 && (slash == std::string_view::npos || colon < slash)) return {};
    return {};  // a relative local path (taken from the recipe's directory)
}

}  // namespace bootstrap::recipe
