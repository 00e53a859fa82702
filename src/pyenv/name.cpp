#include "pyenv/name.hpp"

namespace bootstrap::pyenv {

namespace {

// PEP 508 names are ASCII; locale-dependent <cctype> would accept more than the spec allows.
bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool is_name_separator(char c) { return c == '-' || c == '_' || c == '.'; }

}  // namespace

std::string normalize_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    bool in_separator_run = false;
    for (char c : name) {
        if (is_name_separator(c)) {
            if (!in_separator_run) out += '-';
            in_separator_run = true;
            continue;
        }
        in_separator_run = false;
        out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out;
}

bool is_valid_name(std::string_view name) {
    if (name.empty() || !is_ascii_alnum(name.front()) || !is_ascii_alnum(name.back())) return false;
    for (char c : name)
        if (!is_ascii_alnum(c) && !is_name_separator(c)) return false;
    return true;
}

}  // namespace bootstrap::pyenv
