#include "pyenv/requirement.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::pyenv {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
}

/// The PEP 508 grammar, left to right:
///   name [extras] ( "@" url [ws ";" marker] | ["(" specs ")" | specs] [";" marker] )
/// Every error carries the byte offset where it was noticed.
class RequirementParser {
public:
    explicit RequirementParser(std::string_view s) : m_s(s) {}

    tl::expected<Requirement, SyntaxError> parse() {
        Requirement req;
        if (auto ok = parse_name(req); !ok) return tl::unexpected(ok.error());
        skip_space();
        if (peek() == '[')
            if (auto ok = parse_extras(req); !ok) return tl::unexpected(ok.error());
        skip_space();
        if (peek() == '@') {
            if (auto ok = parse_url(req); !ok) return tl::unexpected(ok.error());
        } else {
            if (auto ok = parse_specifier(req); !ok) return tl::unexpected(ok.error());
        }
        skip_space();
        if (peek() == ';') {
            if (auto ok = parse_marker(req); !ok) return tl::unexpected(ok.error());
        }
        skip_space();
        if (m_pos < m_s.size()) return error(fmt::format("unexpected '{}'", core::clip(m_s.substr(m_pos))));
        return req;
    }

private:
    using Step = tl::expected<void, SyntaxError>;

    char peek() const { return m_pos < m_s.size() ? m_s[m_pos] : '\0'; }
    void skip_space() {
        while (m_pos < m_s.size() && is_space(m_s[m_pos])) ++m_pos;
    }
    tl::unexpected<SyntaxError> error(std::string what) const {
        return tl::unexpected(SyntaxError{std::move(what), m_pos});
    }
    static tl::unexpected<SyntaxError> shifted(SyntaxError e, size_t base) {
        e.offset += base;
        return tl::unexpected(std::move(e));
    }

    /// A run of name characters; `what` names it for the error.
    tl::expected<std::string_view, SyntaxError> identifier(std::string_view what) {
        skip_space();
        size_t start = m_pos;
        while (m_pos < m_s.size() && is_name_char(m_s[m_pos])) ++m_pos;
        std::string_view word = m_s.substr(start, m_pos - start);
        if (word.empty()) return error(fmt::format("expected {}", what));
        if (!is_valid_name(word))
            return tl::unexpected(
                SyntaxError{fmt::format("'{}' is not a valid {} (letters, digits, '-', '_', '.'; starting "
                                        "and ending with a letter or digit)",
                                        core::clip(word), what.substr(what.find(' ') + 1)),
                            start});
        return word;
    }

    Step parse_name(Requirement& req) {
        auto name = identifier("a package name");
        if (!name) return tl::unexpected(name.error());
        req.name = std::string(*name);
        req.normalized_name = normalize_name(*name);
        return {};
    }

    Step parse_extras(Requirement& req) {
        ++m_pos;  // '['
        skip_space();
        if (peek() == ']') {
            ++m_pos;
            return {};
        }
        for (;;) {
            auto extra = identifier("an extra name");
            if (!extra) return tl::unexpected(extra.error());
            std::string normalized = normalize_name(*extra);
            if (std::find(req.extras.begin(), req.extras.end(), normalized) == req.extras.end())
                req.extras.push_back(std::move(normalized));
            skip_space();
            if (peek() == ',') {
                ++m_pos;
                continue;
            }
            if (peek() == ']') {
                ++m_pos;
                return {};
            }
            return error(m_pos < m_s.size() ? "expected ',' or ']' in the extras" : "expected ']' to close the extras");
        }
    }

    Step parse_url(Requirement& req) {
        ++m_pos;  // '@'
        skip_space();
        size_t start = m_pos;
        while (m_pos < m_s.size() && !is_space(m_s[m_pos])) ++m_pos;
        if (m_pos == start) return error("expected a URL after '@'");
        req.url = std::string(m_s.substr(start, m_pos - start));
        // A URL may contain ';', so PEP 508 wants whitespace before a marker that follows one.
        size_t before = m_pos;
        skip_space();
        if (peek() == ';' && before == m_pos) return error("expected a space before ';'");
        return {};
    }

    Step parse_specifier(Requirement& req) {
        size_t start = m_pos;
        size_t end = 0;
        if (peek() == '(') {
            size_t close = m_s.find(')', m_pos);
            if (close == std::string_view::npos) {
                m_pos = m_s.size();
                return error("expected ')' to close the version specifier");
            }
            start = m_pos + 1;
            end = close;
            m_pos = close + 1;
        } else {
            end = std::min(m_s.find(';', m_pos), m_s.size());
            m_pos = end;
        }
        auto set = SpecifierSet::parse_detailed(m_s.substr(start, end - start));
        if (!set) return shifted(set.error(), start);
        req.specifier = std::move(*set);
        return {};
    }

    Step parse_marker(Requirement& req) {
        ++m_pos;  // ';'
        skip_space();
        if (m_pos >= m_s.size()) return error("expected a marker after ';'");
        size_t start = m_pos;
        auto marker = Marker::parse_detailed(m_s.substr(start));
        if (!marker) return shifted(marker.error(), start);
        req.marker = std::move(*marker);
        m_pos = m_s.size();
        return {};
    }

    std::string_view m_s;
    size_t m_pos = 0;
};

}  // namespace

Result<Requirement> Requirement::parse(std::string_view text) {
    auto req = RequirementParser(text).parse();
    if (!req)
        return fail(ErrorCode::invalid_recipe, fmt::format("invalid requirement '{}': {} at column {}",
                                                           core::clip(text), req.error().what, req.error().offset + 1));
    return *req;
}

std::string Requirement::str() const {
    std::string out = name;
    if (!extras.empty()) {
        std::vector<std::string> sorted = extras;
        std::sort(sorted.begin(), sorted.end());
        out += "[" + core::join(sorted, ",") + "]";
    }
    if (!url.empty()) {
        out += " @ " + url;
        if (marker) out += " ";  // the space keeps the ';' out of the URL on re-parse
    } else {
        out += specifier.str();
    }
    if (marker) out += "; " + marker->str();
    return out;
}

}  // namespace bootstrap::pyenv
