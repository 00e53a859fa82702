#include "pyenv/version.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_separator(char c) { return c == '-' || c == '_' || c == '.'; }

/// Hand-written equivalent of the PEP 440 appendix regex (packaging's VERSION_PATTERN): each
/// optional segment is tried and the cursor restored when it does not match.
class VersionScanner {
public:
    explicit VersionScanner(std::string_view s) : m_s(s) {}

    size_t pos() const { return m_pos; }
    void set_pos(size_t pos) { m_pos = pos; }
    bool at_end() const { return m_pos >= m_s.size(); }
    char peek(size_t ahead = 0) const { return m_pos + ahead < m_s.size() ? m_s[m_pos + ahead] : '\0'; }
    bool accept(char c) {
        if (peek() != c) return false;
        ++m_pos;
        return true;
    }
    void skip_separator() {
        if (is_separator(peek())) ++m_pos;
    }

    /// A case-insensitive keyword.
    bool accept_word(std::string_view word) {
        if (m_s.size() - m_pos < word.size()) return false;
        for (size_t i = 0; i < word.size(); ++i)
            if (lower(m_s[m_pos + i]) != word[i]) return false;
        m_pos += word.size();
        return true;
    }

    /// Digits as a non-negative number; false when there are none. `overflow` is set when the
    /// value does not fit a long (PEP 440 puts no bound on it, but we must).
    bool number(long& out, bool& overflow) {
        if (!is_digit(peek())) return false;
        long value = 0;
        while (is_digit(peek())) {
            int d = m_s[m_pos++] - '0';
            if (value > (std::numeric_limits<long>::max() - d) / 10) overflow = true;
            else value = value * 10 + d;
        }
        out = value;
        return true;
    }

private:
    std::string_view m_s;
    size_t m_pos = 0;
};

struct Label {
    std::string_view word;
    char letter;
};

// Longest spelling first, so "alpha" is not read as "a" followed by junk.
constexpr std::array<Label, 8> k_pre_labels{
    {{"alpha", 'a'}, {"a", 'a'}, {"beta", 'b'}, {"b", 'b'}, {"preview", 'c'}, {"pre", 'c'}, {"rc", 'c'}, {"c", 'c'}}};

/// Local label: "[a-z0-9]+([-_.][a-z0-9]+)*", lower-cased, separators become '.', numeric
/// segments lose leading zeros (packaging stores them as ints).
bool scan_local(std::string_view s, size_t& pos, std::string& out) {
    std::string segment;
    for (;;) {
        segment.clear();
        while (pos < s.size() && (is_digit(s[pos]) || is_alpha(s[pos]))) segment += lower(s[pos++]);
        if (segment.empty()) return false;
        if (std::all_of(segment.begin(), segment.end(), is_digit)) {
            size_t nz = segment.find_first_not_of('0');
            segment = nz == std::string::npos ? "0" : segment.substr(nz);
        }
        if (!out.empty()) out += '.';
        out += segment;
        if (pos < s.size() && is_separator(s[pos]) && pos + 1 < s.size() &&
            (is_digit(s[pos + 1]) || is_alpha(s[pos + 1]))) {
            ++pos;
            continue;
        }
        return true;
    }
}

std::strong_ordering compare_numeric_strings(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return a.size() <=> b.size();
    return a.compare(b) <=> 0;
}

/// PEP 440 local ordering: segment-wise, numbers numerically, alphanumeric segments
/// lexicographically and before any number; a longer label wins a tie on the common prefix.
std::strong_ordering compare_local(std::string_view a, std::string_view b) {
    if (a.empty() || b.empty()) return !a.empty() <=> !b.empty();
    auto all_digits = [](std::string_view s) { return std::all_of(s.begin(), s.end(), is_digit); };
    for (;;) {
        size_t ea = std::min(a.find('.'), a.size());
        size_t eb = std::min(b.find('.'), b.size());
        std::string_view sa = a.substr(0, ea), sb = b.substr(0, eb);
        bool na = all_digits(sa), nb = all_digits(sb);
        std::strong_ordering c = std::strong_ordering::equal;
        if (na && nb) c = compare_numeric_strings(sa, sb);
        else if (na != nb) c = na <=> nb;  // alpha (false) < numeric (true)
        else c = sa.compare(sb) <=> 0;
        if (c != 0) return c;
        a.remove_prefix(std::min(ea + 1, a.size()));
        b.remove_prefix(std::min(eb + 1, b.size()));
        if (a.empty() || b.empty()) return !a.empty() <=> !b.empty();
    }
}

}  // namespace

Result<Version> Version::parse(std::string_view text) {
    std::string_view s = core::trim(text);
    auto invalid = [&](size_t pos, std::string_view why) {
        return fail(ErrorCode::invalid_recipe, fmt::format("invalid version '{}': {} at column {}", core::clip(text),
                                                           why, pos + 1 + static_cast<size_t>(s.data() - text.data())));
    };
    if (s.empty()) return fail(ErrorCode::invalid_recipe, "invalid version '': it is empty");

    Version v;
    VersionScanner in(s);
    bool overflow = false;
    if (lower(in.peek()) == 'v') in.set_pos(1);

    long first = 0;
    if (!in.number(first, overflow)) return invalid(in.pos(), "expected a release number");
    if (in.accept('!')) {
        v.m_epoch = first;
        if (!in.number(first, overflow)) return invalid(in.pos(), "expected a release number after the epoch");
    }
    v.m_release.push_back(first);
    while (in.peek() == '.' && is_digit(in.peek(1))) {
        in.accept('.');
        long part = 0;
        (void)in.number(part, overflow);
        v.m_release.push_back(part);
    }

    size_t save = in.pos();
    in.skip_separator();
    bool have_pre = false;
    for (const Label& label : k_pre_labels) {
        if (in.accept_word(label.word)) {
            in.skip_separator();
            long n = 0;
            (void)in.number(n, overflow);
            v.m_pre = std::pair<char, long>(label.letter, n);
            have_pre = true;
            break;
        }
    }
    if (!have_pre) in.set_pos(save);

    save = in.pos();
    if (in.peek() == '-' && is_digit(in.peek(1))) {  // "1.0-1" is an implicit post-release
        in.accept('-');
        long n = 0;
        (void)in.number(n, overflow);
        v.m_post = n;
    } else {
        in.skip_separator();
        if (in.accept_word("post") || in.accept_word("rev") || in.accept_word("r")) {
            in.skip_separator();
            long n = 0;
            (void)in.number(n, overflow);
            v.m_post = n;
        } else {
            in.set_pos(save);
        }
    }

    save = in.pos();
    in.skip_separator();
    if (in.accept_word("dev")) {
        in.skip_separator();
        long n = 0;
        (void)in.number(n, overflow);
        v.m_dev = n;
    } else {
        in.set_pos(save);
    }

    if (in.accept('+')) {
        size_t pos = in.pos();
        if (!scan_local(s, pos, v.m_local)) return invalid(pos, "expected a local version label");
        in.set_pos(pos);
    }
    if (!in.at_end()) return invalid(in.pos(), fmt::format("unexpected '{}'", s.substr(in.pos())));
    if (overflow) return invalid(0, "a number is too large");
    v.m_text = s;
    return v;
}

bool Version::is_prerelease() const { return m_pre.has_value() || m_dev.has_value(); }

Version Version::public_version() const {
    Version v = *this;
    v.m_local.clear();
    v.m_text = v.str();
    return v;
}

Version Version::base_version() const {
    Version v;
    v.m_epoch = m_epoch;
    v.m_release = m_release;
    v.m_text = v.str();
    return v;
}

std::string Version::str() const {
    std::string out;
    if (m_epoch != 0) out += fmt::format("{}!", m_epoch);
    for (size_t i = 0; i < m_release.size(); ++i) {
        if (i) out += '.';
        out += fmt::format("{}", m_release[i]);
    }
    if (m_pre) {
        out += m_pre->first == 'c' ? "rc" : std::string(1, m_pre->first);
        out += fmt::format("{}", m_pre->second);
    }
    if (m_post) out += fmt::format(".post{}", *m_post);
    if (m_dev) out += fmt::format(".dev{}", *m_dev);
    if (!m_local.empty()) out += "+" + m_local;
    return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
    if (auto c = a.m_epoch <=> b.m_epoch; c != 0) return c;

    // Trailing zeros do not count: 1.0 == 1.0.0.
    size_t n = std::max(a.m_release.size(), b.m_release.size());
    for (size_t i = 0; i < n; ++i) {
        long x = i < a.m_release.size() ? a.m_release[i] : 0;
        long y = i < b.m_release.size() ? b.m_release[i] : 0;
        if (auto c = x <=> y; c != 0) return c;
    }

    // Pre segment rank: a bare dev release (1.0.dev0) sorts before any pre-release of the same
    // release, and a final release after all of them (packaging's _cmpkey).
    auto pre_rank = [](const Version& v) {
        if (!v.m_pre && !v.m_post && v.m_dev) return 0;
        return v.m_pre ? 1 : 2;
    };
    if (auto c = pre_rank(a) <=> pre_rank(b); c != 0) return c;
    if (a.m_pre && b.m_pre) {
        if (auto c = a.m_pre->first <=> b.m_pre->first; c != 0) return c;  // 'a' < 'b' < 'c'
        if (auto c = a.m_pre->second <=> b.m_pre->second; c != 0) return c;
    }

    // No post sorts before any post; no dev sorts after any dev.
    if (auto c = a.m_post.has_value() <=> b.m_post.has_value(); c != 0) return c;
    if (a.m_post && b.m_post)
        if (auto c = *a.m_post <=> *b.m_post; c != 0) return c;
    if (auto c = b.m_dev.has_value() <=> a.m_dev.has_value(); c != 0) return c;
    if (a.m_dev && b.m_dev)
        if (auto c = *a.m_dev <=> *b.m_dev; c != 0) return c;

    return compare_local(a.m_local, b.m_local);
}

}  // namespace bootstrap::pyenv
