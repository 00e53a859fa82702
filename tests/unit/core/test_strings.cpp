#include <catch2/catch.hpp>

#include "core/key.hpp"
#include "core/strings.hpp"

using namespace bootstrap::core;

TEST_CASE("closest_match suggests near typos only") {
    std::vector<std::string> keys{"packages", "index_url", "upgrade"};
    CHECK(closest_match("pakages", keys) == "packages");
    CHECK(closest_match("index-url", keys) == "index_url");
    CHECK(closest_match("zzzzzz", keys).empty());
}

TEST_CASE("last_lines keeps the tail") {
    CHECK(last_lines("a\nb\nc\n", 2) == "b\nc");
    CHECK(last_lines("a\nb\nc", 5) == "a\nb\nc");
    CHECK(last_lines("", 3).empty());
}

TEST_CASE("shell_quote quotes only when needed") {
    CHECK(shell_quote("torch==2.11.0+cu130") == "torch==2.11.0+cu130");
    CHECK(shell_quote("a b") == "'a b'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("") == "''");
}

TEST_CASE("key fields are delimited so concatenations differ") {
    KeyBuilder a("t-v1"), b("t-v1");
    a.add("x", "ab");
    a.add("y", "c");
    b.add("x", "a");
    b.add("y", "bc");
    CHECK(a.digest() != b.digest());
    CHECK(a.explain() == "scheme: t-v1\nx: ab\ny: c\n");
}
