#include "recipe/prescan.hpp"

#include <vector>

#include <fmt/format.h>

namespace bootstrap::recipe::detail {

namespace {

bool is_bare_key_char(char c) {
    // TOML 1.0's A-Za-z0-9_-, plus any non-ASCII byte: being lenient here only means counting
    // a key toml++ will reject anyway.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           static_cast<unsigned char>(c) >= 0x80;
}

/// A single pass over the text. Every member function returns false to stop the scan: either a
/// bound was broken (m_found is set) or the text is not TOML at that place (m_found is not).
///
/// Values are read by a loop over three states with an explicit stack of open arrays and
/// inline tables, so that nesting costs heap, not stack:
///   value       a value starts here (or an array closes: `[]`, `[1,]`)
///   after_value `,` or the closing bracket of the innermost open array / inline table
///   table_key   a key of an inline table, or its closing `}`
class Scanner {
public:
    explicit Scanner(std::string_view s) : m_s(s) {}

    std::optional<std::pair<size_t, std::string>> run() {
        if (m_s.substr(0, 3) == "\xEF\xBB\xBF") m_i = 3;  // a UTF-8 byte order mark
        while (m_i < m_s.size()) {
            skip_blank(false);
            if (m_i >= m_s.size()) break;
            char c = m_s[m_i];
            if (c == '\n' || c == '\r') {
                ++m_i;
                continue;
            }
            if (c == '#') {
                skip_comment();
                continue;
            }
            if (!(c == '[' ? header() : key_value()) || !end_of_line()) break;
        }
        return m_found;
    }

private:
    bool eof() const { return m_i >= m_s.size(); }
    char peek() const { return eof() ? '\0' : m_s[m_i]; }

    bool found(size_t at, std::string message) {
        m_found = {at, std::move(message)};
        return false;
    }

    void skip_comment() {
        while (!eof() && m_s[m_i] != '\n') ++m_i;
    }

    /// Spaces and tabs; with `lines`, also line breaks and comments (inside an array).
    void skip_blank(bool lines) {
        while (!eof()) {
            char c = m_s[m_i];
            if (c == ' ' || c == '\t' || (lines && (c == '\n' || c == '\r'))) ++m_i;
            else if (lines && c == '#') skip_comment();
            else break;
        }
    }

    /// After a header or a key/value pair: blanks, an optional comment, then a line break.
    bool end_of_line() {
        skip_blank(false);
        if (peek() == '#') skip_comment();
        return eof() || peek() == '\n' || peek() == '\r';
    }

    /// A string of any of the four kinds, from its opening quote; a quoted key takes only the
    /// single-line kinds. False when it does not end (toml++ reports that).
    bool skip_string(bool multiline) {
        const char q = m_s[m_i];
        const bool basic = q == '"';
        const std::string_view triple = basic ? "\"\"\"" : "'''";
        if (multiline && m_s.substr(m_i, 3) == triple) {
            m_i += 3;
            while (!eof()) {
                if (basic && m_s[m_i] == '\\') {
                    m_i += 2;  // an escape, or a line-ending backslash
                } else if (m_s.substr(m_i, 3) == triple) {
                    m_i += 3;
                    // Up to two more quotes belong to the content: `"""a"""""` is `a""`.
                    for (int extra = 0; extra < 2 && peek() == q; ++extra) ++m_i;
                    return true;
                } else {
                    ++m_i;
                }
            }
            return false;
        }
        ++m_i;
        while (!eof() && m_s[m_i] != '\n') {
            char c = m_s[m_i];
            if (basic && c == '\\') {
                m_i += 2;
            } else {
                ++m_i;
                if (c == q) return true;
            }
        }
        return false;
    }

    /// A possibly dotted key whose first part sits at depth `base` + 1; `parts` gets its length.
    /// A problem is reported at `at`.
    bool key(int base, const char* what, size_t at, int& parts) {
        parts = 0;
        for (;;) {
            skip_blank(false);
            char c = peek();
            if (c == '"' || c == '\'') {
                if (!skip_string(false)) return false;
            } else if (is_bare_key_char(c)) {
                while (!eof() && is_bare_key_char(m_s[m_i])) ++m_i;
            } else {
                return false;  // no key here
            }
            ++parts;
            if (parts > k_max_nesting)
                return found(
                    at, fmt::format("{} of more than {} parts (the limit is {})", what, k_max_nesting, k_max_nesting));
            skip_blank(false);
            if (peek() != '.') break;
            ++m_i;
        }
        // Checked once the key ends, so that a key too long by itself is called that.
        if (base + parts > k_max_nesting) return too_deep(at);
        return true;
    }

    bool too_deep(size_t at) {
        return found(at, fmt::format("value nested more than {} deep (tables, dotted keys, arrays "
                                     "and inline tables together; the limit is {})",
                                     k_max_nesting, k_max_nesting));
    }

    /// `[a.b]` or `[[a.b]]`: sets the depth of the keys that follow.
    bool header() {
        const size_t at = m_i;
        const bool array = m_s.substr(m_i, 2) == "[[";
        m_i += array ? 2 : 1;
        int parts = 0;
        if (!key(0, "table name", at, parts)) return false;
        skip_blank(false);
        if (m_s.substr(m_i, array ? 2 : 1) != (array ? "]]" : "]")) return false;
        m_i += array ? 2 : 1;
        // An array of tables adds a level: the array, then its table.
        m_table_depth = parts + (array ? 1 : 0);
        if (m_table_depth > k_max_nesting) return too_deep(at);
        return true;
    }

    bool key_value() {
        int parts = 0;
        if (!key(m_table_depth, "dotted key", m_i, parts)) return false;
        if (peek() != '=') return false;
        ++m_i;
        return value(m_table_depth + parts);
    }

    /// One value whose own depth is `depth`, however deep it nests.
    bool value(int depth) {
        struct Open {
            char close;  // ']' for an array, '}' for an inline table
            int depth;   // the depth of what sits directly inside it
        };
        std::vector<Open> open;
        enum class State { value, after_value, table_key } state = State::value;
        int value_depth = depth;  // the depth of the value about to start
        for (;;) {
            // TOML 1.0 keeps inline tables on one line; toml++ reports a break there itself.
            if (state == State::after_value && open.empty()) return true;
            skip_blank(/*lines=*/!open.empty());
            if (eof()) return false;
            const char c = m_s[m_i];
            switch (state) {
                case State::value:
                    if (c == '[' || c == '{') {
                        if (value_depth + 1 > k_max_nesting) return too_deep(m_i);
                        ++m_i;
                        open.push_back({c == '[' ? ']' : '}', value_depth + 1});
                        value_depth = open.back().depth;
                        state = c == '[' ? State::value : State::table_key;
                    } else if (c == ']' && !open.empty() && open.back().close == ']') {
                        ++m_i;  // `[]`, or the end after a trailing comma
                        open.pop_back();
                        state = State::after_value;
                    } else if (c == '"' || c == '\'') {
                        if (!skip_string(true)) return false;
                        state = State::after_value;
                    } else {
                        // A number, boolean or date-time ("1979-05-27 07:32:00" has a space): up to
                        // a character none of them holds.
                        const size_t start = m_i;
                        while (!eof() && std::string_view(",]}#\r\n").find(m_s[m_i]) == std::string_view::npos) ++m_i;
                        if (m_i == start) return false;
                        state = State::after_value;
                    }
                    break;
                case State::after_value:
                    if (c == ',') {
                        ++m_i;
                        state = open.back().close == ']' ? State::value : State::table_key;
                        value_depth = open.back().depth;
                    } else if (c == open.back().close) {
                        ++m_i;
                        open.pop_back();
                    } else {
                        return false;
                    }
                    break;
                case State::table_key: {
                    if (c == '}') {
                        ++m_i;  // `{}`
                        open.pop_back();
                        state = State::after_value;
                        break;
                    }
                    int parts = 0;
                    if (!key(open.back().depth - 1, "dotted key", m_i, parts)) return false;
                    if (peek() != '=') return false;
                    ++m_i;
                    value_depth = open.back().depth - 1 + parts;
                    state = State::value;
                    break;
                }
            }
        }
    }

    std::string_view m_s;
    size_t m_i = 0;
    int m_table_depth = 0;  // the parts of the last table header
    std::optional<std::pair<size_t, std::string>> m_found;
};

/// 1-based line and column (in code points, as toml++ counts them) of byte `offset`.
std::pair<int, int> line_column(std::string_view text, size_t offset) {
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
            ++column;
        }
    }
    return {line, column};
}

}  // namespace

Problem too_large(uintmax_t bytes, const std::string& file) {
    return {{file, 1, 1},
            fmt::format("recipe is {} bytes; bootstrap reads recipes of at most {} "
                        "MiB ({} bytes)",
                        bytes, k_max_recipe_bytes >> 20, k_max_recipe_bytes)};
}

std::optional<Problem> prescan_toml(std::string_view text, const std::string& file) {
    if (text.size() > k_max_recipe_bytes) return too_large(text.size(), file);
    auto found = Scanner(text).run();
    if (!found) return std::nullopt;
    auto [line, column] = line_column(text, found->first);
    return Problem{{file, line, column}, std::move(found->second)};
}

}  // namespace bootstrap::recipe::detail
