#pragma once
// Internal to recipe/: typed access to toml++ nodes that collects every problem instead of
// stopping at the first one. Shared by parser.cpp and doctor_sections.cpp.

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/strings.hpp"
#include "recipe/recipe.hpp"
#include "recipe/validate.hpp"
#include "recipe/value.hpp"

namespace bootstrap::recipe::detail {

using NodeType = toml::node_type;

inline const char* type_name(NodeType type) {
    switch (type) {
    case NodeType::table: return "a table";
    case NodeType::array: return "an array";
    case NodeType::string: return "a string";
    case NodeType::integer: return "an integer";
    case NodeType::floating_point: return "a float";
    case NodeType::boolean: return "a boolean";
    case NodeType::date: return "a date";
    case NodeType::time: return "a time";
    case NodeType::date_time: return "a date-time";
    case NodeType::none: break;
    }
    return "nothing";
}

inline bool contains(const std::vector<std::string>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

/// Typed access to toml++ nodes. A mismatch becomes a Problem and the getter returns nothing,
/// so parsing goes on and every problem of the file is reported together.
class Reader {
public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}

    SourceLoc loc(const toml::source_region& region) const {
        return {m_file, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
    }
    SourceLoc loc(const toml::node& node) const { return loc(node.source()); }
    SourceLoc loc(const toml::key& key) const { return loc(key.source()); }
    SourceLoc file_start() const { return {m_file, 1, 1}; }

    /// The node as a toml-free value tree (what the step kinds read).
    Value value(const toml::node& n) const {
        Value v;
        v.loc = loc(n);
        switch (n.type()) {
        case NodeType::string: v.type = ValueType::string; v.string = n.as_string()->get(); break;
        case NodeType::integer: v.type = ValueType::integer; v.integer = n.as_integer()->get(); break;
        case NodeType::floating_point:
            v.type = ValueType::floating_point;
            v.floating_point = n.as_floating_point()->get();
            break;
        case NodeType::boolean: v.type = ValueType::boolean; v.boolean = n.as_boolean()->get(); break;
        case NodeType::date: v.type = ValueType::date; break;
        case NodeType::time: v.type = ValueType::time; break;
        case NodeType::date_time: v.type = ValueType::date_time; break;
        case NodeType::array:
            v.type = ValueType::array;
            for (const auto& item : *n.as_array()) v.array.push_back(value(item));
            break;
        case NodeType::table:
        case NodeType::none:
            v.type = ValueType::table;
            if (const auto* t = n.as_table())
                for (auto&& [key, item] : *t)
                    v.table.push_back({std::string(key.str()), loc(key), value(item)});
            break;
        }
        return v;
    }

    void report(SourceLoc where, std::string message) {
        m_problems.push_back({std::move(where), std::move(message)});
    }
    std::vector<Problem>& problems() { return m_problems; }

    bool expect(const toml::node& n, NodeType type, std::string_view name, const char* what) {
        if (n.type() == type) return true;
        report(loc(n), fmt::format("'{}' must be {}, not {}", name, what, type_name(n.type())));
        return false;
    }

    std::optional<std::string> string(const toml::node& n, std::string_view name) {
        if (!expect(n, NodeType::string, name, "a string")) return std::nullopt;
        return n.as_string()->get();
    }

    std::optional<Text> text(const toml::node& n, std::string_view name) {
        auto s = string(n, name);
        if (!s) return std::nullopt;
        return Text{std::move(*s), loc(n)};
    }

    std::optional<bool> boolean(const toml::node& n, std::string_view name) {
        if (!expect(n, NodeType::boolean, name, "a boolean")) return std::nullopt;
        return n.as_boolean()->get();
    }

    /// An integer >= `min` that fits an int.
    std::optional<int> integer(const toml::node& n, std::string_view name, int64_t min) {
        if (!expect(n, NodeType::integer, name, "an integer")) return std::nullopt;
        int64_t v = n.as_integer()->get();
        if (v < min) {
            report(loc(n), fmt::format("'{}' must be at least {}, not {}", name, min, v));
            return std::nullopt;
        }
        if (v > INT_MAX) {
            report(loc(n), fmt::format("'{}' is too large ({})", name, v));
            return std::nullopt;
        }
        return static_cast<int>(v);
    }

    /// A number (integer or float) greater than 0.
    std::optional<double> positive_number(const toml::node& n, std::string_view name) {
        if (!n.is_number()) {
            expect(n, NodeType::floating_point, name, "a number");
            return std::nullopt;
        }
        double v = n.is_integer() ? static_cast<double>(n.as_integer()->get())
                                  : n.as_floating_point()->get();
        if (!(v > 0)) {
            report(loc(n), fmt::format("'{}' must be greater than 0, not {}", name, v));
            return std::nullopt;
        }
        return v;
    }

    /// An array of strings; with `single`, one string also stands for a one-element array.
    std::vector<Text> texts(const toml::node& n, std::string_view name, bool single = false) {
        if (single && n.is_string()) return {*text(n, name)};
        std::vector<Text> out;
        const auto* arr = n.as_array();
        if (!arr) {
            expect(n, NodeType::array, name,
                   single ? "a string or an array of strings" : "an array of strings");
            return out;
        }
        for (size_t i = 0; i < arr->size(); ++i)
            if (auto t = text((*arr)[i], fmt::format("{}[{}]", name, i))) out.push_back(*t);
        return out;
    }

    std::vector<std::string> strings(const toml::node& n, std::string_view name) {
        std::vector<std::string> out;
        for (auto& t : texts(n, name)) out.push_back(std::move(t.value));
        return out;
    }

    /// An array of strings that must not be empty.
    std::vector<Text> nonempty_texts(const toml::node& n, std::string_view name) {
        if (const auto* arr = n.as_array(); arr && arr->empty())
            report(loc(n), fmt::format("'{}' must not be empty", name));
        return texts(n, name);
    }

    /// Environment variable names (env_unset, [env] unset).
    std::vector<std::string> env_names(const toml::node& n, std::string_view name) {
        std::vector<std::string> out;
        for (auto& t : texts(n, name)) {
            if (!detail::is_env_name(t.value))
                report(t.loc,
                       fmt::format("'{}' is not a valid environment variable name", t.value));
            out.push_back(std::move(t.value));
        }
        return out;
    }

    /// A table of environment variables to set: valid names, string values.
    std::map<std::string, Text> env_table(const toml::node& n, std::string_view name) {
        std::map<std::string, Text> out;
        if (!expect(n, NodeType::table, name, "a table of strings")) return out;
        for (auto&& [key, value] : *n.as_table()) {
            std::string var(key.str());
            if (!detail::is_env_name(var))
                report(loc(key), fmt::format("'{}' is not a valid environment variable name", var));
            if (auto t = text(value, fmt::format("{}.{}", name, var))) out.emplace(var, *t);
        }
        return out;
    }

    /// Report a key that is not in `known`, with the nearest known key as a suggestion;
    /// returns the suggestion ("" when none).
    std::string unknown_key(const toml::key& key, const std::vector<std::string>& known,
                            std::string_view where) {
        std::string near = core::closest_match(key.str(), known);
        report(loc(key),
               fmt::format("unknown key '{}'{}{}", key.str(), where,
                           near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
        return near;
    }

    /// Report every key of `table` not in `known`; returns the suggestions made.
    std::vector<std::string> unknown_keys(const toml::table& table,
                                          const std::vector<std::string>& known,
                                          std::string_view where) {
        std::vector<std::string> suggested;
        for (auto&& [key, value] : table)
            if (!contains(known, key.str())) suggested.push_back(unknown_key(key, known, where));
        return suggested;
    }

    /// The table under `name`, or null after reporting a value of another type.
    const toml::table* section(const toml::table& parent, std::string_view name) {
        const toml::node* n = parent.get(name);
        if (!n || !expect(*n, NodeType::table, name, "a table")) return nullptr;
        return n->as_table();
    }

private:
    std::string m_file;
    std::vector<Problem> m_problems;
};

// ---- doctor sections (doctor_sections.cpp) ---------------------------------------------------

/// [[lint]] rules: ids unique, flags well-formed, at least one check per rule.
void read_lint_rules(Reader& rd, const toml::node& n, Recipe& out);
/// [[fault]] entries: ids unique, `match` a valid ECMAScript regex.
void read_faults(Reader& rd, const toml::node& n, Recipe& out);
/// [flag_aliases]: "--canonical" = ["--alias", ...]; a flag belongs to one group only.
void read_flag_aliases(Reader& rd, const toml::node& n, Recipe& out);
/// [perf]: baseline = { tflops, tolerance, note }.
void read_perf(Reader& rd, const toml::table& t, Recipe& out);
/// After the steps are read: every [[fault]] `step` names a step of the recipe.
void check_fault_steps(Reader& rd, const Recipe& recipe);

}  // namespace bootstrap::recipe::detail
