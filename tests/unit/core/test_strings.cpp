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

TEST_CASE("parse_int takes a whole decimal number that fits, and never throws") {
    CHECK(parse_int<int>("42") == 42);
    CHECK(parse_int<int>("-7") == -7);
    CHECK(parse_int<long long>("9223372036854775807") == 9223372036854775807LL);
    CHECK_FALSE(parse_int<int>(""));
    CHECK_FALSE(parse_int<int>("+1"));
    CHECK_FALSE(parse_int<int>(" 1"));
    CHECK_FALSE(parse_int<int>("1 "));
    CHECK_FALSE(parse_int<int>("12abc"));
    CHECK_FALSE(parse_int<unsigned>("-1"));
    CHECK_FALSE(parse_int<int>("2147483648"));
    CHECK_FALSE(parse_int<unsigned long long>(std::string(400, '9')));  // std::stoull throws
}

TEST_CASE("parse_leading_int reads the digits a text starts with") {
    CHECK(parse_leading_int<long>("30abc") == 30);
    CHECK(parse_leading_int<int>("4") == 4);
    CHECK(parse_leading_int<long>("12345\n") == 12345);
    CHECK_FALSE(parse_leading_int<int>("x1"));
    CHECK_FALSE(parse_leading_int<int>(""));
    CHECK_FALSE(parse_leading_int<int>(std::string(400, '1') + "x"));
}

TEST_CASE("parse_double takes a whole finite number") {
    CHECK(parse_double("412.3") == 412.3);
    CHECK(parse_double("1e3") == 1000.0);
    CHECK(parse_double("-2") == -2.0);
    CHECK(parse_double("7.") == 7.0);
    CHECK_FALSE(parse_double(""));
    CHECK_FALSE(parse_double("1.5x"));
    CHECK_FALSE(parse_double("inf"));
    CHECK_FALSE(parse_double("nan"));
    CHECK_FALSE(parse_double("1e999"));
    CHECK_FALSE(parse_double(std::string(400, '1')));  // std::stod throws std::out_of_range
}

TEST_CASE("clip keeps short text and cuts long text with its length") {
    CHECK(clip("abc", 5) == "abc");
    CHECK(clip(std::string(10, 'x'), 4) == "xxxx... (10 characters)");
}

TEST_CASE("after_prefix and consume_prefix take a named prefix off") {
    using bootstrap::core::after_prefix;
    using bootstrap::core::consume_prefix;
    CHECK(after_prefix("marker.os_name", "marker.") == std::optional<std::string_view>("os_name"));
    CHECK(after_prefix("marker.", "marker.") == std::optional<std::string_view>(""));
    CHECK_FALSE(after_prefix("markers", "marker."));
    CHECK_FALSE(after_prefix("", "x"));
    std::string_view s = "sm_90a";
    CHECK(consume_prefix(s, "sm_"));
    CHECK(s == "90a");
    CHECK_FALSE(consume_prefix(s, "sm_"));
    CHECK(s == "90a");
}

TEST_CASE("percent-decoding never throws and keeps bad escapes as written") {
    CHECK(percent_decode("a%2Bb%2b") == "a+b+");
    CHECK(percent_decode("%") == "%");
    CHECK(percent_decode("x%2") == "x%2");
    CHECK(percent_decode("%zz%g1%1g") == "%zz%g1%1g");
    CHECK(percent_decode("%-1%+1% 1") == "%-1%+1% 1");
    CHECK(percent_decode("%25%41") == "%A");
    CHECK(percent_decode("") == "");
}
