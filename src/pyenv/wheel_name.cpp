#include "pyenv/wheel_name.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::pyenv {

namespace {

bool is_tag_char(char c) {
    // PEP 425: '-' and '.' in a tag are replaced by '_'; what remains is ASCII alphanumeric.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// One compressed tag part ("manylinux_2_17_x86_64.manylinux2014_x86_64") split at '.'; ""
/// when well formed, else what is wrong with it.
std::string split_tag_part(std::string_view part, std::string_view what, std::vector<std::string>& out) {
    out = core::split(part, '.');
    for (const auto& tag : out) {
        if (tag.empty()) return fmt::format("its {} tag '{}' has an empty element", what, part);
        for (char c : tag)
            if (!is_tag_char(c)) return fmt::format("its {} tag '{}' has the character '{}'", what, part, c);
    }
    return {};
}

void add_product(const std::vector<std::string>& python, const std::vector<std::string>& abi,
                 const std::vector<std::string>& platform, std::set<std::string>& out) {
    for (const auto& p : python)
        for (const auto& a : abi)
            for (const auto& pl : platform) out.insert(core::to_lower(fmt::format("{}-{}-{}", p, a, pl)));
}

}  // namespace

Result<WheelName> parse_wheel_name(std::string_view file_name) {
    auto bad = [&](const std::string& why) {
        return fail(ErrorCode::usage, fmt::format("'{}' is not a wheel file name: {}", file_name, why));
    };
    if (!file_name.ends_with(".whl")) return bad("it does not end with .whl");
    auto parts = core::split(file_name.substr(0, file_name.size() - 4), '-');
    if (parts.size() != 5 && parts.size() != 6)
        return bad(
            fmt::format("it has {} '-'-separated parts, not 5 or 6 "
                        "(name-version[-build]-python-abi-platform)",
                        parts.size()));
    WheelName w;
    w.file_name = file_name;
    w.name = parts[0];
    if (!is_valid_name(w.name)) return bad(fmt::format("'{}' is not a distribution name", w.name));
    w.normalized_name = normalize_name(w.name);
    w.version = parts[1];
    auto version = Version::parse(w.version);
    if (!version) return bad(fmt::format("'{}' is not a PEP 440 version", w.version));
    w.parsed_version = *version;
    size_t tags_at = 2;
    if (parts.size() == 6) {
        w.build_tag = parts[2];
        if (w.build_tag.empty() || w.build_tag[0] < '0' || w.build_tag[0] > '9')
            return bad(fmt::format("its build tag '{}' does not start with a digit", w.build_tag));
        tags_at = 3;
    }
    if (auto why = split_tag_part(parts[tags_at], "python", w.python_tags); !why.empty()) return bad(why);
    if (auto why = split_tag_part(parts[tags_at + 1], "abi", w.abi_tags); !why.empty()) return bad(why);
    if (auto why = split_tag_part(parts[tags_at + 2], "platform", w.platform_tags); !why.empty()) return bad(why);
    add_product(w.python_tags, w.abi_tags, w.platform_tags, w.tags);
    return w;
}

Result<std::set<std::string>> expand_tags(const std::vector<std::string>& tags) {
    std::set<std::string> out;
    for (const auto& tag : tags) {
        auto parts = core::split(tag, '-');
        if (parts.size() != 3)
            return fail(ErrorCode::usage, fmt::format("'{}' is not a wheel tag (python-abi-platform)", tag));
        std::vector<std::string> python, abi, platform;
        std::string why = split_tag_part(parts[0], "python", python);
        if (why.empty()) why = split_tag_part(parts[1], "abi", abi);
        if (why.empty()) why = split_tag_part(parts[2], "platform", platform);
        if (!why.empty()) return fail(ErrorCode::usage, fmt::format("'{}' is not a wheel tag: {}", tag, why));
        add_product(python, abi, platform, out);
    }
    return out;
}

bool is_release_of(const WheelName& wheel, std::string_view name, std::string_view version) {
    if (wheel.normalized_name != normalize_name(name)) return false;
    auto v = Version::parse(version);
    return v ? *v == wheel.parsed_version : version == wheel.version;
}

}  // namespace bootstrap::pyenv
