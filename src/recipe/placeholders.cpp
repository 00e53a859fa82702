#include "recipe/placeholders.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace bootstrap::recipe {

namespace {

bool is_ident(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

bool is_name(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

/// A piece of a text: literal characters (braces already unescaped) or one placeholder.
struct Segment {
    std::string literal;
    std::optional<Placeholder> placeholder;
};

/// `body` is what stands between '{' and '}': "ns.name" or "ns.name:-default".
Result<Placeholder> parse_body(std::string_view body, size_t offset) {
    Placeholder p;
    p.offset = offset;
    std::string_view ref = body;
    if (size_t colon = body.find(":-"); colon != std::string_view::npos) {
        ref = body.substr(0, colon);
        p.default_value = std::string(body.substr(colon + 2));
    }
    size_t dot = ref.find('.');
    if (dot == std::string_view::npos || !is_ident(ref.substr(0, dot)) || !is_name(ref.substr(dot + 1)))
        return fail(ErrorCode::invalid_recipe,
                    "'{" + std::string(body) +
                        "}' is not a valid placeholder (expected '{namespace.name}'; write '{{' "
                        "and '}}' for literal braces)");
    p.ns = std::string(ref.substr(0, dot));
    p.name = std::string(ref.substr(dot + 1));
    return p;
}

Result<std::vector<Segment>> scan(std::string_view text) {
    std::vector<Segment> out;
    std::string literal;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        bool doubled = i + 1 < text.size() && text[i + 1] == c;
        if (c == '}') {
            if (!doubled) return fail(ErrorCode::invalid_recipe, "unmatched '}' (write '}}' for a literal '}')");
            literal += '}';
            ++i;
            continue;
        }
        if (c != '{') {
            literal += c;
            continue;
        }
        if (doubled) {
            literal += '{';
            ++i;
            continue;
        }
        size_t end = text.find_first_of("{}", i + 1);
        if (end == std::string_view::npos || text[end] == '{') {
            std::string_view open = text.substr(i, end == std::string_view::npos ? end : end - i);
            return fail(ErrorCode::invalid_recipe,
                        "unterminated placeholder '" + std::string(open) + "' (write '{{' for a literal '{')");
        }
        BS_TRY(Placeholder p, parse_body(text.substr(i + 1, end - i - 1), i));
        if (!literal.empty()) out.push_back({std::exchange(literal, {}), std::nullopt});
        out.push_back({{}, std::move(p)});
        i = end;
    }
    if (!literal.empty()) out.push_back({std::move(literal), std::nullopt});
    return out;
}

}  // namespace

Result<std::vector<Placeholder>> find_placeholders(std::string_view text) {
    BS_TRY(auto segments, scan(text));
    std::vector<Placeholder> out;
    for (auto& s : segments)
        if (s.placeholder) out.push_back(std::move(*s.placeholder));
    return out;
}

const std::vector<std::string>& known_placeholders() {
    static const std::vector<std::string> k_known{
        "venv.path", "venv.python", "python.version",         "python.ext_suffix", "python.site_packages",
        "host.cpus", "device.arch", "device.torch_arch_list", "device.nvte_archs", "device.cmake_archs"};
    return k_known;
}

std::string to_string(const Placeholder& p) {
    std::string out = "{" + p.ns + "." + p.name;
    if (p.default_value) out += ":-" + *p.default_value;
    return out + "}";
}

Result<Expanded> expand(const Text& text, const PlaceholderResolver& resolve) {
    auto located = [&](Error e) {
        e.message = text.loc.str() + ": " + e.message;
        return tl::unexpected<Error>(std::move(e));
    };
    auto segments = scan(text.value);
    if (!segments) return located(std::move(segments.error()));
    Expanded out;
    // A literal is bounded by the recipe's size; only placeholders can multiply a value.
    const bool has_placeholders =
        std::any_of(segments->begin(), segments->end(), [](const auto& s) { return s.placeholder.has_value(); });
    // Checked as it grows: `a = "{vars.b}{vars.b}"` chains double a value per level, and a
    // value made of many placeholders must stop before it exhausts memory, not after.
    auto append = [&](std::string_view piece) -> Status {
        if (has_placeholders && out.value.size() + piece.size() > k_max_expanded_value)
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: the value expands to more than {} KiB (placeholders that repeat a "
                                    "value double it at every level); no recipe value needs that much",
                                    text.loc.str(), k_max_expanded_value / 1024));
        out.value += piece;
        return {};
    };
    for (const auto& s : *segments) {
        if (!s.placeholder) {
            BS_CHECK(append(s.literal));
            continue;
        }
        auto value = resolve(*s.placeholder);
        if (!value) return located(std::move(value.error()));
        if (*value) {
            BS_CHECK(append(**value));
        } else {
            out.complete = false;
            BS_CHECK(append("<" + s.placeholder->ns + "." + s.placeholder->name + ": known after the venv exists>"));
        }
    }
    return out;
}

}  // namespace bootstrap::recipe
