// Hostile recipe text: what toml++ and std::regex must never see (they overflowed the stack on
// it), reported as recipe problems with file:line:col; and the pre-scan's reading of valid TOML.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/fs.hpp"
#include "recipe/prescan.hpp"
#include "recipe/recipe.hpp"
#include "recipe_text.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;
using detail::k_max_nesting;
using detail::prescan_toml;
using testing::k_head;
using testing::problems;

namespace {

std::string repeat(const std::string& part, int n, const std::string& sep) {
    std::string out;
    for (int i = 0; i < n; ++i) out += (i ? sep : "") + part;
    return out;
}

/// The pre-scan's verdict as "line:col: message", or "" when it lets the text through.
std::string scan(const std::string& text) {
    auto p = prescan_toml(text, "t.toml");
    return p ? p->loc.str() + ": " + p->message : "";
}

const std::string k_too_deep =
    "value nested more than 64 deep (tables, dotted keys, arrays and inline tables together; "
    "the limit is 64)";

}  // namespace

TEST_CASE("golden: a dotted key or table name of 50,000 parts") {
    // Both segfaulted inside toml++ (from ~35,000 parts).
    CHECK(problems(k_head + repeat("a", 50'000, ".") + " = 1\n") ==
          "r.toml:6:1: dotted key of more than 64 parts (the limit is 64)");
    CHECK(problems(k_head + "[" + repeat("t", 50'000, ".") + "]\n") ==
          "r.toml:6:1: table name of more than 64 parts (the limit is 64)");
    CHECK(problems(k_head + "[[" + repeat("t", 50'000, " . ") + "]]\n") ==
          "r.toml:6:1: table name of more than 64 parts (the limit is 64)");
    CHECK(problems(k_head + "x = { " + repeat("\"q\"", 50'000, ".") + " = 1 }\n") ==
          "r.toml:6:7: dotted key of more than 64 parts (the limit is 64)");
}

TEST_CASE("golden: nesting of tables, keys, arrays and inline tables counts together") {
    // [venv] (depth 1) + 63 parts = 64: the limit itself passes the pre-scan.
    CHECK(problems(k_head + repeat("a", 63, ".") + " = 1\n") == "r.toml:6:1: unknown key 'a' in [venv]");
    CHECK(problems(k_head + repeat("a", 64, ".") + " = 1\n") == "r.toml:6:1: " + k_too_deep);
    CHECK(problems(k_head + "[[" + repeat("t", 64, ".") + "]]\n") == "r.toml:6:1: " + k_too_deep);
    CHECK(problems(k_head + "[" + repeat("t", 60, ".") + "]\n" + repeat("k", 5, ".") + " = 1\n") ==
          "r.toml:7:1: " + k_too_deep);
    // x sits at 2, its 62 arrays at 3..64; the 63rd opens at column 67.
    CHECK(problems(k_head + "x = " + std::string(62, '[') + std::string(62, ']') + "\n") ==
          "r.toml:6:1: unknown key 'x' in [venv]");
    CHECK(problems(k_head + "x = " + std::string(100'000, '[') + std::string(100'000, ']') + "\n") ==
          "r.toml:6:67: " + k_too_deep);
    CHECK(problems(k_head + "x = " + repeat("{ a = ", 100'000, "") + "1" + std::string(100'000, '}') + "\n") ==
          "r.toml:6:377: " + k_too_deep);
    CHECK(problems(k_head + "x = [\n  1,\n  [ # a comment [\n    { a.b = [[2]] },\n  ],\n]\n" +
                   "y = " + std::string(63, '[')) == "r.toml:12:67: " + k_too_deep);
}

TEST_CASE("golden: a recipe over 4 MiB is not parsed") {
    std::string text = k_head + "# " + std::string(detail::k_max_recipe_bytes, 'x') + "\n";
    CHECK(problems(text) == "r.toml:1:1: recipe is " + std::to_string(text.size()) +
                                " bytes; bootstrap reads recipes of at most 4 MiB (4194304 bytes)");

    core::TempDir tmp("recipe-size");
    auto file = tmp.path() / "big.toml";
    {
        std::ofstream out(file);
        out << text;
    }
    auto r = steps::load_recipe(file);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_recipe);
    CHECK(r.error().message == file.string() + ":1:1: recipe is " + std::to_string(text.size()) +
                                   " bytes; bootstrap reads recipes of at most 4 MiB (4194304 "
                                   "bytes)");
}

TEST_CASE("golden: a [[fault]] match longer than 1000 characters is not compiled") {
    // std::regex's compiler recursed per character and overflowed on 100,000.
    const std::string tail = "\"\nexplain = \"e\"\nfix = \"f\"\n";
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmatch = \"" + std::string(100'000, 'a') + tail) ==
          "r.toml:8:9: 'match' is 100000 characters long; a pattern may have at most 1000");
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmatch = \"" + std::string(1000, '(') + std::string(1000, ')') +
                   tail) == "r.toml:8:9: 'match' is 2000 characters long; a pattern may have at most 1000");
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmatch = \"" + std::string(499, '(') + "x" + std::string(499, ')') +
                   "." + tail) == "<valid>");  // 1000 exactly
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmatch = '(a)\\1'" + tail.substr(1)) ==
          "r.toml:8:9: 'match' may not use back-references (\\1): log lines are matched without "
          "capture groups");
}

TEST_CASE("the pre-scan skips strings and comments and reads every TOML form") {
    std::string deep_text = std::string(200, '[') + repeat("a", 200, ".") + std::string(200, '{');
    // Brackets and dots inside strings and comments are text, not structure.
    CHECK(scan("a = \"" + deep_text + "\"\n") == "");
    CHECK(scan("a = '" + deep_text + "'\n") == "");
    CHECK(scan("a = \"\"\"\n" + deep_text + "\n\\\"\"\"\n\"\"\"\n") == "");
    CHECK(scan("a = '''\n" + deep_text + "\n'''\n") == "");
    CHECK(scan("a = \"\"\"x\"\"\"\"\"\nb = '''y'''''\n") == "");  // up to two quotes in content
    CHECK(scan("a = \"esc \\\" [[[ \\\\\"\n") == "");
    CHECK(scan("# " + deep_text + "\na = 1 # " + deep_text + "\n") == "");
    CHECK(scan("a = [ # " + deep_text + "\n  1, # ]]]]\n  'x',\n]\n") == "");
    CHECK(scan("\"" + repeat("a", 200, ".") + "\" = 1\n") == "");  // one quoted part
    // Values of every kind, CRLF, blanks, a byte order mark.
    CHECK(scan("\xEF\xBB\xBF"
               "a = 1979-05-27 07:32:00Z\r\nb = +1_000\r\nc = -inf\nd = [1, 2.5e3, true,]\n"
               "e = {}\nf = [ ]\ng = { x = 1, 'y'.z = [ { } ] }\n[ t . \"u\" ]\n[[ v ]]\n"
               "  w = 0x1F\n") == "");
    // Locations count lines and code points.
    CHECK(scan("a = 1\n\"é\" = " + std::string(100, '[')) == "t.toml:2:70: " + k_too_deep);
    CHECK(scan("a = '''\n\n'''\n" + repeat("k", 65, ".") + "=1") ==
          "t.toml:4:1: dotted key of more than 64 parts (the limit is 64)");
    // Malformed text is left to toml++, which stops at or before the same place.
    CHECK(scan("a = \"unterminated\n" + repeat("k", 100, ".") + " = 1\n") == "");
    CHECK(scan("a = ]\n" + repeat("k", 100, ".") + " = 1\n") == "");
}

TEST_CASE("the pre-scan lets every shipped recipe through") {
    for (const char* name : {"recipes/demo.toml", "recipes/h200-te214.toml", "recipes/pypi-small.toml",
                             "testworld/packages.toml", "testworld/native.toml"}) {
        auto path = std::filesystem::path(BS_TEST_DATA).parent_path().parent_path() / name;
        auto text = core::read_file(path);
        INFO(path.string());
        REQUIRE(text);
        CHECK(scan(*text) == "");
    }
}
