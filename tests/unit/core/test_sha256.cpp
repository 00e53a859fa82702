#include <catch2/catch.hpp>

#include <string>

#include "core/sha256.hpp"

using namespace bootstrap;

TEST_CASE("is_sha256_hex takes 64 lower-case hex digits only") {
    const std::string digest = core::sha256_hex("abc");
    CHECK(core::is_sha256_hex(digest));
    CHECK_FALSE(core::is_sha256_hex(digest.substr(1)));
    CHECK_FALSE(core::is_sha256_hex(digest + "0"));
    std::string upper = digest;
    upper[0] = 'A';
    upper[1] = 'B';
    CHECK_FALSE(core::is_sha256_hex(upper));
    CHECK_FALSE(core::is_sha256_hex(std::string(63, 'a') + "g"));
    CHECK_FALSE(core::is_sha256_hex(""));
}
