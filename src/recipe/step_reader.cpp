#include "recipe/step_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace bootstrap::recipe {

const Value* StepReader::get(std::string_view key) {
    if (std::find(m_asked.begin(), m_asked.end(), key) == m_asked.end()) m_asked.emplace_back(key);
    return m_table.get(key);
}

std::optional<Text> StepReader::text(std::string_view key) {
    const Value* v = get(key);
    return v ? m_values.text(*v, key) : std::nullopt;
}

std::vector<Text> StepReader::texts(std::string_view key, bool single) {
    const Value* v = get(key);
    return v ? m_values.texts(*v, key, single) : std::vector<Text>{};
}

std::vector<Text> StepReader::nonempty_texts(std::string_view key) {
    const Value* v = get(key);
    return v ? m_values.nonempty_texts(*v, key) : std::vector<Text>{};
}

std::optional<std::vector<std::string>> StepReader::strings(std::string_view key) {
    const Value* v = get(key);
    if (!v) return std::nullopt;
    return m_values.strings(*v, key);
}

bool StepReader::flag(std::string_view key) {
    const Value* v = get(key);
    return v && m_values.boolean(*v, key).value_or(false);
}

std::optional<int> StepReader::integer(std::string_view key, int64_t min) {
    const Value* v = get(key);
    return v ? m_values.integer(*v, key, min) : std::nullopt;
}

std::optional<double> StepReader::positive_number(std::string_view key, double max, std::string_view max_shown) {
    const Value* v = get(key);
    return v ? m_values.positive_number(*v, key, max, max_shown) : std::nullopt;
}

const Value* StepReader::table(std::string_view key, const char* what) {
    const Value* v = get(key);
    if (!v || !m_values.expect(*v, ValueType::table, key, what)) return nullptr;
    return v;
}

void StepReader::require(std::string_view key) {
    need(get(key) != nullptr, key, fmt::format("{} (kind {}) is missing required key '{}'", m_label, m_step.kind, key));
}

void StepReader::need(bool ok, std::string_view key, std::string message) {
    if (!ok) m_needs.push_back({std::string(key), std::move(message)});
}

}  // namespace bootstrap::recipe
