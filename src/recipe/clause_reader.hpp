#pragma once
// What a verify clause's parse function gets (recipe::ClauseSyntax::parse): the clause's table,
// its name as messages show it ("verify[0]"), and the recipe's problem list. Problems read
// "file:line:col: message", as every recipe problem does.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.hpp"
#include "recipe/value.hpp"
#include "recipe/value_reader.hpp"

namespace bootstrap::recipe {

class ClauseReader {
public:
    ClauseReader(const Value& table, std::string name, ValueReader& values, const ClauseTable& clauses)
        : m_table(table), m_name(std::move(name)), m_values(values), m_clauses(clauses) {}

    /// The value under `key`, or null when the clause does not have it.
    [[nodiscard]] const Value* get(std::string_view key) const { return m_table.get(key); }
    /// The string under `key` (it must be there), named "verify[N].KEY" in messages.
    [[nodiscard]] std::optional<Text> text(std::string_view key);
    /// Where the clause's table was written.
    [[nodiscard]] const SourceLoc& loc() const { return m_table.loc; }
    /// "verify[N]", the clause as messages name it.
    [[nodiscard]] const std::string& name() const { return m_name; }
    /// For nested values: the same problem list and placeholder collection.
    [[nodiscard]] ValueReader& values() { return m_values; }
    void report(SourceLoc where, std::string message) { m_values.report(std::move(where), std::move(message)); }
    /// Report every key not in `known` ("unknown key 'x' in verify clause (did you mean ...)");
    /// returns the suggestions made.
    std::vector<std::string> unknown_keys(const std::vector<std::string>& known);
    /// The table names no clause: "a verify clause needs 'import', 'file', ..." (the registered
    /// clauses), unless one of `suggested` (a typo's suggestion) is a clause's name.
    void need_clause(const std::vector<std::string>& suggested);

private:
    const Value& m_table;
    std::string m_name;
    ValueReader& m_values;
    const ClauseTable& m_clauses;
};

}  // namespace bootstrap::recipe
