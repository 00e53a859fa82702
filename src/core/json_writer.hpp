#pragma once
// Writing JSON text without building a document: for what is written on every run and every
// snapshot (manifests, history entries), where nlohmann's DOM cost more than the work. The text
// is byte for byte what nlohmann's `dump(indent, ' ', false, error_handler_t::replace)` writes
// for the same document (tests/unit/core/test_json_writer.cpp holds them side by side), so files
// written either way compare equal. Keys come out in the order given: a caller writing what
// nlohmann would write gives them sorted (byte order), as nlohmann's std::map-backed objects are.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::core {

/// `value` as a JSON string literal (quotes included) appended to `out`: `"` `\` and control
/// characters escaped as nlohmann does (`\n`, `\u001f`), other bytes of valid UTF-8 as they
/// are; a string that is not valid UTF-8 has each bad sequence replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view value);

class JsonWriter {
public:
    /// Appends to `out`; `indent` spaces per level (nlohmann's dump(indent)).
    JsonWriter(std::string& out, int indent) : m_out(out), m_indent(indent) {}

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    /// The next member's key; its value follows.
    JsonWriter& key(std::string_view name);

    JsonWriter& string(std::string_view value);
    JsonWriter& boolean(bool value);
    JsonWriter& integer(std::int64_t value);
    JsonWriter& null();

    /// key + string, the common case.
    JsonWriter& field(std::string_view name, std::string_view value) { return key(name).string(value); }

private:
    JsonWriter& open(char bracket);
    JsonWriter& close(char bracket);
    /// Before a value: the separator and indentation an array element needs (a member's
    /// were written by key()).
    void element();
    void newline(size_t depth);

    std::string& m_out;
    int m_indent;
    std::vector<size_t> m_counts;  // members/elements written so far, per open container
    bool m_after_key = false;
};

}  // namespace bootstrap::core
