#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/sha256.hpp"

using namespace bootstrap;

namespace {

/// SOURCE_DATE_EPOCH set (or unset, for nullptr) for one scope, restored after.
struct EpochEnv {
    std::optional<std::string> saved;
    explicit EpochEnv(const char* value) {
        if (const char* old = std::getenv("SOURCE_DATE_EPOCH")) saved = old;
        if (value) ::setenv("SOURCE_DATE_EPOCH", value, 1);
        else ::unsetenv("SOURCE_DATE_EPOCH");
    }
    ~EpochEnv() {
        if (saved) ::setenv("SOURCE_DATE_EPOCH", saved->c_str(), 1);
        else ::unsetenv("SOURCE_DATE_EPOCH");
    }
};

}  // namespace

TEST_CASE("SOURCE_DATE_EPOCH: unset, a number, or a clear error") {
    auto unset = core::parse_source_date_epoch(nullptr);
    REQUIRE(unset);
    CHECK_FALSE(unset->has_value());
    auto empty = core::parse_source_date_epoch("");
    REQUIRE(empty);
    CHECK_FALSE(empty->has_value());
    auto zero = core::parse_source_date_epoch("0");
    REQUIRE(zero);
    CHECK(**zero == 0);
    auto some = core::parse_source_date_epoch("1700000000");
    REQUIRE(some);
    CHECK(**some == 1700000000);
    auto last = core::parse_source_date_epoch("253402300799");
    REQUIRE(last);
    CHECK(core::format_utc(**last, "%Y-%m-%dT%H:%M:%SZ") == "9999-12-31T23:59:59Z");
    for (const char* bad : {"yesterday", "-5", "17e8", "12 ", "0x10", "253402300800"}) {
        INFO(bad);
        auto r = core::parse_source_date_epoch(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::usage);
        CHECK(r.error().message == fmt::format("SOURCE_DATE_EPOCH is not a number of seconds since 1970: '{}'", bad));
    }
}

TEST_CASE("format_utc formats seconds since 1970 in UTC") {
    CHECK(core::format_utc(0, "%Y-%m-%dT%H:%M:%SZ") == "1970-01-01T00:00:00Z");
    CHECK(core::format_utc(1700000000, "%Y%m%dT%H%M%SZ") == "20231114T221320Z");
}

TEST_CASE("under SOURCE_DATE_EPOCH, times and run ids are a function of the epoch and the seed") {
    core::TempDir dir("bs-clock");
    EpochEnv env("1700000000");
    CHECK(core::utc_iso8601() == "2023-11-14T22:13:20Z");
    const std::string expected = "20231114T221320Z-" + core::sha256_hex("recipe digest").substr(0, 8);
    const auto logs = dir.path() / "logs";
    CHECK(core::new_run_id("recipe digest", logs) == expected);
    CHECK(core::new_run_id("recipe digest", logs) == expected);  // the same inputs, the same id
    CHECK(core::new_run_id("another recipe", logs) != expected);
    // Run ids name log directories: a taken one is not given again.
    REQUIRE(core::create_directories(logs / expected));
    CHECK(core::new_run_id("recipe digest", logs) == expected + ".2");
    REQUIRE(core::create_directories(logs / (expected + ".2")));
    CHECK(core::new_run_id("recipe digest", logs) == expected + ".3");
}

TEST_CASE("without SOURCE_DATE_EPOCH, times are now and run ids name the process") {
    EpochEnv env(nullptr);
    const auto id = core::new_run_id("recipe digest", {});
    CHECK(id.ends_with("-" + std::to_string(::getpid())));
    CHECK(id.substr(0, 4) != "2023");
    CHECK(core::utc_iso8601().substr(0, 4) == id.substr(0, 4));
}

TEST_CASE("a malformed SOURCE_DATE_EPOCH is reported, and the clock does not use it") {
    EpochEnv env("soon");
    auto r = core::source_date_epoch();
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("'soon'") != std::string::npos);
    CHECK(core::utc_iso8601() != "1970-01-01T00:00:00Z");
}

TEST_CASE("a time an image build recorded reads as during the image build", "[clock]") {
    const std::optional<std::string> build = "1970-01-01T00:00:00Z";
    CHECK(core::shown_time("1970-01-01T00:00:00Z", build) == "during the image build");
    CHECK(core::shown_time("1970-01-01", build) == "during the image build");  // a date alone
    CHECK(core::shown_time("2026-12-05T11:00:00Z", build) == "2026-12-05T11:00:00Z");
    CHECK(core::shown_time("1970-01-01T00:00:00Z", std::nullopt) == "1970-01-01T00:00:00Z");  // no image
    CHECK(core::shown_time("", build).empty());
}
