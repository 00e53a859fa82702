#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/fs.hpp"
#include "core/log.hpp"

namespace fs = std::filesystem;
using namespace bootstrap::core;

namespace {

struct RunLog {
    RunLog() { log::begin_run(); }
    ~RunLog() { log::end_run(); }
};

}  // namespace

TEST_CASE("a run's log is kept in memory until the run persists it, then written whole", "[log]") {
    TempDir dir("log");
    const fs::path file = dir.path() / "logs" / "run-1" / "bootstrap.log";
    {
        RunLog run;
        log::debug("decided {}: {}", "tools", "up to date");
        CHECK_FALSE(fs::exists(file));  // a no-op run writes nothing
        REQUIRE(log::persist_run_log(file));
        CHECK(log::run_log_path() == file);
        log::debug("pid {} started", 42);
        auto text = read_file(file);
        REQUIRE(text);
        CHECK(text->find("debug decided tools: up to date\n") != std::string::npos);
        CHECK(text->find("debug pid 42 started\n") != std::string::npos);
        CHECK(text->find("decided") < text->find("pid 42"));
    }
    CHECK(log::run_log_path().empty());
    log::debug("after the run");  // goes nowhere: the console is at warn
    auto text = read_file(file);
    REQUIRE(text);
    CHECK(text->find("after the run") == std::string::npos);
}

TEST_CASE("a run that never persists its log leaves no file", "[log]") {
    TempDir dir("log");
    {
        RunLog run;
        log::debug("nothing changed");
    }
    CHECK(fs::is_empty(dir.path()));
    CHECK_FALSE(log::enabled(log::Level::debug));  // no run, console at warn
}

TEST_CASE("log lines never carry secrets", "[log]") {
    TempDir dir("log");
    const fs::path file = dir.path() / "bootstrap.log";
    log::set_secret_names({"MY_PRIVATE_THING"});
    {
        RunLog run;
        REQUIRE(log::persist_run_log(file));
        log::debug("argv: uv pip install --index-url https://user:hunter2@example.invalid/simple x");
        log::debug("env: {} {} {}", log::shown_env("HF_TOKEN", "hf_abcdef"),
                   log::shown_env("MY_PRIVATE_THING", "plain-value"),
                   log::shown_env("PIP_INDEX_URL", "https://u:pw123@example.invalid/simple"));
    }
    log::set_secret_names({});
    auto text = read_file(file);
    REQUIRE(text);
    for (const char* secret : {"hunter2", "hf_abcdef", "plain-value", "pw123"}) {
        INFO(secret);
        CHECK(text->find(secret) == std::string::npos);
    }
    CHECK(text->find("https://user:***@example.invalid/simple") != std::string::npos);
    CHECK(text->find("HF_TOKEN=***") != std::string::npos);
    CHECK(text->find("MY_PRIVATE_THING=***") != std::string::npos);
}

TEST_CASE("console level: -v, -vv and BOOTSTRAP_LOG", "[log]") {
    ::unsetenv("BOOTSTRAP_LOG");
    CHECK(log::configure_console(0).empty());
    CHECK(log::console_level() == log::Level::warn);
    CHECK(log::configure_console(1).empty());
    CHECK(log::console_level() == log::Level::info);
    CHECK(log::configure_console(2).empty());
    CHECK(log::console_level() == log::Level::debug);
    ::setenv("BOOTSTRAP_LOG", "error", 1);
    CHECK(log::configure_console(2).empty());
    CHECK(log::console_level() == log::Level::error);
    ::setenv("BOOTSTRAP_LOG", "loud", 1);
    CHECK(log::configure_console(1) ==
          "BOOTSTRAP_LOG=loud is not a log level (trace, debug, info, warn, error, off); using info");
    CHECK(log::console_level() == log::Level::info);
    ::unsetenv("BOOTSTRAP_LOG");
    (void)log::configure_console(0);
    CHECK_FALSE(log::parse_level("").has_value());
    CHECK(log::parse_level("trace") == log::Level::trace);
}
