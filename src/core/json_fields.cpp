#include "core/json_fields.hpp"

#include <nlohmann/json.hpp>

namespace bootstrap::core {

using nlohmann::json;

JsonFields::JsonFields(const json& j, std::string path) : m_j(&j), m_path(std::move(path)) {
    if (!m_j->is_object())
        throw JsonInvalid(m_path.empty() ? "expected a JSON object" : m_path + ": expected an object");
}

const json* JsonFields::find(std::string_view key) const {
    auto it = m_j->find(key);
    return it == m_j->end() ? nullptr : &*it;
}

std::string JsonFields::child(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
}

void JsonFields::invalid(std::string_view key, std::string_view what) const {
    const std::string where = key.empty() ? m_path : child(key);
    throw JsonInvalid(where.empty() ? std::string(what) : where + ": " + std::string(what));
}

std::string JsonFields::str(std::string_view key, std::string fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) invalid(key, "expected a string");
    return v->get<std::string>();
}

bool JsonFields::boolean(std::string_view key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) invalid(key, "expected true or false");
    return v->get<bool>();
}

std::int64_t JsonFields::integer(std::string_view key, std::int64_t fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number_integer()) invalid(key, "expected an integer");
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        invalid(key, "integer out of range");
    return v->get<std::int64_t>();
}

std::uint64_t JsonFields::count(std::string_view key, std::uint64_t fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number_unsigned()) invalid(key, "expected a non-negative integer");
    return v->get<std::uint64_t>();
}

double JsonFields::number(std::string_view key, double fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number()) invalid(key, "expected a number");
    return v->get<double>();
}

std::vector<std::string> JsonFields::strings(std::string_view key) const {
    std::vector<std::string> out;
    const json* v = find(key);
    if (!v) return out;
    if (!v->is_array()) invalid(key, "expected a list of strings");
    for (const auto& item : *v) {
        if (!item.is_string()) invalid(key, "expected a list of strings");
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::map<std::string, std::string> JsonFields::string_map(std::string_view key) const {
    std::map<std::string, std::string> out;
    const json* v = find(key);
    if (!v || v->is_null()) return out;
    JsonFields inner(*v, child(key));
    for (const auto& [k, item] : v->items()) {
        if (!item.is_string()) inner.invalid(k, "expected a string");
        out[k] = item.get<std::string>();
    }
    return out;
}

std::optional<JsonFields> JsonFields::object(std::string_view key) const {
    const json* v = find(key);
    if (!v || v->is_null()) return std::nullopt;
    return JsonFields(*v, child(key));
}

std::vector<std::pair<std::string, JsonFields>> JsonFields::objects(std::string_view key) const {
    std::vector<std::pair<std::string, JsonFields>> out;
    auto outer = object(key);
    if (!outer) return out;
    for (const auto& [k, item] : outer->m_j->items()) out.emplace_back(k, JsonFields(item, outer->child(k)));
    return out;
}

namespace detail {

std::shared_ptr<const json> parse_json(std::string_view text) {
    return std::make_shared<const json>(json::parse(text));
}

}  // namespace detail

}  // namespace bootstrap::core
