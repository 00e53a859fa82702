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
#include "recipe/value_reader.hpp"

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
    Reader(const Reader&) = delete;  // m_values refers to m_problems
    Reader& operator=(const Reader&) = delete;

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
            case NodeType::string:
                v.type = ValueType::string;
                v.string = n.as_string()->get();
                break;
            case NodeType::integer:
                v.type = ValueType::integer;
                v.integer = n.as_integer()->get();
                break;
            case NodeType::floating_point:
                v.type = ValueType::floating_point;
                v.floating_point = n.as_floating_point()->get();
                break;
            case NodeType::boolean:
                v.type = ValueType::boolean;
                v.boolean = n.as_boolean()->get();
                break;
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
                    for (auto&& [key, item] : *t) v.table.push_back({std::string(key.str()), loc(key), value(item)});
                break;
        }
        return v;
    }

    void report(SourceLoc where, std::string message) { m_problems.push_back({std::move(where), std::move(message)}); }
    std::vector<Problem>& problems() { return m_problems; }
    /// Typed reads of value trees, reporting into the same problem list.
    ValueReader& values() { return m_values; }

    bool expect(const toml::node& n, NodeType type, std::string_view name, const char* what) {
        if (n.type() == type) return true;
        report(loc(n), fmt::format("'{}' must be {}, not {}", name, what, type_name(n.type())));
        return false;
    }

    // The typed getters are ValueReader's (value_reader.hpp), on the node's value tree: one
    // wording for every type error, whether a section or a step kind reads the value.
    std::optional<std::string> string(const toml::node& n, std::string_view name) {
        return values().string(value(n), name);
    }
    std::optional<Text> text(const toml::node& n, std::string_view name) { return values().text(value(n), name); }
    std::optional<bool> boolean(const toml::node& n, std::string_view name) { return values().boolean(value(n), name); }
    /// An integer >= `min` that fits an int.
    std::optional<int> integer(const toml::node& n, std::string_view name, int64_t min) {
        return values().integer(value(n), name, min);
    }
    /// A number (integer or float) greater than 0.
    std::optional<double> positive_number(const toml::node& n, std::string_view name) {
        return values().positive_number(value(n), name);
    }
    /// An array of strings; with `single`, one string also stands for a one-element array.
    std::vector<Text> texts(const toml::node& n, std::string_view name, bool single = false) {
        return values().texts(value(n), name, single);
    }
    std::vector<std::string> strings(const toml::node& n, std::string_view name) {
        return values().strings(value(n), name);
    }
    /// An array of strings that must not be empty.
    std::vector<Text> nonempty_texts(const toml::node& n, std::string_view name) {
        return values().nonempty_texts(value(n), name);
    }
    /// Environment variable names ([env] unset, secret).
    std::vector<std::string> env_names(const toml::node& n, std::string_view name) {
        return values().env_names(value(n), name);
    }
    /// A table of environment variables to set: valid names, string values.
    std::map<std::string, Text> env_table(const toml::node& n, std::string_view name) {
        return values().env_table(value(n), name);
    }

    /// Report a key that is not in `known`, with the nearest known key as a suggestion;
    /// returns the suggestion ("" when none).
    std::string unknown_key(const toml::key& key, const std::vector<std::string>& known, std::string_view where) {
        std::string near = core::closest_match(key.str(), known);
        report(loc(key), fmt::format("unknown key '{}'{}{}", key.str(), where,
                                     near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
        return near;
    }

    /// Report every key of `table` not in `known`; returns the suggestions made.
    std::vector<std::string> unknown_keys(const toml::table& table, const std::vector<std::string>& known,
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
    ValueReader m_values{m_problems};
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
