// Children's output for a terminal: escapes removed, widths in characters, the live tail the
// status line shows.
#include <catch2/catch.hpp>

#include <string>

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
