// Children's output for a terminal: escapes removed, widths in characters, the live tail the
// status line shows.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/terminal_text.hpp"

using namespace bootstrap;

TEST_CASE("plain text drops escapes and control characters, a carriage return ends a line") {
    CHECK(core::plain_text(
              "\x1b[1m\x1b[31merror\x1b[39m\x1b[0m:\tx\r\ny\rz\x07\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\") ==
          "error: x\ny\nzlink");
    CHECK(core::plain_text("ok\x1b[3") == "ok");  // an unfinished sequence at the end
}

TEST_CASE("the output tail follows chunks, lines and progress redraws") {
    core::OutputTail tail;
    CHECK(tail.last_line().empty());
    tail.feed("Resolved 5 packages in 0.3s\nDownloa");
    CHECK(tail.last_line() == "Downloa");  // the unfinished line has text: it is the news
    tail.feed("ding torch (800.1MiB)\n\n   \n");
    CHECK(tail.last_line() == "Downloading torch (800.1MiB)");  // blank lines do not hide it
    CHECK(tail.lines() == 4);
    tail.feed("\x1b[2K 10%\r\x1b[2K 5");
    tail.feed("0%\r\x1b");
    CHECK(tail.last_line() == "50%");
    tail.feed("[2K");
    CHECK(tail.last_line() == "50%");
    CHECK(tail.bytes() == 84);
    tail.feed(std::string(20000, 'y'));  // a line without end keeps only its last bytes
    CHECK(tail.last_line().size() <= 8192);
    tail.reset();
    CHECK(tail.bytes() == 0);
    CHECK(tail.last_line().empty());
}

TEST_CASE("cut to columns counts characters, not bytes") {
    CHECK(core::cut_to_columns("abcdef", 6) == "abcdef");
    CHECK(core::cut_to_columns("abcdefg", 6) == "abcde…");
    CHECK(core::cut_to_columns("× ╰─▶ x", 7) == "× ╰─▶ x");
    CHECK(core::cut_to_columns("× ╰─▶ xy", 7) == "× ╰─▶ …");
    CHECK(core::cut_to_columns("abc", 0).empty());
    CHECK(core::format_bytes(999) == "999 B");
    CHECK(core::format_bytes(1234) == "1.2 KB");
    CHECK(core::format_bytes(45'600'000) == "45.6 MB");
}

TEST_CASE("a terminal transcript keeps each line as last drawn and hears every segment") {
    std::vector<std::string> segments;
    core::TerminalTranscript t([&](std::string_view s) { segments.emplace_back(s); });
    std::string log;
    log += t.feed("\x1b[2mUsing Python\x1b[0m\r\n\x1b[37m⠙\x1b[0m Resolving...   \r\x1b[2K");
    log += t.feed("Resolved 3 packages\r");  // "\r\n" cut in two by the chunks
    log += t.feed("\nbar 0%\r\x1b[2Kbar 5");
    log += t.feed("0%\x1b[");  // an escape cut in two
    log += t.feed("1A\rdone\n");
    log += t.feed("tab\there\x07, no newline");
    log += t.finish();
    CHECK(log == "Using Python\nResolved 3 packages\ndone\ntab here, no newline\n");
    CHECK(segments == std::vector<std::string>{"Using Python", "⠙ Resolving...   ", "Resolved 3 packages", "bar 0%",
                                               "bar 50%", "done", "tab here, no newline"});
    CHECK(t.finish().empty());
}

TEST_CASE("a terminal transcript keeps a redrawn line left without its newline, and bounds a long one") {
    core::TerminalTranscript t;
    CHECK(t.feed("50%\r100%\r").empty());
    CHECK(t.finish() == "100%\n");
    core::TerminalTranscript endless;
    std::string out = endless.feed(std::string(200000, 'x'));
    // Kept as lines of 64 KiB, not held without bound; nothing of it is lost.
    CHECK(out.size() == 3 * (65536 + 1));
    CHECK(out.find_first_not_of("x\n") == std::string::npos);
    CHECK(endless.finish() == std::string(200000 - 3 * 65536, 'x') + "\n");
}

TEST_CASE("a terminal transcript wraps full rows: a padded one was drawn, text is kept") {
    std::vector<std::string> segments;
    core::TerminalTranscript t([&](std::string_view s) { segments.emplace_back(s); }, 10);
    // A spinner padded to the width, and uv's error after it without a newline: on the terminal
    // the error starts the next row.
    std::string log = t.feed("\x1b[2m⠙ Wait    \x1b[0m\x1b[1merror\x1b[0m: no\n");
    CHECK(log == "error: no\n");
    CHECK(segments == std::vector<std::string>{"⠙ Wait    ", "error: no"});
    // A long line of text is kept, as rows of the width.
    CHECK(t.feed("0123456789abcde\n") == "0123456789\nabcde\n");
    // A full row then '\r': the row is redrawn, not wrapped.
    CHECK(t.feed("x         \rdone\n") == "done\n");
}
