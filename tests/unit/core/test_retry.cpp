#include <catch2/catch.hpp>

#include "core/retry.hpp"

using namespace bootstrap;

TEST_CASE("retry_delay: doubling backoff capped at 30 s, Retry-After capped") {
    CHECK(core::retry_delay(0.5, 1).seconds == Approx(0.5));
    CHECK(core::retry_delay(0.5, 2).seconds == Approx(1.0));
    CHECK(core::retry_delay(0.5, 4).seconds == Approx(4.0));
    CHECK(core::retry_delay(0.5, 10).seconds == Approx(core::k_max_backoff));
    CHECK(core::retry_delay(0.5, 1000).seconds == Approx(core::k_max_backoff));  // no overflow
    CHECK(core::retry_delay(0.5, 0).seconds == Approx(0.5));

    auto honoured = core::retry_delay(0.5, 3, 7.0);
    CHECK(honoured.seconds == Approx(7.0));
    CHECK_FALSE(honoured.asked);
    CHECK(honoured.note().empty());

    auto capped = core::retry_delay(0.5, 1, 99999.0);
    CHECK(capped.seconds == Approx(core::k_max_retry_after));
    REQUIRE(capped.asked);
    CHECK(capped.note() == "the server's Retry-After of 99999 s was capped at 300 s");
    CHECK(core::retry_delay(0.5, 1, 60.0, 10).seconds == Approx(10));
}
