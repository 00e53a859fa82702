#pragma once
// A TOML value as recipe/ hands it to the step kinds: a toml-free tree (toml++ stays inside
// recipe/) where every value and every table key carries where it was written.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.hpp"

namespace bootstrap::recipe {

enum class ValueType { string, integer, floating_point, boolean, array, table, date, time, date_time };

/// "a string", "an integer", ...: how error messages name a value's type.
[[nodiscard]] const char* type_name(ValueType type);

struct TableEntry;

/// One value. Only the member its type names is set; a date or time keeps no value (no recipe
/// key takes one: it is only named in the type error).
struct Value {
    ValueType type = ValueType::table;
    SourceLoc loc;
    std::string string;
    int64_t integer = 0;
    double floating_point = 0;
    bool boolean = false;
    std::vector<Value> array;
    std::vector<TableEntry> table;  // in the order toml++ iterates a table (sorted by key)

    [[nodiscard]] bool is(ValueType t) const { return type == t; }
    [[nodiscard]] bool is_number() const { return type == ValueType::integer || type == ValueType::floating_point; }
    /// The value under `key` of a table (null when absent or when this is not a table).
    [[nodiscard]] const Value* get(std::string_view key) const;
};

/// One key of a table and its value.
struct TableEntry {
    std::string key;
    SourceLoc key_loc;
    Value value;
};

}  // namespace bootstrap::recipe
