#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "pyenv/marker.hpp"

using bootstrap::pyenv::Marker;
using bootstrap::pyenv::MarkerEnv;

namespace {

MarkerEnv linux_env() {
    return MarkerEnv{
        {"python_version", "3.12"},
        {"python_full_version", "3.12.3"},
        {"os_name", "posix"},
        {"sys_platform", "linux"},
        {"platform_machine", "x86_64"},
        {"platform_system", "Linux"},
        {"platform_release", "6.8.0-45-generic"},
        {"platform_python_implementation", "CPython"},
        {"implementation_name", "cpython"},
        {"implementation_version", "3.12.3"},
    };
}

bool eval(const std::string& text, const MarkerEnv& env) {
    auto marker = Marker::parse(text);
    INFO(text);
    REQUIRE(marker.has_value());
    return marker->evaluate(env);
}

}  // namespace

TEST_CASE("Marker evaluates comparisons, in, and, or, parentheses") {
    const std::vector<std::pair<std::string, bool>> cases{
        {"python_version >= \"3.8\"", true},
        {"python_version > '3.9'", true},  // a version compare: as strings "3.12" < "3.9"
        {"python_version < \"3.10\"", false},
        {"'3.9' < python_version", true},
        {"python_version == '3.12'", true},
        {"python_version == '3.12.0'", true},
        {"python_full_version == '3.12.*'", true},
        {"python_full_version != '3.12.*'", false},
        {"python_version ~= '3.10'", true},
        {"python_full_version >= '3.12.4'", false},
        {"sys_platform == \"win32\"", false},
        {"sys_platform != 'win32'", true},
        {"sys_platform=='linux'", true},
        {"platform_machine in \"x86_64 aarch64\"", true},
        {"'arm' in platform_machine", false},
        {"platform_machine not in 'arm64 aarch64'", true},
        {"'x86' not in platform_machine", false},
        {"platform_release >= '6'", false},  // not a version: no order (see below)
        {"platform_release < '10'", false},
        {"implementation_name === 'cpython'", true},  // packaging raises UndefinedComparison
        {"platform_python_implementation == 'CPython'", true},
        {"os.name == 'posix'", true},  // legacy spelling
        {"sys.platform == 'linux'", true},
        {"platform_version == ''", true},  // missing from env: reads as ""
        {"os_name == 'posix' and (sys_platform == 'darwin' or platform_machine == 'x86_64')", true},
        {"(os_name == 'posix' and sys_platform == 'darwin') or platform_machine == 'x86_64'", true},
        {"os_name == 'posix' and sys_platform == 'darwin' or platform_machine == 'arm64'", false},
        // "and" binds tighter than "or"
        {"os_name == 'posix' or sys_platform == 'x' and os_name == 'nt'", true},
        {"sys_platform == 'darwin' or python_version >= '3' and os_name == 'nt'", false},
        {"((python_version >= '3.8'))", true},
        {"extra == 'cuda'", false},  // no extra requested
    };
    MarkerEnv env = linux_env();
    for (const auto& [text, expected] : cases) {
        INFO(text);
        CHECK(eval(text, env) == expected);
    }
}

TEST_CASE("Marker gives strings that are not versions no order") {
    // The dependency-specifiers spec ("Marker comparisons") and packaging 26: where a
    // comparison has no PEP 440 meaning, < and > are false and <= and >= mean ==. A version
    // variable whose comparison is a valid specifier but whose value is not a version
    // ("6.8.0-45-generic") matches none of the specifier's operators. Expected values are
    // packaging 26.4's Marker.evaluate with linux_env().
    const std::vector<std::pair<std::string, bool>> cases{
        {"platform_release < '7'", false},       // was true: "6.8..." < "7" as strings
        {"platform_release > '5'", false},       // was true
        {"'7' > platform_release", false},       // was true
        {"sys_platform < 'win32'", false},       // was true
        {"sys_platform > 'darwin'", false},      // was true
        {"platform_release != '6.8.0'", false},  // was true: a specifier, and no version
        {"platform_release == '6.8.0'", false},
        {"platform_release <= '6.8.0-45-generic'", true},
        {"platform_release > '6.8.0-45-generia'", false},
        {"platform_release === '6.8.0-45-GENERIC'", true},  // was false: text, any case
        {"sys_platform >= 'linux'", true},
        {"'linux' <= sys_platform", true},
        {"os_name <= 'nt'", false},
        {"implementation_version > '3.12.3rc1'", true},
        {"python_version < 'abc'", false},  // was true
        {"python_version >= 'abc'", false},
    };
    MarkerEnv env = linux_env();
    for (const auto& [text, expected] : cases) {
        INFO(text);
        CHECK(eval(text, env) == expected);
    }
}

TEST_CASE("Marker reads an untagged build's python_full_version '3.12.3+' as 3.12.3+local") {
    // platform.python_version() of a CPython built from an untagged tree ends in '+', which is
    // not PEP 440; packaging appends "local" before comparing. Expected values are packaging
    // 26.4's Marker.evaluate.
    MarkerEnv env = linux_env();
    env["python_full_version"] = "3.12.3+";
    const std::vector<std::pair<std::string, bool>> cases{
        {"python_full_version >= '3.9'", true},     // was false: a string compare
        {"python_full_version == '3.12.3'", true},  // was false
        {"python_full_version < '3.12.3'", false}, {"python_full_version == '3.12.3+'", false},
        {"'local' in python_full_version", true},
    };
    for (const auto& [text, expected] : cases) {
        INFO(text);
        CHECK(eval(text, env) == expected);
    }
    env["python_version"] = "3.12+";  // only python_full_version is repaired
    CHECK_FALSE(eval("python_version >= '3.9'", env));
}

TEST_CASE("Marker reads PEP 751's extras and dependency_groups as sets") {
    // packaging 26 evaluates a lock file's markers with both empty unless given; membership is
    // by normalised name, a string is never == to a set, and a set on the left is undefined
    // (packaging raises; bootstrap says false). Expected values are packaging 26.4's
    // Marker.evaluate(context="lock_file").
    MarkerEnv env = linux_env();
    CHECK_FALSE(eval("'x' in extras", env));  // was a parse error: unknown variable
    CHECK(eval("'x' not in extras", env));
    CHECK_FALSE(eval("'' in extras", env));
    CHECK_FALSE(eval("'dev' in dependency_groups", env));
    env["extras"] = "cuda,X_Y";
    env["dependency_groups"] = "dev";
    CHECK(eval("'cuda' in extras", env));
    CHECK(eval("'x-y' in extras", env));
    CHECK(eval("'X.Y' in extras", env));
    CHECK_FALSE(eval("'x' in extras", env));
    CHECK_FALSE(eval("'cuda' not in extras", env));
    CHECK(eval("'dev' in dependency_groups and 'test' not in dependency_groups", env));
    CHECK_FALSE(eval("'cuda' == extras", env));
    CHECK(eval("'cuda' != extras", env));
    CHECK_FALSE(eval("'cuda' >= extras", env));
    CHECK_FALSE(eval("'cuda' < extras", env));
    CHECK_FALSE(eval("extras == 'cuda'", env));
    CHECK_FALSE(eval("'cu' in extras", env));  // a member, not a substring
    auto m = Marker::parse("'cuda' in extras or 'dev' in dependency_groups");
    REQUIRE(m);
    CHECK(m->str() == "\"cuda\" in extras or \"dev\" in dependency_groups");
}

TEST_CASE("Marker compares extras by normalised name") {
    MarkerEnv env = linux_env();
    env["extra"] = "foo-bar";
    CHECK(eval("extra == 'Foo_Bar'", env));
    CHECK(eval("extra == \"foo.bar\"", env));
    CHECK_FALSE(eval("extra == 'foo'", env));
    CHECK(eval("extra != 'foo'", env));
    env["extra"] = "Foo__Bar";
    CHECK(eval("extra == 'foo-bar'", env));
    env["extra"] = "";
    CHECK_FALSE(eval("extra == 'foo-bar'", env));
    // An extra that looks like a version is still compared by name.
    env["extra"] = "1.0";
    CHECK_FALSE(eval("extra == '1'", env));
}

TEST_CASE("Marker::str is canonical") {
    auto m = Marker::parse("python_version>='3.8'  and(os_name==\"nt\" or extra=='x')and os.name  not  in 'a'");
    REQUIRE(m);
    CHECK(m->str() ==
          "python_version >= \"3.8\" and (os_name == \"nt\" or extra == \"x\") and "
          "os_name not in \"a\"");
    auto q = Marker::parse("platform_version == 'say \"hi\"'");
    REQUIRE(q);
    CHECK(q->str() == "platform_version == 'say \"hi\"'");
    // The canonical form parses back to itself.
    auto again = Marker::parse(m->str());
    REQUIRE(again);
    CHECK(again->str() == m->str());
}

TEST_CASE("Marker parse errors say what and where") {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"python_version >= ",
         "invalid marker 'python_version >= ': expected a marker variable or a quoted string "
         "at column 19"},
        {"python_version >= \"3.8", "invalid marker 'python_version >= \"3.8': unterminated string at column 19"},
        {"pyton_version == '3'",
         "invalid marker 'pyton_version == '3'': unknown marker variable 'pyton_version' at "
         "column 1"},
        {"python_version = '3'",
         "invalid marker 'python_version = '3'': expected a comparison operator (==, !=, <, <=, "
         ">, >=, ~=, ===, in, not in) at column 16"},
        {"(os_name == 'nt'",
         "invalid marker '(os_name == 'nt'': expected ')' to close the parenthesis at column "
         "17"},
        {"os_name == 'nt' xor 'a'",
         "invalid marker 'os_name == 'nt' xor 'a'': expected 'and', 'or' or the end of the "
         "marker, got 'xor 'a'' at column 17"},
        {"os_name == 'nt' and",
         "invalid marker 'os_name == 'nt' and': expected a marker variable or a quoted string "
         "at column 20"},
        {"os_name == 'nt' andos_name == 'x'",
         "invalid marker 'os_name == 'nt' andos_name == 'x'': expected 'and', 'or' or the end "
         "of the marker, got 'andos_name == 'x'' at column 17"},
        {"", "invalid marker '': expected a marker variable or a quoted string at column 1"},
        {"os_name not 'x'",
         "invalid marker 'os_name not 'x'': expected a comparison operator (==, !=, <, <=, >, "
         ">=, ~=, ===, in, not in) at column 9"},
    };
    for (const auto& [text, message] : cases) {
        INFO(text);
        auto r = Marker::parse(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message == message);
    }
}

TEST_CASE("Marker bounds nesting and length") {
    // 100,000 nested parentheses, or 100,000 `and`s, overflowed the stack (parse, str,
    // evaluate and the tree's destructor all recursed). Both now stop at a bound, with a clipped
    // quote of the text.
    auto paren = [](int n) { return std::string(n, '(') + "os_name == 'posix'" + std::string(n, ')'); };
    auto deep = Marker::parse(paren(100'000));
    REQUIRE_FALSE(deep);
    CHECK(deep.error().message.find("marker of 200018 characters (the limit is 16384) at column "
                                    "1") != std::string::npos);
    CHECK(deep.error().message.size() < 400);

    auto ok = Marker::parse(paren(32));
    REQUIRE(ok);
    CHECK(ok->str() == "os_name == \"posix\"");
    CHECK(ok->evaluate(linux_env()));
    auto nested = Marker::parse(paren(33));
    REQUIRE_FALSE(nested);
    CHECK(nested.error().message.find(": parentheses nested more than 32 deep (the limit is 32) "
                                      "at column 33") != std::string::npos);
    // The bound is on open parentheses, not on how many there are.
    std::string siblings;
    for (int i = 0; i < 100; ++i) siblings += (i ? " or " : "") + paren(20);
    CHECK(Marker::parse(siblings));

    std::string chain;
    for (int i = 0; i < 100'000; ++i) chain += (i ? " and " : "") + std::string("os_name == 'x'");
    auto long_chain = Marker::parse(chain);
    REQUIRE_FALSE(long_chain);
    CHECK(long_chain.error().message.find("the limit is 16384") != std::string::npos);

    // Up to the length bound, a chain of 700 (13 KiB) is one wide node: canonical and evaluated.
    std::string wide = "os_name == 'posix'";
    for (int i = 1; i < 700; ++i) wide += i % 2 ? " and os_name != 'nt'" : " or os_name == 'x'";
    auto w = Marker::parse(wide);
    REQUIRE(w);
    CHECK(w->evaluate(linux_env()));
    auto again = Marker::parse(w->str());
    REQUIRE(again);
    CHECK(again->str() == w->str());
}
