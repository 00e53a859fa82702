#include "core/terminal_text.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::core {

namespace {

constexpr size_t k_partial_max = 8192;  // an unfinished line longer than this keeps its end
constexpr size_t k_partial_keep = 4096;

/// Length of the escape sequence at text[i] (text[i] == ESC), or 0 when it is unfinished.
size_t escape_length(std::string_view text, size_t i) {
    if (i + 1 >= text.size()) return 0;
    char kind = text[i + 1];
    if (kind == '[') {  // CSI: parameters and intermediates, then a final byte 0x40-0x7e
        for (size_t j = i + 2; j < text.size(); ++j)
            if (text[j] >= 0x40 && text[j] <= 0x7e) return j - i + 1;
        return 0;
    }
    if (kind == ']') {  // OSC (hyperlinks): up to BEL or ESC '\'
        for (size_t j = i + 2; j < text.size(); ++j) {
            if (text[j] == '\a') return j - i + 1;
            if (text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\') return j - i + 2;
        }
        return 0;
    }
    return 2;
}

}  // namespace

std::string plain_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\x1b') {
            size_t n = escape_length(text, i);
            if (n == 0) break;  // an unfinished sequence at the end
            i += n - 1;
        } else if (c == '\r') {
            if (i + 1 < text.size() && text[i + 1] == '\n') continue;
            out += '\n';
        } else if (c == '\t') {
            out += ' ';
        } else if (c == '\n' || static_cast<unsigned char>(c) >= 0x20) {
            if (c != '\x7f') out += c;
        }
    }
    return out;
}

std::string cut_to_columns(std::string_view text, size_t columns) {
    if (columns == 0) return {};
    size_t count = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;  // UTF-8 continuation
        if (count == columns - 1) {
            // Does the rest fit in this last column?
            size_t rest = 0;
            for (size_t j = i; j < text.size(); ++j)
                if ((static_cast<unsigned char>(text[j]) & 0xc0) != 0x80) ++rest;
            if (rest <= 1) return std::string(text);
            return std::string(text.substr(0, i)) + "…";
        }
        ++count;
    }
    return std::string(text);
}

void OutputTail::feed(std::string_view chunk) {
    m_bytes += chunk.size();
    for (char c : chunk) {
        if (c == '\n' || c == '\r') {
            if (c == '\n') ++m_lines;
            std::string line(core::trim(plain_text(m_partial)));
            if (!line.empty()) m_last = std::move(line);
            m_partial.clear();
        } else {
            m_partial += c;
        }
    }
    if (m_partial.size() > k_partial_max) m_partial.erase(0, m_partial.size() - k_partial_keep);
}

void OutputTail::reset() { *this = OutputTail(); }

std::string OutputTail::last_line() const {
    std::string partial(core::trim(plain_text(m_partial)));
    return partial.empty() ? m_last : partial;
}

std::string TerminalTranscript::feed(std::string_view chunk) {
    std::string text = std::move(m_pending);
    m_pending.clear();
    text.append(chunk);
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\x1b') {
            size_t n = escape_length(text, i);
            if (n == 0) {  // finished by a later chunk
                m_pending = text.substr(i);
                break;
            }
            i += n - 1;
        } else if (c == '\r') {
            if (i + 1 == text.size()) {  // a "\r\n" cut in two, or a redraw: the next chunk says
                m_pending = "\r";
                break;
            }
            if (text[i + 1] != '\n') end_segment(false, out);
        } else if (c == '\n') {
            end_segment(true, out);
        } else if (c == '\t') {
            m_line += ' ';
        } else if (static_cast<unsigned char>(c) >= 0x20 && c != '\x7f') {
            const bool starts_character = (static_cast<unsigned char>(c) & 0xc0) != 0x80;
            if (starts_character && m_columns > 0 && m_used == m_columns)  // the row is full: it wraps
                end_segment(!m_line.ends_with("  "), out);
            if (starts_character) ++m_used;
            m_line += c;
            // A child that never ends a line must not grow us without bound: what it printed
            // is kept as a line of its own.
            if (m_line.size() >= k_partial_max * 8) end_segment(true, out);
        }
    }
    return out;
}

std::string TerminalTranscript::finish() {
    // What a terminal would show last: a line redrawn and left without its '\n' stays too.
    std::string out;
    m_pending.clear();
    if (!m_line.empty()) end_segment(true, out);
    return out;
}

void TerminalTranscript::end_segment(bool kept, std::string& out) {
    if (m_on_segment) m_on_segment(m_line);
    if (kept) {
        out += m_line;
        out += '\n';
    }
    m_line.clear();
    m_used = 0;
}

std::string format_bytes(std::uint64_t bytes) {
    if (bytes < 1000) return fmt::format("{} B", bytes);
    double v = static_cast<double>(bytes);
    for (const char* unit : {"KB", "MB", "GB"}) {
        v /= 1000;
        if (v < 1000 || unit[0] == 'G') return fmt::format("{:.1f} {}", v, unit);
    }
    return {};
}

}  // namespace bootstrap::core
