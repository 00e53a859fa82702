#pragma once
// What a step kind's parse function gets (recipe::KindSyntax::parse): typed getters over the
// step's table that report problems in the recipe's "file:line:col: message" style and remember
// which keys the kind asked for. A key no kind asks for is reported by the step parser, with a
// "did you mean" from the kind's keys; a key only another kind asks for is "not valid for a
// step of kind X". A kind must therefore ask for every key it knows, whether or not the step
// has it (its parse runs on an empty table to list them).

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.hpp"
#include "recipe/value.hpp"
#include "recipe/value_reader.hpp"

namespace bootstrap::recipe {

class StepReader {
public:
    /// `table` is the step's table, `step` its common fields (id and kind already read),
    /// `label` "step 'ID'" (or "step #N" when the id is missing).
    StepReader(const Value& table, Step& step, std::string label, ValueReader& values)
        : m_table(table), m_step(step), m_label(std::move(label)), m_values(values) {}

    /// The value under `key`, or null when the step does not have it.
    [[nodiscard]] const Value* get(std::string_view key);
    [[nodiscard]] std::optional<Text> text(std::string_view key);
    /// With `single`, one string also stands for a one-element array.
    [[nodiscard]] std::vector<Text> texts(std::string_view key, bool single = false);
    [[nodiscard]] std::vector<Text> nonempty_texts(std::string_view key);
    /// Plain strings (names, no placeholders); nullopt when the step does not have the key.
    [[nodiscard]] std::optional<std::vector<std::string>> strings(std::string_view key);
    /// A boolean; false when absent (or not a boolean, which is reported).
    [[nodiscard]] bool flag(std::string_view key);
    [[nodiscard]] std::optional<int> integer(std::string_view key, int64_t min);
    [[nodiscard]] std::optional<double> positive_number(std::string_view key,
                                                        double max = std::numeric_limits<double>::max(),
                                                        std::string_view max_shown = {});
    /// The table under `key`; null when absent, or after reporting a value of another type
    /// ("'KEY' must be WHAT, not ...").
    [[nodiscard]] const Value* table(std::string_view key, const char* what);

    /// The step cannot do without `key`: "step 'x' (kind K) is missing required key 'KEY'"
    /// unless the step has it (or has a key that was reported as a typo of it).
    void require(std::string_view key);
    /// Unless `ok`: report `message` at the step, unless a typo of `key` was already reported.
    void need(bool ok, std::string_view key, std::string message);
    /// A problem at `where`.
    void report(SourceLoc where, std::string message) { m_values.report(std::move(where), std::move(message)); }

    /// For nested values (a table's keys): the same problem list and placeholder collection.
    [[nodiscard]] ValueReader& values() { return m_values; }
    /// The step's common fields (a kind may fill the cross-kind ones, e.g. `packages`).
    [[nodiscard]] Step& step() { return m_step; }
    [[nodiscard]] const std::string& label() const { return m_label; }

    struct Need {
        std::string key;
        std::string message;
    };
    /// Every key asked for, in order (for the step parser).
    [[nodiscard]] const std::vector<std::string>& asked() const { return m_asked; }
    /// The deferred problems of require() and need().
    [[nodiscard]] const std::vector<Need>& needs() const { return m_needs; }

private:
    const Value& m_table;
    Step& m_step;
    std::string m_label;
    ValueReader& m_values;
    std::vector<std::string> m_asked;
    std::vector<Need> m_needs;
};

}  // namespace bootstrap::recipe
