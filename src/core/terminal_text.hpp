#pragma once
// Text that children print, for a terminal: without escapes, cut to a width, its running tail
// (the status line and the heartbeat), sizes as installers print them.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/terminal_filter.hpp"

namespace bootstrap::core {

/// `text` without terminal escape sequences and control characters (core::TerminalFilter);
/// "\r\n" and a lone '\r' (a progress bar's redraw) become '\n', a tab a space.
[[nodiscard]] std::string plain_text(std::string_view text);

/// `text` cut to `columns` characters (UTF-8 code points), ending in "…" when it was cut.
[[nodiscard]] std::string cut_to_columns(std::string_view text, size_t columns);

/// What a running step has printed so far, fed chunk by chunk as it arrives: byte and line
/// counts and the last line with text. A chunk may end inside a line or an escape sequence.
/// Linear in the output, and it keeps only the last few KiB of an unfinished line.
class OutputTail {
public:
    void feed(std::string_view chunk);
    void reset();
    [[nodiscard]] std::uint64_t bytes() const { return m_bytes; }
    [[nodiscard]] std::uint64_t lines() const { return m_lines; }
    /// The unfinished line when it has text (a "Building..." without its newline yet), else
    /// the last finished line with text; plain text, trimmed. "" before any.
    [[nodiscard]] std::string last_line() const;

private:
    TerminalFilter m_filter{TerminalFilter::Options{TerminalFilter::CarriageReturn::redraw, true}};
    std::string m_partial;  // plain text of the unfinished line (its last few KiB)
    std::string m_last;     // plain text of the last finished line with text
    std::uint64_t m_bytes = 0;
    std::uint64_t m_lines = 0;
};

/// A terminal stream (a child writing to a pseudo-terminal `columns` wide) as the lines a log
/// keeps: escape sequences and control characters dropped, a line redrawn with '\r' (a progress
/// bar, a spinner) kept only as it was drawn last before its '\n'. A row that fills the width
/// wraps, as on the terminal: progress bars (indicatif's) pad every row to the width and count on
/// that, so a wrapped row ending in padding (two spaces or more) counts as drawn, not kept; a
/// long line of text is kept as rows of the width. Every segment (the plain text between two
/// '\r'/'\n'/wraps) goes to `on_segment` as it ends, drawn or kept. Chunks may end inside an
/// escape sequence or a "\r\n". `columns` 0: no wrapping. Each byte is read once (an
/// unfinished escape waits in core::TerminalFilter's state, not as bytes to read again), and a
/// line that never ends is kept in pieces of 64 KiB.
class TerminalTranscript {
public:
    using OnSegment = std::function<void(std::string_view segment)>;
    explicit TerminalTranscript(OnSegment on_segment = {}, size_t columns = 0);
    /// The lines `chunk` finished, each ending in '\n' ("" when none).
    [[nodiscard]] std::string feed(std::string_view chunk);
    /// At the end of the stream: the unfinished last line with its '\n' ("" when none).
    [[nodiscard]] std::string finish();

private:
    void take(std::string_view text, std::string& out);
    void end_segment(bool kept, std::string& out);
    TerminalFilter m_filter;
    OnSegment m_on_segment;
    size_t m_columns = 0;
    size_t m_used = 0;          // columns the segment fills (UTF-8 code points)
    bool m_cr_pending = false;  // a final '\r': a redraw, or half of a "\r\n"
    std::string m_line;         // plain text of the segment being drawn
};

/// "512 B", "3.4 KB", "1.2 MB", "2.0 GB" (powers of 1000, as uv and pip print sizes).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

}  // namespace bootstrap::core
