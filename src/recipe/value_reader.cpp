#include "recipe/value_reader.hpp"

#include <cmath>
#include <limits>

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::recipe {

void ValueReader::report(SourceLoc where, std::string message) {
    m_problems.push_back({std::move(where), std::move(message)});
}

bool ValueReader::expect(const Value& v, ValueType type, std::string_view name, const char* what) {
    if (v.type == type) return true;
    report(v.loc, fmt::format("'{}' must be {}, not {}", name, what, type_name(v.type)));
    return false;
}

std::optional<std::string> ValueReader::string(const Value& v, std::string_view name) {
    if (!expect(v, ValueType::string, name, "a string")) return std::nullopt;
    return v.string;
}

std::optional<Text> ValueReader::text_value(const Value& v, std::string_view name) {
    auto s = string(v, name);
    if (!s) return std::nullopt;
    return Text{std::move(*s), v.loc};
}

std::optional<Text> ValueReader::text(const Value& v, std::string_view name) {
    auto t = text_value(v, name);
    if (t && m_collect) m_collect->push_back(*t);
    return t;
}

std::optional<bool> ValueReader::boolean(const Value& v, std::string_view name) {
    if (!expect(v, ValueType::boolean, name, "a boolean")) return std::nullopt;
    return v.boolean;
}

std::optional<int> ValueReader::integer(const Value& v, std::string_view name, int64_t min) {
    if (!expect(v, ValueType::integer, name, "an integer")) return std::nullopt;
    if (v.integer < min) {
        report(v.loc, fmt::format("'{}' must be at least {}, not {}", name, min, v.integer));
        return std::nullopt;
    }
    if (v.integer > INT_MAX) {
        report(v.loc, fmt::format("'{}' is too large ({})", name, v.integer));
        return std::nullopt;
    }
    return static_cast<int>(v.integer);
}

std::optional<double> ValueReader::positive_number(const Value& v, std::string_view name, double max,
                                                   std::string_view max_shown) {
    if (!v.is_number()) {
        expect(v, ValueType::floating_point, name, "a number");
        return std::nullopt;
    }
    double n = v.is(ValueType::integer) ? static_cast<double>(v.integer) : v.floating_point;
    if (!(n > 0) || !std::isfinite(n)) {
        report(v.loc, fmt::format("'{}' must be a number greater than 0, not {}", name, n));
        return std::nullopt;
    }
    if (n > max) {
        report(v.loc, fmt::format("'{}' must be at most {}{}, not {}", name, max,
                                  max_shown.empty() ? "" : fmt::format(" ({})", max_shown), n));
        return std::nullopt;
    }
    return n;
}

std::vector<Text> ValueReader::text_values(const Value& v, std::string_view name, bool single) {
    if (single && v.is(ValueType::string)) return {*text_value(v, name)};
    std::vector<Text> out;
    if (!v.is(ValueType::array)) {
        expect(v, ValueType::array, name, single ? "a string or an array of strings" : "an array of strings");
        return out;
    }
    for (size_t i = 0; i < v.array.size(); ++i)
        if (auto t = text_value(v.array[i], fmt::format("{}[{}]", name, i))) out.push_back(*t);
    return out;
}

std::vector<Text> ValueReader::texts(const Value& v, std::string_view name, bool single) {
    auto out = text_values(v, name, single);
    if (m_collect) m_collect->insert(m_collect->end(), out.begin(), out.end());
    return out;
}

std::vector<Text> ValueReader::nonempty_texts(const Value& v, std::string_view name) {
    if (v.is(ValueType::array) && v.array.empty()) report(v.loc, fmt::format("'{}' must not be empty", name));
    return texts(v, name);
}

std::vector<std::string> ValueReader::strings(const Value& v, std::string_view name) {
    std::vector<std::string> out;
    for (auto& t : text_values(v, name, false)) out.push_back(std::move(t.value));
    return out;
}

std::vector<std::string> ValueReader::env_names(const Value& v, std::string_view name) {
    std::vector<std::string> out;
    for (auto& t : text_values(v, name, false)) {
        if (!detail::is_env_name(t.value))
            report(t.loc, fmt::format("'{}' is not a valid environment variable name", t.value));
        out.push_back(std::move(t.value));
    }
    return out;
}

std::map<std::string, Text> ValueReader::env_table(const Value& v, std::string_view name) {
    std::map<std::string, Text> out;
    if (!expect(v, ValueType::table, name, "a table of strings")) return out;
    for (const auto& entry : v.table) {
        if (!detail::is_env_name(entry.key))
            report(entry.key_loc, fmt::format("'{}' is not a valid environment variable name", entry.key));
        if (auto t = text(entry.value, fmt::format("{}.{}", name, entry.key))) out.emplace(entry.key, *t);
    }
    return out;
}

std::string ValueReader::unknown_key(const TableEntry& entry, const std::vector<std::string>& known,
                                     std::string_view where) {
    std::string near = core::closest_match(entry.key, known);
    report(entry.key_loc, fmt::format("unknown key '{}'{}{}", entry.key, where,
                                      near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    return near;
}

std::vector<std::string> ValueReader::unknown_keys(const Value& v, const std::vector<std::string>& known,
                                                   std::string_view where) {
    std::vector<std::string> suggested;
    for (const auto& entry : v.table)
        if (std::find(known.begin(), known.end(), entry.key) == known.end())
            suggested.push_back(unknown_key(entry, known, where));
    return suggested;
}

}  // namespace bootstrap::recipe
