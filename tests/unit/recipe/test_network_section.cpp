#include <catch2/catch.hpp>

#include "recipe/recipe.hpp"
#include "recipe_text.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;
using bootstrap::recipe::testing::k_head;
using bootstrap::recipe::testing::problems;

namespace {

uint64_t max_download(const std::string& value) {
    auto r = steps::parse_recipe(k_head + "[network]\nmax_download = " + value + "\n", "r.toml");
    REQUIRE(r);
    return r->network.max_download;
}

}  // namespace

TEST_CASE("[network] max_download: 4 GiB unless given, as bytes or with a unit") {
    auto r = steps::parse_recipe(k_head, "r.toml");
    REQUIRE(r);
    CHECK(r->network.max_download == (4ull << 30));
    CHECK(max_download("1048576") == 1048576u);
    CHECK(max_download("\"2GiB\"") == (2ull << 30));
    CHECK(max_download("\"500 MB\"") == 500000000u);
    CHECK(max_download("\"64KiB\"") == 65536u);
}

TEST_CASE("[network] max_download: a wrong value is an error at its place") {
    CHECK(problems(k_head + "[network]\nmax_download = \"2 parsecs\"\n") ==
          "r.toml:7:16: 'network.max_download' must be a size such as \"2GiB\", \"500MB\" or a "
          "number of bytes, not \"2 parsecs\"");
    CHECK(problems(k_head + "[network]\nmax_download = -5\n") ==
          "r.toml:7:16: 'network.max_download' must be a size such as \"2GiB\", \"500MB\" or a "
          "number of bytes, not -5");
    CHECK(problems(k_head + "[network]\nmax_download = 0\n") ==
          "r.toml:7:16: 'network.max_download' must be more than 0 bytes");
    CHECK(problems(k_head + "[network]\nmax_download = 1.5\n") ==
          "r.toml:7:16: 'network.max_download' must be a size (\"2GiB\", \"500MB\" or a number of "
          "bytes), not a float");
    CHECK(problems(k_head + "[network]\nmax_dowload = \"1GiB\"\n") ==
          "r.toml:7:1: unknown key 'max_dowload' in [network] (did you mean 'max_download'?)");
}
