// Children's output: escapes removed, the installer's own cause line for the error headline
// (uv in its plain and its drawn form, pip), and the live tail the status line shows.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "steps/child_output.hpp"
#include "steps/executor.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

// uv 0.13, stderr a pipe (what bootstrap sees).
const char* k_uv_no_solution =
    "Using Python 3.11.7 environment at: /tmp/v\n"
    "error: No solution found when resolving dependencies\n"
    "  cause: Because nonexistent-pkg was not found in the package registry and you require "
    "nonexistent-pkg, we can conclude that your requirements are unsatisfiable.\n";

TEST_CASE("installer cause: uv's resolver explanation, in its plain and its drawn form") {
    CHECK(steps::installer_cause(k_uv_no_solution) ==
          "Because nonexistent-pkg was not found in the package registry and you require "
          "nonexistent-pkg, we can conclude that your requirements are unsatisfiable.");
    // Older uv, or a terminal: a miette diagram, wrapped, in colour.
    CHECK(steps::installer_cause(
              "\x1b[2mUsing Python 3.11.7 environment at: v\x1b[0m\r\n"
              "  \x1b[31m×\x1b[0m No solution found when resolving dependencies:\r\n"
              "  ╰─▶ Because nonexistent-pkg was not found in the package registry and you\r\n"
              "      require nonexistent-pkg, we can conclude that your requirements are\r\n"
              "      unsatisfiable.\r\n"
              "\r\n"
              "      hint: check the name\r\n") ==
          "Because nonexistent-pkg was not found in the package registry and you require "
          "nonexistent-pkg, we can conclude that your requirements are unsatisfiable.");
}

TEST_CASE("installer cause: uv's error with its chain of causes keeps the first and the root") {
    CHECK(steps::installer_cause("Using Python 3.11.7 environment at: v\n"
                                 "error: Request failed after 3 retries in 10.4s\n"
                                 "  cause: Failed to fetch: http://127.0.0.1:9/simple/x/\n"
                                 "  cause: error sending request for url (http://127.0.0.1:9/simple/x/)\n"
                                 "  cause: tcp connect error\n"
                                 "  cause: Connection refused (os error 111)\n") ==
          "Request failed after 3 retries in 10.4s: Connection refused (os error 111)");
    CHECK(steps::installer_cause("error: Failed to build `demo @ file:///src`\n"
                                 "  Caused by: The build backend returned an error\n"
                                 "  Caused by: Call to `setuptools.build_meta.build_wheel` failed (exit "
                                 "status: 1)\n\nhint: see above\n") ==
          "Failed to build `demo @ file:///src`: Call to `setuptools.build_meta.build_wheel` failed "
          "(exit status: 1)");
    CHECK(steps::installer_cause("error: Distribution not found at: file:///x.whl\n") ==
          "Distribution not found at: file:///x.whl");
}

TEST_CASE("installer cause: pip's first ERROR line, or its drawn diagnostic") {
    CHECK(steps::installer_cause(
              "Looking in indexes: http://127.0.0.1:1/main/simple\n"
              "ERROR: Could not find a version that satisfies the requirement nonexistent-pkg (from "
              "versions: none)\n"
              "ERROR: No matching distribution found for nonexistent-pkg\n") ==
          "Could not find a version that satisfies the requirement nonexistent-pkg (from versions: "
          "none)");
    CHECK(steps::installer_cause("  error: subprocess-exited-with-error\n"
                                 "  \n"
                                 "  × Getting requirements to build wheel did not run successfully.\n"
                                 "  │ exit code: 1\n"
                                 "  ╰─> [3 lines of output]\n"
                                 "      ModuleNotFoundError: No module named 'torch'\n"
                                 "      [end of output]\n"
                                 "error: subprocess-exited-with-error\n") ==
          "Getting requirements to build wheel did not run successfully.");
    CHECK(steps::installer_cause("Collecting x\nKilled\n").empty());
    CHECK(steps::installer_cause("").empty());
    // Cut to a headline's length.
    std::string long_cause = steps::installer_cause("ERROR: " + std::string(1000, 'x') + "\n");
    CHECK(long_cause == std::string(399, 'x') + "…");
}

TEST_CASE("plain text drops escapes and control characters, a carriage return ends a line") {
    CHECK(steps::plain_text("\x1b[1m\x1b[31merror\x1b[39m\x1b[0m:\tx\r\ny\rz\x07\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\") ==
          "error: x\ny\nzlink");
    CHECK(steps::plain_text("ok\x1b[3") == "ok");  // an unfinished sequence at the end
}

TEST_CASE("the output tail follows chunks, lines and progress redraws") {
    steps::OutputTail tail;
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
    CHECK(steps::cut_to_columns("abcdef", 6) == "abcdef");
    CHECK(steps::cut_to_columns("abcdefg", 6) == "abcde…");
    CHECK(steps::cut_to_columns("× ╰─▶ x", 7) == "× ╰─▶ x");
    CHECK(steps::cut_to_columns("× ╰─▶ xy", 7) == "× ╰─▶ …");
    CHECK(steps::cut_to_columns("abc", 0).empty());
    CHECK(steps::format_bytes(999) == "999 B");
    CHECK(steps::format_bytes(1234) == "1.2 KB");
    CHECK(steps::format_bytes(45'600'000) == "45.6 MB");
}

namespace {

/// An install step whose child (a fake) prints `output` to the step log and exits 1.
Result<steps::Outcome> fail_with(recipe::StepKind kind, const std::string& program, const std::string& output,
                                 const fs::path& log) {
    steps::ResolvedStep step;
    step.id = "missing";
    step.kind = kind;
    step.argv = {"/usr/bin/" + program, "pip", "install", "nonexistent-pkg"};
    steps::StepContext ctx;
    ctx.venv = "/nonexistent-venv";
    ctx.log_path = log;
    std::ofstream(log) << "$ earlier attempt\nERROR: an earlier attempt's error\n";
    ctx.run = [&](const exec::ProcessSpec& spec) -> Result<exec::ProcessResult> {
        std::ofstream(spec.log_path, std::ios::app) << output;
        exec::ProcessResult r;
        r.exit_code = 1;
        return r;
    };
    return steps::execute(step, ctx);
}

}  // namespace

TEST_CASE("a failed install is headed by the installer's cause, the detail keeps argv and log") {
    core::TempDir dir("bs-cause");
    fs::path log = dir.path() / "02-missing.log";
    auto r = fail_with(recipe::StepKind::install, "uv", k_uv_no_solution, log);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::step_failed);
    CHECK(r.error().message ==
          "step 'missing' (install) failed: Because nonexistent-pkg was not found in the package "
          "registry and you require nonexistent-pkg, we can conclude that your requirements are "
          "unsatisfiable. (uv exit code 1)");
    CHECK(r.error().detail.starts_with("command: /usr/bin/uv pip install nonexistent-pkg\n"));
    CHECK(r.error().detail.find("--- last lines of the log ---\n") != std::string::npos);
    CHECK(r.error().detail.ends_with("log: " + log.string()));

    // Without a cause line of its own, the exit status heads it as before.
    auto bare = fail_with(recipe::StepKind::install, "uv", "Killed\n", log);
    REQUIRE_FALSE(bare);
    CHECK(bare.error().message == "step 'missing' (install) failed: uv exit code 1");

    // A run step's own program is not read as an installer.
    auto run = fail_with(recipe::StepKind::run, "uv", k_uv_no_solution, log);
    REQUIRE_FALSE(run);
    CHECK(run.error().message == "step 'missing' (run) failed: uv exit code 1");
}
