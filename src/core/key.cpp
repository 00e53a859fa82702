#include "core/key.hpp"

#include <fmt/format.h>

#include "core/sha256.hpp"

namespace bootstrap::core {

// Each field is length-prefixed so that no choice of values can make two different inputs
// hash the same ("a","bc" vs "ab","c").
KeyBuilder::KeyBuilder(std::string_view scheme) { add("scheme", scheme); }

void KeyBuilder::add(std::string_view field, std::string_view value) {
    m_material += fmt::format("{}:{}={}:{}\n", field.size(), field, value.size(), value);
    m_explain += fmt::format("{}: {}\n", field, value);
}

void KeyBuilder::add(std::string_view field, const std::vector<std::string>& values) {
    m_material += fmt::format("{}:{}[{}]\n", field.size(), field, values.size());
    for (const auto& v : values) m_material += fmt::format("{}:{}\n", v.size(), v);
    m_explain += fmt::format("{}: [", field);
    for (size_t i = 0; i < values.size(); ++i)
        m_explain += fmt::format("{}{}", i ? ", " : "", values[i]);
    m_explain += "]\n";
}

std::string KeyBuilder::digest() const { return sha256_hex(m_material); }

}  // namespace bootstrap::core
