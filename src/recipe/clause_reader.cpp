#include "recipe/clause_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace bootstrap::recipe {

std::optional<Text> ClauseReader::text(std::string_view key) {
    const Value* v = get(key);
    if (!v) return std::nullopt;
    return m_values.text(*v, m_name + "." + std::string(key));
}

std::vector<std::string> ClauseReader::unknown_keys(const std::vector<std::string>& known) {
    return m_values.unknown_keys(m_table, known, " in verify clause");
}

void ClauseReader::need_clause(const std::vector<std::string>& suggested) {
    std::string names;
    for (size_t i = 0; i < m_clauses.size(); ++i) {
        const std::string_view name = m_clauses[i].name;
        if (std::find(suggested.begin(), suggested.end(), name) != suggested.end()) return;
        names += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == m_clauses.size() ? " or " : ", ", name);
    }
    report(m_table.loc, "a verify clause needs " + names);
}

}  // namespace bootstrap::recipe
