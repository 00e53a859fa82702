#include "recipe/value.hpp"

namespace bootstrap::recipe {

const char* type_name(ValueType type) {
    switch (type) {
        case ValueType::table: return "a table";
        case ValueType::array: return "an array";
        case ValueType::string: return "a string";
        case ValueType::integer: return "an integer";
        case ValueType::floating_point: return "a float";
        case ValueType::boolean: return "a boolean";
        case ValueType::date: return "a date";
        case ValueType::time: return "a time";
        case ValueType::date_time: return "a date-time";
    }
    return "nothing";
}

const Value* Value::get(std::string_view key) const {
    for (const auto& entry : table)
        if (entry.key == key) return &entry.value;
    return nullptr;
}

}  // namespace bootstrap::recipe
