// The installer's own cause line for the error headline (uv in its plain and its drawn form,
// pip). Escapes, widths and the live tail: tests/unit/core/test_terminal_text.cpp.
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
    CHECK(steps::installer_cause("\x1b[2mUsing Python 3.11.7 environment at: v\x1b[0m\r\n"
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
    CHECK(steps::installer_cause("Looking in indexes: http://127.0.0.1:1/main/simple\n"
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

namespace {

/// An install step whose child (a fake) prints `output` to the step log and exits 1.
Result<steps::Outcome> fail_with(const std::string& kind, const std::string& program, const std::string& output,
                                 const fs::path& log) {
    steps::ResolvedStep step;
    step.id = "missing";
    step.kind = kind;
    if (kind == "install") step.spec = steps::InstallSpec{};
    if (kind == "run") step.spec = steps::RunSpec{};
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
    auto r = fail_with("install", "uv", k_uv_no_solution, log);
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
    auto bare = fail_with("install", "uv", "Killed\n", log);
    REQUIRE_FALSE(bare);
    CHECK(bare.error().message == "step 'missing' (install) failed: uv exit code 1");

    // A run step's own program is not read as an installer.
    auto run = fail_with("run", "uv", k_uv_no_solution, log);
    REQUIRE_FALSE(run);
    CHECK(run.error().message == "step 'missing' (run) failed: uv exit code 1");
}

TEST_CASE("failure class: what uv and pip say decides whether another attempt can help") {
    using steps::FailureKind;
    auto kind = [](const char* text) { return steps::classify_installer_output(text).kind; };
    // uv 0.13: an impossible resolution, a project the index does not have (403 included).
    CHECK(kind(k_uv_no_solution) == FailureKind::permanent);
    CHECK(steps::classify_installer_output(k_uv_no_solution).why == "the requirements have no solution");
    CHECK(kind("error: No solution found when resolving dependencies\n  cause: Because demo-utils was not found "
               "in the package registry and you require demo-utils, we can conclude that your requirements are "
               "unsatisfiable.\n\nhint: An index (http://127.0.0.1:1/main/simple) returned a 403 Forbidden "
               "error.\n") == FailureKind::permanent);
    CHECK(kind("error: Failed to read `x.whl`\n  cause: Hash mismatch for `x==1.0`\n") == FailureKind::permanent);
    CHECK(kind("error: The lockfile at `uv.lock` needs to be updated, but `--locked` was provided.\n") ==
          FailureKind::permanent);
    // uv: a server error, a timeout, a reset: worth another attempt.
    CHECK(kind("error: Failed to fetch: http://127.0.0.1:1/main/simple/demo-utils/\n  cause: HTTP status server "
               "error (503 Service Unavailable) for url (http://127.0.0.1:1/main/simple/demo-utils/)\n") ==
          FailureKind::transient);
    CHECK(kind("error: Failed to fetch: http://h/simple/x/\n  cause: error sending request for url (http://h/)\n"
               "  cause: operation timed out\n") == FailureKind::transient);
    CHECK(kind("  cause: Connection reset by peer (os error 104)\n") == FailureKind::transient);
    // Network trouble wins over a resolver verdict reached without the index.
    CHECK(kind("error: No solution found when resolving dependencies\n  cause: error sending request for url\n") ==
          FailureKind::transient);
    // pip.
    CHECK(kind("ERROR: Could not find a version that satisfies the requirement demo-core>=99 (from versions: "
               "1.0.0)\nERROR: No matching distribution found for demo-core>=99\n") == FailureKind::permanent);
    CHECK(kind("ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/\n") == FailureKind::permanent);
    CHECK(kind("ERROR: HTTP error 404 while getting https://h/x.whl\n404 Client Error: Not Found for url\n") ==
          FailureKind::permanent);
    CHECK(kind("pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='h', port=443): Read "
               "timed out.\n") == FailureKind::transient);
    CHECK(kind("ERROR: 503 Server Error: Service Unavailable for url: https://h/simple/x/\n") ==
          FailureKind::transient);
    // Anything else (a compiler's error, an unknown message) is not known either way.
    CHECK(kind("error: command 'g++' failed with exit code 1\n") == FailureKind::unknown);
    CHECK(kind("") == FailureKind::unknown);
}
