#pragma once
// A child's output made safe for a terminal and for a log that someone will `cat` later: what
// it printed is kept as text, and every escape sequence and control character is stripped (not
// made visible: a log of installer output full of "\e[2K" markers is unreadable, and nothing a
// user needs is in them). A terminal acts on those bytes: OSC 52 writes the clipboard, OSC 0 the
// title, CSI 2J clears the screen, and in a log they act again on whoever reads it.

#include <cstdint>
#include <string>
#include <string_view>

namespace bootstrap::core {

/// The longest escape sequence or control string (an OSC title, a DCS) followed, in characters:
/// one still unfinished after that many is abandoned, and what comes after it is text again, so
/// that an unterminated "ESC ]" cannot swallow the rest of the output.
inline constexpr size_t k_max_escape = 16384;

/// A stream of bytes to text, chunk by chunk, in one pass (state carried across chunks, nothing
/// read twice). Dropped: escape sequences (CSI, OSC, DCS, SOS, PM, APC, ESC + intermediates +
/// final), C1 controls (U+0080..U+009F encoded as UTF-8, or a lone byte 0x80..0x9f, acting as an
/// 8-bit terminal would: 0x9b begins a CSI, 0x9d an OSC), other C0 controls and DEL. A control
/// string ends at BEL or ST, and is abandoned at a line end, CAN, SUB or k_max_escape. Bytes
/// that are not UTF-8 become U+FFFD. Kept: '\n', '\t' (or a space), '\r' as Options say, and
/// every other character as it was.
class TerminalFilter {
public:
    enum class CarriageReturn {
        /// "\r\n" and a lone '\r' are a line end: '\n'.
        newline,
        /// '\r' passes, "\r\n" too, for the caller to read a lone '\r' as a redraw
        /// (core::TerminalTranscript). A '\r' and a '\n' that only a stripped sequence separated
        /// ("\r\e[2K\n") arrive as "\r\r\n": a redraw then a line end, not one "\r\n".
        redraw,
    };
    struct Options {
        CarriageReturn carriage_return = CarriageReturn::newline;
        bool tabs_as_spaces = false;
    };
    TerminalFilter() = default;
    explicit TerminalFilter(Options options) : m_options(options) {}

    /// Appends the text of `chunk` to `out`. A chunk may end anywhere (in a sequence, in a
    /// character): what it leaves unfinished waits for the next one.
    void feed(std::string_view chunk, std::string& out);
    /// The stream ended: appends what is still held (a pending line end; an unfinished character
    /// as U+FFFD) and drops an unfinished sequence. The filter can then take a new stream.
    void finish(std::string& out);

private:
    enum class State : std::uint8_t { ground, escape, escape_intermediate, csi, control_string, control_string_escape };
    void decode(unsigned char byte, std::string& out);
    void step(char32_t cp, std::string& out);
    void ground(char32_t cp, std::string& out);
    void begin(State state);

    Options m_options;
    State m_state = State::ground;
    size_t m_length = 0;  // characters of the sequence so far
    // The UTF-8 character being read: bytes still to come, the code point so far, and the range
    // the next byte must lie in (well-formed UTF-8 only: no overlong forms, no surrogates).
    int m_need = 0;
    char32_t m_cp = 0;
    unsigned char m_low = 0x80;
    unsigned char m_high = 0xbf;
    bool m_cr_pending = false;  // newline mode: a '\r' whose '\n' may still come
    bool m_after_cr = false;    // redraw mode: the last thing passed was a '\r'...
    bool m_cr_escaped = false;  // ...and a sequence has been stripped since
};

/// `text` through a TerminalFilter (line ends as '\n', tabs kept): what may be printed on a
/// terminal of text that came from elsewhere.
[[nodiscard]] std::string printable_text(std::string_view text);

/// `text` through a TerminalFilter with `options`, whole: what a child printing `text` shows
/// through such a filter (a secret's value as the mask after the filter must look for it).
[[nodiscard]] std::string filtered_text(std::string_view text, TerminalFilter::Options options);

}  // namespace bootstrap::core
