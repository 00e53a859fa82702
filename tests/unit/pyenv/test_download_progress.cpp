// Reading an installer's progress bars (as its terminal output's segments): uv's frames of
// bars, pip's one bar per file, sizes in both units, and lines that only look like bars.
#include <catch2/catch.hpp>

#include <string>

#include "pyenv/download_progress.hpp"

using namespace bootstrap;

namespace {
const std::string k_uv_bar = "------------------------------";
const std::string k_pip_bar = "━━━━━━━━━━━━━━━━━━━━━━━━━━╸━━━━━━━━━━━━";

std::string uv_frame(int ready, int total, const std::string& bars) {
    return "⠙ Preparing packages... (" + std::to_string(ready) + "/" + std::to_string(total) + ")     " + bars;
}
std::string uv_bar(const std::string& name, const std::string& done, const std::string& total) {
    return name + "               " + k_uv_bar + " " + done + "/" + total + "        ";
}
}  // namespace

TEST_CASE("sizes in uv's and pip's units") {
    CHECK(pyenv::parse_size("0", "B") == 0u);
    CHECK(pyenv::parse_size("16.00", "KiB") == 16384u);
    CHECK(pyenv::parse_size("5.90", "MiB") == 6186598u);
    CHECK(pyenv::parse_size("1.5", "GiB") == 1610612736u);
    CHECK(pyenv::parse_size("536.2", "kB") == 536200u);
    CHECK(pyenv::parse_size("16.3", "MB") == 16300000u);
    CHECK(pyenv::parse_size("512", "bytes") == 512u);
    CHECK_FALSE(pyenv::parse_size("5.90", "MiBs"));
    CHECK_FALSE(pyenv::parse_size("-1", "MB"));
    CHECK_FALSE(pyenv::parse_size("1e9", "MB"));
    CHECK_FALSE(pyenv::parse_size("", "MB"));
}

TEST_CASE("uv: a frame's bars give bytes, and a file whose bar left the frame is done") {
    pyenv::DownloadMeter m;
    CHECK_FALSE(m.feed("Resolved 3 packages in 153ms"));
    CHECK_FALSE(m.feed(uv_frame(0, 3, "")));
    CHECK(m.feed(uv_frame(0, 3, uv_bar("sympy", "16.00 KiB", "5.90 MiB"))));
    CHECK(m.progress().files == 1);
    CHECK(m.progress().done == 16384);
    CHECK(m.progress().current == "sympy");
    // Two bars in one frame (indicatif pads each line to the width, without a newline).
    CHECK(m.feed(uv_frame(0, 3, uv_bar("sympy", "1.00 MiB", "5.90 MiB") + uv_bar("numpy", "0 B", "15.58 MiB"))));
    CHECK(m.progress().files == 2);
    CHECK(m.progress().done == 1048576);
    CHECK(m.progress().current == "numpy");  // the largest still in flight
    // sympy's bar is gone from the next frame: it counts as whole once that frame is over.
    m.feed(uv_frame(1, 3, uv_bar("numpy", "2.00 MiB", "15.58 MiB")));
    m.feed(uv_frame(1, 3, uv_bar("numpy", "3.00 MiB", "15.58 MiB")));
    CHECK(m.progress().files_done == 1);
    CHECK(m.progress().done == 6186598 + 3145728);
    CHECK(m.progress().total == 6186598 + 16336814);
    // The same, with each bar on a line of its own (a newline between them).
    m.feed(uv_frame(1, 3, ""));
    m.feed(uv_bar("numpy", "4.00 MiB", "15.58 MiB"));
    CHECK(m.progress().files_done == 1);
    CHECK(m.feed("Prepared 3 packages in 2.10s"));
    CHECK(m.progress().files_done == 2);
    CHECK(m.progress().done == m.progress().total);
    CHECK(m.progress().current.empty());
    CHECK_FALSE(m.feed("░░░░░░░░░░░░░░░░░░░░ [2/3] numpy==2.1.3"));
    CHECK_FALSE(m.feed("Installed 3 packages in 22ms"));
}

TEST_CASE("pip: the Downloading line names the file and its size, its bar the bytes") {
    pyenv::DownloadMeter m;
    CHECK_FALSE(m.feed("Collecting numpy==2.1.3"));
    CHECK(m.feed("  Downloading numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.whl (16.3 MB)"));
    CHECK(m.progress().total == 16300000);
    CHECK(m.progress().current == "numpy");
    CHECK(m.feed("     " + k_pip_bar + " 11.3/16.3 MB 337.8 MB/s eta 0:00:01"));
    CHECK(m.progress().done == 11300000);
    // Without colour rich draws the rest of the bar as spaces: the numbers still count.
    CHECK(m.feed("     ━━━━━━━━━━━━━━━━━╸                   12.0/16.3 MB 300.1 MB/s eta 0:00:01"));
    CHECK(m.progress().done == 12000000);
    // The next file ends the one before.
    CHECK(m.feed("  Downloading https://example.org/f/mpmath-1.3.0-py3-none-any.whl (536 kB)"));
    CHECK(m.progress().files == 2);
    CHECK(m.progress().files_done == 1);
    CHECK(m.progress().done == 16300000);
    CHECK(m.progress().current == "mpmath");
    CHECK(m.feed("     " + k_pip_bar + " 536.2/536.2 kB 450.4 MB/s eta 0:00:00"));
    CHECK(m.progress().files_done == 2);
    CHECK(m.progress().done == 16300000 + 536200);
    m.feed("Installing collected packages: mpmath, numpy");
    CHECK(m.progress().done == m.progress().total);
}

TEST_CASE("pip: a wheel's METADATA fetched alone (PEP 658) is not a download") {
    pyenv::DownloadMeter m;
    CHECK_FALSE(m.feed("  Downloading demo_big-1.0.0-py3-none-any.whl.metadata (109 bytes)"));
    CHECK(m.progress().files == 0);
    // A big METADATA draws a bar of its own: it counts for nothing either.
    CHECK_FALSE(m.feed("     " + k_pip_bar + " 61.2/61.2 kB 1.2 MB/s eta 0:00:00"));
    CHECK(m.feed("  Downloading demo_big-1.0.0-py3-none-any.whl (401 kB)"));
    CHECK(m.progress().files == 1);
    CHECK(m.progress().total == 401000);
    CHECK(m.feed("     " + k_pip_bar + " 61.4/401.3 kB 81.8 kB/s eta 0:00:04"));
    CHECK(m.progress().done == 61400);
    CHECK(m.progress().total == 401300);
    // The next METADATA ends the wheel before it, as the next wheel would.
    CHECK(m.feed("  Downloading other-2.0-py3-none-any.whl.metadata (1.2 kB)"));
    CHECK(m.progress().files == 1);
    CHECK(m.progress().files_done == 1);
    CHECK(m.progress().done == m.progress().total);
}

TEST_CASE("lines that only look like progress change nothing") {
    pyenv::DownloadMeter m;
    CHECK_FALSE(m.feed("step 1/2 MB"));                       // no file is downloading
    CHECK_FALSE(m.feed("ratio 3/4 done"));                    // not a size
    CHECK_FALSE(m.feed("--------------------------------"));  // a rule, no numbers
    CHECK_FALSE(m.feed(k_uv_bar + " 1.00 MiB/5.90 MiB"));     // a bar without a name
    CHECK_FALSE(m.feed("a/b/c 1 MB/2 MB/3 MB"));
    CHECK(m.progress().files == 0);
}
