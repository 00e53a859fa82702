#include "core/json_writer.hpp"

#include <nlohmann/json.hpp>

namespace bootstrap::core {

namespace {

/// Length of the well-formed UTF-8 sequence at `s[i]` (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF), 0 when it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = byte(i);
    if (c < 0x80) return 1;
    auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return k < s.size() && byte(k) >= lo && byte(k) <= hi;
    };
    if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
    if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
    if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
    if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
    if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view value) {
    static constexpr char k_hex[] = "0123456789abcdef";
    const size_t mark = out.size();
    out += '"';
    for (size_t i = 0; i < value.size();) {
        // A run of printable ASCII other than `"` and `\` goes out as it is, in one append.
        size_t run = i;
        while (run < value.size()) {
            const auto b = static_cast<unsigned char>(value[run]);
            if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') break;
            ++run;
        }
        if (run > i) {
            out.append(value.data() + i, run - i);
            i = run;
            if (i == value.size()) break;
        }
        const auto c = static_cast<unsigned char>(value[i]);
        if (c >= 0x80) {
            size_t n = utf8_sequence(value, i);
            if (n == 0) {
                // Not UTF-8 (METADATA is not guaranteed to be): nlohmann's own replacement rule.
                out.resize(mark);
                out +=
                    nlohmann::json(std::string(value)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                return;
            }
            out.append(value.data() + i, n);
            i += n;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += k_hex[c >> 4];
                    out += k_hex[c & 0xF];
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    out += '"';
}

void JsonWriter::newline(size_t depth) {
    m_out += '\n';
    m_out.append(depth * static_cast<size_t>(m_indent), ' ');
}

void JsonWriter::element() {
    if (m_after_key || m_counts.empty()) {
        m_after_key = false;
        return;
    }
    if (m_counts.back()++ > 0) m_out += ',';
    newline(m_counts.size());
}

JsonWriter& JsonWriter::key(std::string_view name) {
    element();
    append_json_string(m_out, name);
    m_out += ": ";
    m_after_key = true;
    return *this;
}

JsonWriter& JsonWriter::open(char bracket) {
    element();
    m_out += bracket;
    m_counts.push_back(0);
    return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
    const size_t count = m_counts.back();
    m_counts.pop_back();
    if (count > 0) newline(m_counts.size());
    m_out += bracket;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view value) {
    element();
    append_json_string(m_out, value);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
    element();
    m_out += value ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t value) {
    element();
    m_out += std::to_string(value);
    return *this;
}

JsonWriter& JsonWriter::null() {
    element();
    m_out += "null";
    return *this;
}

}  // namespace bootstrap::core
