#pragma once
// Typed access to a recipe::Value tree that collects every problem instead of stopping at the
// first one: a mismatch becomes a "file:line:col: message" problem and the getter returns
// nothing, so parsing goes on. `name` is the key's dotted path as messages show it
// ("source.rev", "verify[0].import").

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/validate.hpp"
#include "recipe/value.hpp"

namespace bootstrap::recipe {

class ValueReader {
public:
    explicit ValueReader(std::vector<detail::Problem>& problems) : m_problems(problems) {}

    void report(SourceLoc where, std::string message);

    /// `v` is of `type`, or a problem "'NAME' must be WHAT, not TYPE" is reported.
    bool expect(const Value& v, ValueType type, std::string_view name, const char* what);

    [[nodiscard]] std::optional<std::string> string(const Value& v, std::string_view name);
    /// A string that may hold placeholders: also kept for the placeholder check (collect()).
    [[nodiscard]] std::optional<Text> text(const Value& v, std::string_view name);
    [[nodiscard]] std::optional<bool> boolean(const Value& v, std::string_view name);
    /// An integer >= `min` that fits an int.
    [[nodiscard]] std::optional<int> integer(const Value& v, std::string_view name, int64_t min);
    /// A number (integer or float) greater than 0.
    /// A finite number > 0 and <= `max` (`max_shown` says it in words: "30 days").
    [[nodiscard]] std::optional<double> positive_number(const Value& v, std::string_view name,
                                                        double max = std::numeric_limits<double>::max(),
                                                        std::string_view max_shown = {});
    /// An array of strings; with `single`, one string also stands for a one-element array.
    [[nodiscard]] std::vector<Text> texts(const Value& v, std::string_view name, bool single = false);
    /// An array of strings that must not be empty.
    [[nodiscard]] std::vector<Text> nonempty_texts(const Value& v, std::string_view name);
    /// An array of plain strings (names: no placeholders).
    [[nodiscard]] std::vector<std::string> strings(const Value& v, std::string_view name);
    /// Environment variable names (env_unset).
    [[nodiscard]] std::vector<std::string> env_names(const Value& v, std::string_view name);
    /// A table of environment variables to set: valid names, string values.
    [[nodiscard]] std::map<std::string, Text> env_table(const Value& v, std::string_view name);

    /// Report `entry`'s key, which is not in `known`, with the nearest known key as a
    /// suggestion; returns the suggestion ("" when none).
    std::string unknown_key(const TableEntry& entry, const std::vector<std::string>& known, std::string_view where);
    /// Report every key of table `v` not in `known`; returns the suggestions made.
    std::vector<std::string> unknown_keys(const Value& v, const std::vector<std::string>& known,
                                          std::string_view where);

    /// Keep every Text read from now on in `sink` (null: stop); the step parser checks their
    /// placeholders once the whole recipe is read.
    void collect(std::vector<Text>* sink) { m_collect = sink; }

private:
    std::optional<Text> text_value(const Value& v, std::string_view name);
    std::vector<Text> text_values(const Value& v, std::string_view name, bool single);

    std::vector<detail::Problem>& m_problems;
    std::vector<Text>* m_collect = nullptr;
};

}  // namespace bootstrap::recipe
