#include "core/terminal_text.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/terminal_filter.hpp"

namespace bootstrap::core {

namespace {

constexpr size_t k_partial_max = 8192;  // an unfinished line longer than this keeps its end
constexpr size_t k_partial_keep = 4096;

constexpr TerminalFilter::Options k_redraws{TerminalFilter::CarriageReturn::redraw, true};

}  // namespace

std::string plain_text(std::string_view text) {
    TerminalFilter filter(TerminalFilter::Options{TerminalFilter::CarriageReturn::newline, true});
    std::string out;
    filter.feed(text, out);
    filter.finish(out);
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
    std::string text;
    m_filter.feed(chunk, text);
    for (char c : text) {
        if (c == '\n' || c == '\r') {
            if (c == '\n') ++m_lines;
            std::string_view line = core::trim(m_partial);
            if (!line.empty()) m_last = std::string(line);
            m_partial.clear();
        } else {
            m_partial += c;
        }
    }
    if (m_partial.size() > k_partial_max) {
        size_t cut = m_partial.size() - k_partial_keep;
        while (cut < m_partial.size() && (static_cast<unsigned char>(m_partial[cut]) & 0xc0) == 0x80) ++cut;
        m_partial.erase(0, cut);  // at a character's start
    }
}

void OutputTail::reset() { *this = OutputTail(); }

std::string OutputTail::last_line() const {
    std::string_view partial = core::trim(m_partial);
    return partial.empty() ? m_last : std::string(partial);
}

TerminalTranscript::TerminalTranscript(OnSegment on_segment, size_t columns)
    : m_filter(k_redraws), m_on_segment(std::move(on_segment)), m_columns(columns) {}

std::string TerminalTranscript::feed(std::string_view chunk) {
    std::string text;
    m_filter.feed(chunk, text);
    std::string out;
    take(text, out);
    return out;
}

/// Plain text (the filter's, tabs made spaces) through the terminal's line discipline.
void TerminalTranscript::take(std::string_view text, std::string& out) {
    for (char c : text) {
        if (m_cr_pending) {  // a "\r\n" may have been cut in two by the chunks
            m_cr_pending = false;
            if (c == '\n') {
                end_segment(true, out);
                continue;
            }
            end_segment(false, out);  // a redraw
        }
        if (c == '\r') {
            m_cr_pending = true;
        } else if (c == '\n') {
            end_segment(true, out);
        } else {
            const bool starts_character = (static_cast<unsigned char>(c) & 0xc0) != 0x80;
            if (starts_character && m_columns > 0 && m_used == m_columns)  // the row is full: it wraps
                end_segment(!m_line.ends_with("  "), out);
            // A child that never ends a line must not grow us without bound: what it printed
            // is kept as a line of its own.
            if (starts_character && m_line.size() >= k_partial_max * 8) end_segment(true, out);
            if (starts_character) ++m_used;
            m_line += c;
        }
    }
}

std::string TerminalTranscript::finish() {
    // What a terminal would show last: a line redrawn and left without its '\n' stays too.
    std::string text;
    m_filter.finish(text);
    std::string out;
    take(text, out);
    m_cr_pending = false;
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
