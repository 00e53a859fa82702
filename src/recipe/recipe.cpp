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

const char* to_string(StepKind kind) {
    switch (kind) {
    case StepKind::venv: return "venv";
    case StepKind::install: return "install";
    case StepKind::sync: return "sync";
    case StepKind::run: return "run";
    case StepKind::check: return "check";
    case StepKind::pybind11: return "pybind11";
    case StepKind::build: return "build";
    }
    return "?";
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
    return (parts.size() == 2 || parts.size() == 3) &&
           std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
               return !p.empty() && std::all_of(p.begin(), p.end(), [](char c) {
                   return std::isdigit(static_cast<unsigned char>(c));
               });
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

bool is_sha256_hex(std::string_view s) { return s.size() == 64 && all_hex(s); }

}  // namespace bootstrap::recipe
