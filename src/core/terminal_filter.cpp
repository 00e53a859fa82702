#include "core/terminal_filter.hpp"

namespace bootstrap::core {

namespace {

constexpr char32_t k_esc = 0x1b;
constexpr char32_t k_replacement = 0xfffd;

void append_utf8(char32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

/// After ESC: the finals that open a control string ending in ST (OSC, DCS, SOS, PM, APC).
bool opens_control_string(char32_t cp) { return cp == ']' || cp == 'P' || cp == 'X' || cp == '^' || cp == '_'; }

}  // namespace

void TerminalFilter::feed(std::string_view chunk, std::string& out) {
    out.reserve(out.size() + chunk.size());
    for (char c : chunk) {
        const auto byte = static_cast<unsigned char>(c);
        // The common case, printable ASCII between sequences, without the state machine.
        if (byte >= 0x20 && byte < 0x7f && m_state == State::ground && m_need == 0 && !m_cr_pending) {
            out += c;
            m_after_cr = false;
            m_cr_escaped = false;
            continue;
        }
        decode(byte, out);
    }
}

void TerminalFilter::finish(std::string& out) {
    if (m_need > 0) {
        m_need = 0;
        step(k_replacement, out);
    }
    if (m_cr_pending) out += '\n';
    *this = TerminalFilter(m_options);
}

/// UTF-8 to code points (Unicode's table of well-formed sequences). An ill-formed sequence is
/// one U+FFFD, and the byte that broke it starts afresh; a lone 0x80..0x9f is a C1 control.
void TerminalFilter::decode(unsigned char byte, std::string& out) {
    if (m_need > 0) {
        if (byte >= m_low && byte <= m_high) {
            m_cp = (m_cp << 6) | (byte & 0x3f);
            m_low = 0x80;
            m_high = 0xbf;
            if (--m_need == 0) step(m_cp, out);
            return;
        }
        m_need = 0;
        step(k_replacement, out);
    }
    if (byte < 0xa0) return step(byte, out);
    if (byte < 0xc2 || byte > 0xf4) return step(k_replacement, out);
    m_low = 0x80;
    m_high = 0xbf;
    if (byte < 0xe0) {
        m_need = 1;
        m_cp = byte & 0x1f;
    } else if (byte < 0xf0) {
        m_need = 2;
        m_cp = byte & 0x0f;
        if (byte == 0xe0) m_low = 0xa0;   // no overlong form
        if (byte == 0xed) m_high = 0x9f;  // no surrogate
    } else {
        m_need = 3;
        m_cp = byte & 0x07;
        if (byte == 0xf0) m_low = 0x90;   // no overlong form
        if (byte == 0xf4) m_high = 0x8f;  // nothing above U+10FFFF
    }
}

void TerminalFilter::begin(State state) {
    m_state = state;
    m_length = 0;
}

/// One character through the escape-sequence states (ECMA-48's, as xterm reads them). A
/// character that cannot continue the sequence abandons it and is read afresh as text.
void TerminalFilter::step(char32_t cp, std::string& out) {
    if (m_state == State::ground) return ground(cp, out);
    if (++m_length > k_max_escape) {
        m_state = State::ground;
        return ground(cp, out);
    }
    switch (m_state) {
        case State::escape:
            if (cp == '[') return begin(State::csi);
            if (opens_control_string(cp)) return begin(State::control_string);
            if (cp >= 0x20 && cp <= 0x2f) return begin(State::escape_intermediate);
            if (cp >= 0x30 && cp <= 0x7e) return begin(State::ground);
            if (cp == k_esc) return begin(State::escape);
            break;
        case State::escape_intermediate:
            if (cp >= 0x20 && cp <= 0x2f) return;
            if (cp >= 0x30 && cp <= 0x7e) return begin(State::ground);
            if (cp == k_esc) return begin(State::escape);
            break;
        case State::csi:
            if (cp >= 0x20 && cp <= 0x3f) return;  // parameters and intermediates
            if (cp >= 0x40 && cp <= 0x7e) return begin(State::ground);
            if (cp == k_esc) return begin(State::escape);
            break;
        case State::control_string:
            if (cp == 0x07 || cp == 0x9c) return begin(State::ground);  // BEL (xterm's), ST
            if (cp == k_esc) {
                m_state = State::control_string_escape;
                return;
            }
            // A title or a clipboard write never spans lines: an unterminated one ends here.
            if (cp == '\n' || cp == '\r' || cp == 0x18 || cp == 0x1a) break;
            return;
        case State::control_string_escape:
            if (cp == '\\') return begin(State::ground);  // ST
            begin(State::escape);                         // the ESC begins another sequence
            return step(cp, out);
        case State::ground: break;
    }
    m_state = State::ground;
    ground(cp, out);
}

void TerminalFilter::ground(char32_t cp, std::string& out) {
    if (m_cr_pending) {
        m_cr_pending = false;
        out += '\n';
        if (cp == '\n') return;
    }
    if (cp == k_esc || cp == 0x9b || cp == 0x90 || cp == 0x98 || cp == 0x9d || cp == 0x9e || cp == 0x9f) {
        if (m_after_cr) m_cr_escaped = true;
        begin(cp == k_esc ? State::escape : cp == 0x9b ? State::csi : State::control_string);
        return;
    }
    if (cp == '\r') {
        if (m_options.carriage_return == CarriageReturn::newline) {
            m_cr_pending = true;
        } else {
            out += '\r';
            m_after_cr = true;
            m_cr_escaped = false;
        }
        return;
    }
    if (cp == '\n') {
        if (m_cr_escaped) out += '\r';
        out += '\n';
    } else if (cp == '\t') {
        out += m_options.tabs_as_spaces ? ' ' : '\t';
    } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
        return;  // another control: dropped, and it changes nothing of what was drawn
    } else {
        append_utf8(cp, out);
    }
    m_after_cr = false;
    m_cr_escaped = false;
}

std::string printable_text(std::string_view text) { return filtered_text(text, {}); }

std::string filtered_text(std::string_view text, TerminalFilter::Options options) {
    TerminalFilter filter(options);
    std::string out;
    filter.feed(text, out);
    filter.finish(out);
    return out;
}

}  // namespace bootstrap::core
