// A child's hostile output against the terminal filter (issue 41, items 4 and 5): no escape or
// control reaches what we print or keep, an unfinished sequence cannot swallow the rest, and the
// work is linear in the output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <ctime>
#include <functional>
#include <string>

#include "core/redact.hpp"
#include "core/terminal_filter.hpp"
#include "core/terminal_text.hpp"

using namespace bootstrap;
using core::TerminalFilter;

namespace {

std::string filtered(std::string_view text, TerminalFilter::Options options = {}) {
    TerminalFilter filter(options);
    std::string out;
    filter.feed(text, out);
    filter.finish(out);
    return out;
}

std::string byte_by_byte(std::string_view text, TerminalFilter::Options options = {}) {
    TerminalFilter filter(options);
    std::string out;
    for (char c : text) filter.feed(std::string_view(&c, 1), out);
    filter.finish(out);
    return out;
}

/// CPU seconds `work` takes, the best of five: on a loaded machine the wall clock measures the
/// other processes too, and a run is slowed by them (caches, migrations), never sped up.
double best_seconds(const std::function<void()>& work) {
    auto cpu_now = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    double best = 1e9;
    for (int i = 0; i < 5; ++i) {
        const double start = cpu_now();
        work();
        best = std::min(best, cpu_now() - start);
    }
    return best;
}

/// `piece` repeated to about 4 KiB.
std::string many(std::string_view piece) {
    std::string out;
    while (out.size() + piece.size() <= 4096) out += piece;
    return out;
}

/// A child's output as a pipe delivers it: `head`, then `chunk` `count` times (made as it goes,
/// so that what is measured is the code's work, not the caches' size).
template <typename Feed>
void stream(std::string_view head, std::string_view chunk, size_t count, Feed&& feed) {
    if (!head.empty()) feed(head);
    for (size_t i = 0; i < count; ++i) feed(chunk);
}

// The attacks: OSC 52 (clipboard write), OSC 0 (title), CSI 2J, C1 CSI as UTF-8 and as
// a byte, DCS, an 8-bit OSC ended by an 8-bit ST, a charset designation, BEL, backspace, DEL.
const std::string k_hostile =
    "a\x1b]52;c;cm0gLXJmIH4=\x07"
    "b\x1b]0;pwned\x1b\\"
    "c\x1b[2J\x1b[H"
    "d\xc2\x9b"
    "2Je\x9b"
    "31mf\x1bP1$r0m\x1b\\"
    "g\xc2\x9d"
    "0;t\xc2\x9ch\x1b(Bi\x07\x08\x7fj\n";

}  // namespace

TEST_CASE("escape sequences and C0 and C1 controls never pass the filter") {
    CHECK(filtered(k_hostile) == "abcdefghij\n");
    CHECK(byte_by_byte(k_hostile) == "abcdefghij\n");  // however the chunks fall
    CHECK(core::plain_text(k_hostile) == "abcdefghij\n");
    core::TerminalTranscript transcript;
    std::string lines = transcript.feed(k_hostile);
    lines += transcript.finish();
    CHECK(lines == "abcdefghij\n");
    core::OutputTail tail;
    tail.feed(k_hostile);
    CHECK(tail.last_line() == "abcdefghij");
}

TEST_CASE("text passes as it was (UTF-8, tabs, line ends), what is not UTF-8 becomes U+FFFD") {
    CHECK(filtered("naïve … 日本 𝄞\tx\r\ny\rz\n") == "naïve … 日本 𝄞\tx\ny\nz\n");
    CHECK(filtered("tab\there", {TerminalFilter::CarriageReturn::newline, true}) == "tab here");
    // A lone continuation byte, an overlong ESC, a surrogate, a cut character, a byte 0xff.
    // (0x80 after a broken sequence is a C1 control, PAD: dropped.)
    CHECK(filtered("a\xa9"
                   "b\xc0\xaf"
                   "c\xed\xa0\x80"
                   "d\xe2\x80"
                   "e\xff") ==
          "a\xef\xbf\xbd"
          "b\xef\xbf\xbd\xef\xbf\xbd"
          "c\xef\xbf\xbd\xef\xbf\xbd"
          "d\xef\xbf\xbd"
          "e\xef\xbf\xbd");
    CHECK(filtered("end\xe2\x80") == "end\xef\xbf\xbd");  // cut by the end of the stream
    // Redraws for a transcript: '\r' passes ("\r\n" too); a '\r', then an erased line, then '\n'
    // is a redraw and an empty line, as the terminal showed it: "\r\r\n".
    const TerminalFilter::Options redraw{TerminalFilter::CarriageReturn::redraw, false};
    CHECK(filtered("a\r\nb\rc\r\x1b[2K\nd\r", redraw) == "a\r\nb\rc\r\r\nd\r");
    CHECK(filtered(filtered("a\r\x1b[2K\n", redraw), redraw) == "a\r\r\n");  // twice: the same
}

TEST_CASE("an unterminated control string ends at the line or at its bound, never swallows the rest") {
    // A title never spans lines: the next line is text again.
    CHECK(filtered("x\x1b]0;title without end\nnext line\n") == "x\nnext line\n");
    CHECK(core::plain_text("x\x1b]52;c;AAAA\nkept\n") == "x\nkept\n");
    // Without a line end, past k_max_escape characters it is abandoned: the rest is text.
    std::string text = "\x1b]" + std::string(core::k_max_escape + 100, 'A');
    std::string out = filtered(text);
    CHECK(out.size() >= 90);
    CHECK(out.size() <= 101);
    CHECK(out.find_first_not_of('A') == std::string::npos);
    // A CSI with endless parameters, too.
    CHECK(filtered("\x1b[" + std::string(core::k_max_escape + 10, '1') + "m") == std::string(10, '1') + "m");
}

TEST_CASE("an unterminated escape costs time linear in the output, and what follows it is kept") {
    // The measures: 20 MiB after "ESC ]" on the pty took 44 s (each chunk rescanned
    // everything after it) and was dropped from the log. Here 4 MB and 40 MB.
    const std::string_view line = "line of output ..........\n";
    const std::string lines = many(line);
    size_t kept = 0;
    std::string last;
    auto transcribe = [&](size_t chunks) {
        return [&, chunks] {
            core::TerminalTranscript transcript;
            kept = 0;
            stream("\x1b]0;never ended", lines, chunks, [&](std::string_view chunk) {
                last = transcript.feed(chunk);
                kept += last.size();
            });
            kept += transcript.finish().size();
        };
    };
    const double t1 = best_seconds(transcribe(1024));
    const double t10 = best_seconds(transcribe(10240));
    // All of it, but the first line's text: the title swallowed it, and its line end ended it.
    CHECK(kept == 10240 * lines.size() - (line.size() - 1));
    CHECK(last.ends_with("line of output ..........\n"));
    INFO("1x: " << t1 << " s, 10x: " << t10 << " s");
    CHECK(t10 <= 12 * std::max(t1, 0.001));
}

TEST_CASE("a line that never ends costs time linear in its length, and little memory") {
    const std::string xs(4096, 'x');
    auto follow = [&](size_t chunks) {
        return [&, chunks] {
            core::OutputTail tail;
            stream("\x1b]0;", xs, chunks, [&](std::string_view chunk) { tail.feed(chunk); });
            CHECK(tail.last_line().size() <= 8192);
            CHECK(tail.bytes() == 4 + chunks * xs.size());
        };
    };
    const double t1 = best_seconds(follow(1024));
    const double t10 = best_seconds(follow(10240));
    INFO("1x: " << t1 << " s, 10x: " << t10 << " s");
    CHECK(t10 <= 12 * std::max(t1, 0.001));
}

TEST_CASE("masking secrets costs time linear in the output") {
    const std::string text = many("sup\x1b[0mer-secret-value and super-secret-valu ");
    auto mask = [&](size_t chunks) {
        return [&, chunks] {
            core::SecretMask m({"super-secret-value", "super-secret-value-longer"});
            TerminalFilter filter;
            size_t shown = 0;
            stream("", text, chunks, [&](std::string_view chunk) {
                std::string plain;
                filter.feed(chunk, plain);
                const std::string out = m.feed(plain);
                CHECK(out.find("super-secret-value") == std::string::npos);
                shown += out.size();
            });
            CHECK(shown > chunks * text.size() / 2);
        };
    };
    const double t1 = best_seconds(mask(1024));
    const double t10 = best_seconds(mask(10240));
    INFO("1x: " << t1 << " s, 10x: " << t10 << " s");
    CHECK(t10 <= 12 * std::max(t1, 0.001));
}
