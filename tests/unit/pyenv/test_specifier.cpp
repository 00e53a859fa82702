#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "pyenv/specifier.hpp"

using bootstrap::pyenv::Specifier;
using bootstrap::pyenv::SpecifierSet;
using bootstrap::pyenv::Version;

namespace {

Version v(const std::string& text) {
    auto parsed = Version::parse(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return *parsed;
}

Specifier spec(const std::string& text) {
    auto parsed = Specifier::parse(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return *parsed;
}

SpecifierSet set(const std::string& text) {
    auto parsed = SpecifierSet::parse(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return *parsed;
}

}  // namespace

// packaging's test_specifiers table (operators only, pre-release filtering off).
TEST_CASE("Specifier::contains follows PEP 440 operator semantics") {
    const std::vector<std::tuple<std::string, std::string, bool>> cases{
        // ==
        {"2.0", "==2", true},
        {"2.0", "==2.0", true},
        {"2.0", "==2.0.0", true},
        {"2.0+deadbeef", "==2", true},
        {"2.0+deadbeef", "==2.0", true},
        {"2.0+deadbeef", "==2+deadbeef", true},
        {"2.0+deadbeef", "==2.0.0+deadbeef", true},
        {"2.0+deadbeef.0", "==2.0.0+deadbeef.00", true},
        {"2.11.0+cu130", "==2.11.0", true},
        {"2.11.0+cu130", "==2.11.0+cu130", true},
        {"2.11.0+cu128", "==2.11.0+cu130", false},
        {"2.11.0", "==2.11.0+cu130", false},
        {"2.1", "==2", false},
        {"2.1", "==2.0.0", false},
        {"2.0", "==2.0+deadbeef", false},
        {"2.0.post1", "==2.0", false},
        {"2.0rc1", "==2.0", false},
        // == with a prefix
        {"2.dev1", "==2.*", true},
        {"2a1", "==2.*", true},
        {"2a1.post1", "==2.*", true},
        {"2c1.post1.dev1", "==2.0.*", true},
        {"2rc1", "==2.0.*", true},
        {"2", "==2.*", true},
        {"2", "==2.0.*", true},
        {"2", "==0!2.*", true},
        {"0!2", "==2.*", true},
        {"2.0.0", "==2.*", true},
        {"2.1+local.version", "==2.1.*", true},
        {"2.1.post1", "==2.1.*", true},
        {"2.0", "==3.*", false},
        {"2.1", "==2.0.*", false},
        {"2.10", "==2.1.*", false},
        {"1!2.0", "==2.*", false},
        // !=
        {"2.1", "!=2", true},
        {"2.0.1", "!=2", true},
        {"2.0", "!=2", false},
        {"2.0", "!=2.0.0", false},
        {"2.0+deadbeef", "!=2", false},
        {"2.0+deadbeef", "!=2.0+deadbeef", false},
        {"2.0", "!=2.0+deadbeef", true},
        {"2.0", "!=3.*", true},
        {"2.1", "!=2.0.*", true},
        {"2.0", "!=2.*", false},
        {"2a1", "!=2.*", false},
        // >=
        {"2.0", ">=2", true},
        {"2.0.post1", ">=2", true},
        {"2.0.post1.dev1", ">=2", true},
        {"3", ">=2", true},
        {"2.0+local", ">=2", true},
        {"2.0.dev1", ">=2", false},
        {"2.0a1", ">=2", false},
        {"1.9", ">=2", false},
        // <=
        {"2.0", "<=2", true},
        {"2.0.dev1", "<=2", true},
        {"2.0a1", "<=2", true},
        {"2.0+local", "<=2", true},
        {"2.0.1", "<=2", false},
        {"2.0.post1", "<=2", false},
        // >
        {"3", ">2", true},
        {"2.1", ">2.0", true},
        {"2.0.1", ">2", true},
        {"2.1.post1", ">2", true},
        {"2.1+local.version", ">2", true},
        {"1", ">2", false},
        {"2.0", ">2", false},
        {"2.0a1", ">2", false},
        {"2.0.post1", ">2", false},
        {"1.7.post1", ">1.7", false},
        {"1.7.post2", ">1.7.post1", true},
        {"2.0+local.version", ">2", false},
        {"2.0.5", ">2.0dev", true},
        // <
        {"1", "<2", true},
        {"2.0", "<2.1", true},
        {"2.0.dev0", "<2.1", true},
        {"2.0.dev1", "<2", false},
        {"2.0a1", "<2", false},
        {"2.0rc1", "<2.0", false},
        {"1.7.dev0", "<1.7", false},
        {"1.7.dev0", "<1.7rc1", true},
        {"2.0", "<2", false},
        {"3", "<2", false},
        // ~=
        {"1", "~=1.0", true},
        {"1.0.1", "~=1.0", true},
        {"1.1", "~=1.0", true},
        {"1.9999999", "~=1.0", true},
        {"1.1", "~=1.0a1", true},
        {"0.9", "~=1.0", false},
        {"2.0", "~=1.0", false},
        {"2.0.dev0", "~=1.0", false},
        {"1.0.dev0", "~=1.0", false},
        {"1.0.1", "~=1.1", false},
        // epochs
        {"2!1.0", "~=2!1.0", true},
        {"2!1.0", "==2!1.*", true},
        {"2!1.0", "==2!1.0", true},
        {"2!1.0", "!=1.0", true},
        {"1.0", "!=2!1.0", true},
        {"1.0", "<=2!0.1", true},
        {"2!1.0", ">=2.0", true},
        {"1.0", "<2!0.1", true},
        {"2!1.0", ">2.0", true},
        {"2!1.0", "~=1.0", false},
        // ===
        {"1.0", "===1.0", true},
        {"1.0.0", "===1.0", false},
        {"1.0+local", "===1.0", false},
    };
    for (const auto& [version, text, expected] : cases) {
        INFO(version << " in " << text);
        CHECK(spec(text).contains(v(version)) == expected);
    }
}

TEST_CASE("exclusive < and > leave out only V's own pre-, post- and local releases") {
    // PEP 440 "Exclusive ordered comparison": >V excludes V's local versions, and V's
    // post-releases unless V is a post- or dev-release; <V excludes V's pre-releases unless V is
    // a pre-release. Everything else compares in full. Expected values checked against
    // packaging 26.4's Specifier.contains(v, prereleases=True).
    const std::vector<std::tuple<std::string, std::string, bool>> cases{
        {"2.4.0+cu121", ">2.4.0a0", true},  // was false: base versions compared
        {"2.4.0a0+cu121", ">2.4.0a0", false},
        {"2.4.0a0.post1", ">2.4.0a0", false},
        {"2.4.0a1.dev0", ">2.4.0a0", true},
        {"2.4.0", ">2.4.0a0", true},
        {"2.4.0.post1", ">2.4.0.dev0", true},  // was false: base versions compared
        {"2.4.0.dev0+x", ">2.4.0.dev0", false},
        {"2.4.0.dev1", ">2.4.0.dev0", true},
        {"2.4.0a0", ">2.4.0.dev0", true},
        {"2.4.0.post1+x", ">2.4.0.post1", false},
        {"2.4.0.post2.dev0", ">2.4.0.post1", true},
        {"2.4.0.post1.dev5", ">2.4.0.post1", false},
        {"2.4.0.post1", ">2.4.0", false},
        {"2.4.0.post1.dev1", ">2.4.0", false},
        {"2.4.0+cu121", ">2.4.0", false},
        {"2.4.1.dev0", ">2.4.0", true},
        {"2.4.0.post1", ">2.4", false},
        {"2.4.0rc1", "<2.4.0.post1", true},  // was false: base versions compared
        {"2.4.0", "<2.4.0.post1", true},
        {"2.4.0+cu121", "<2.4.0.post1", true},
        {"2.4.0.post0", "<2.4.0.post1", true},
        {"2.4.0.post1.dev0", "<2.4.0.post1", false},
        {"2.4.0rc1", "<2.4.0", false},
        {"2.4.0.dev0", "<2.4.0", false},
        {"2.3.9+x", "<2.4.0", true},
        {"2.3.9.post1", "<2.4.0", true},
        {"2.4.0b1", "<2.4.0rc1", true},
        {"2.4.0.dev0", "<2.4.0rc1", true},
        {"2.4.0rc1+x", "<2.4.0rc1", false},
        {"2.4.0.dev0", "<2.4.0.dev1", true},
        {"2.4.0.post1.dev0", "<2.4.0.post1.dev1", true},
        {"2.4.0rc1", "<2.4.0.post1.dev1", true},
    };
    for (const auto& [version, text, expected] : cases) {
        INFO(version << " in " << text);
        CHECK(spec(text).contains(v(version)) == expected);
        CHECK(set(text).contains(v(version), true) == expected);
    }
}

TEST_CASE("=== compares the version's text as written, ignoring case") {
    // PEP 440 "Arbitrary equality" is a string comparison; packaging 26.4 lower-cases both
    // sides and strips the specifier's whitespace. Expected values checked against
    // packaging's Specifier.contains.
    const std::vector<std::tuple<std::string, std::string, bool>> cases{
        {"1.01", "===1.01", true},  // was false: the normalised "1.1" was compared
        {"1.01", "===1.1", false},  // was true
        {"1.1", "===1.01", false}, {"1.0rc1", "===1.0RC1", true}, {"V1.0", "===v1.0", true},  // was false
        {"v1.0", "===1.0", false},                                                            // was true
        {"1.0", "=== 1.0", true},  {"1.0.0", "===1.0", false},    {"2.0+cu121", "===2.0+CU121", true},
    };
    for (const auto& [version, text, expected] : cases) {
        INFO(version << " in " << text);
        CHECK(spec(text).contains(v(version)) == expected);
        CHECK(set(text).contains(v(version), true) == expected);
    }
    CHECK(v(" 1.01 ").text() == "1.01");
    CHECK(v("1.01+Local").public_version().text() == "1.1");
    CHECK(v("1.01rc1").base_version().text() == "1.1");
}

TEST_CASE("the ~= operator expands to >= and a prefix ==") {
    // PEP 440: ~=2.2 is >=2.2,==2.*; ~=1.4.5 is >=1.4.5,==1.4.*; suffixes drop before the
    // prefix is taken.
    const std::vector<std::tuple<std::string, std::string, bool>> cases{
        {"~=2.2", "2.2", true},
        {"~=2.2", "2.3", true},
        {"~=2.2", "2.99.1", true},
        {"~=2.2", "3.0", false},
        {"~=2.2", "2.1", false},
        {"~=2.2", "2.2+cu130", true},
        {"~=1.4.5", "1.4.5", true},
        {"~=1.4.5", "1.4.9", true},
        {"~=1.4.5", "1.5.0", false},
        {"~=1.4.5", "1.4.4", false},
        {"~=2.2.post3", "2.2.post3", true},
        {"~=2.2.post3", "2.3", true},
        {"~=2.2.post3", "2.2", false},
        {"~=2.2.post3", "3.0", false},
        {"~=1.4.5a4", "1.4.5a4", true},
        {"~=1.4.5a4", "1.4.5", true},
        {"~=1.4.5a4", "1.4.6", true},
        {"~=1.4.5a4", "1.5", false},
        {"~=1.4.5a4", "1.4.5a3", false},
        {"~=2.2.0", "2.2.1", true},
        {"~=2.2.0", "2.3", false},
        {"~=1!1.0", "1!1.5", true},
        {"~=1!1.0", "1.5", false},
    };
    for (const auto& [text, version, expected] : cases) {
        INFO(version << " in " << text);
        CHECK(spec(text).contains(v(version)) == expected);
    }
}

TEST_CASE("SpecifierSet filters pre-releases unless asked or named") {
    CHECK(set("").contains(v("1.0")));
    CHECK_FALSE(set("").contains(v("1.0a1")));
    CHECK(set("").contains(v("1.0a1"), true));
    CHECK(set(">=1.0").contains(v("2.0")));
    CHECK_FALSE(set(">=1.0").contains(v("2.0a1")));
    CHECK_FALSE(set(">=1.0").contains(v("2.0.dev1")));
    CHECK(set(">=1.0").contains(v("2.0a1"), true));
    CHECK(set(">=1.0a1").contains(v("1.0b1")));  // names a pre-release
    CHECK(set(">=1.0,<2.0.dev0").contains(v("1.5rc1")));
    CHECK(set("==2.0.*,>=2.0rc1").contains(v("2.0rc2")));
    CHECK_FALSE(set("!=1.0a1").contains(v("1.0a2")));  // != never opts in
    CHECK(set(">=1.0").contains(v("1.0.post1")));      // post-releases are not pre-releases
    CHECK(set(">=2.0").contains(v("2.11.0+cu130")));
}

TEST_CASE("a specifier names a pre-release by its version, never by === text that ends in a wildcard") {
    // packaging's Specifier.prereleases: the version without a '.*' suffix, but `===` takes its
    // text whole, and "1.0a1.*" is no version (the differential test found it).
    CHECK(spec("===1.0a1").names_prerelease());
    CHECK_FALSE(spec("===1.0a1.*").names_prerelease());
    CHECK_FALSE(spec("===2c.*").names_prerelease());
    CHECK(spec(">=1.0.dev0").names_prerelease());
    CHECK_FALSE(spec("==1.0.*").names_prerelease());
    CHECK_FALSE(spec("!=1.0a1").names_prerelease());
}

TEST_CASE("SpecifierSet intersects its specifiers") {
    SpecifierSet s = set(">=1.0, <2.0, !=1.5.*");
    CHECK(s.specs().size() == 3);
    CHECK(s.contains(v("1.0")));
    CHECK(s.contains(v("1.4.9")));
    CHECK_FALSE(s.contains(v("1.5.2")));
    CHECK(s.contains(v("1.6")));
    CHECK_FALSE(s.contains(v("2.0")));
    CHECK_FALSE(s.contains(v("0.9")));
    CHECK(set("== 2.11.0").contains(v("2.11.0+cu130")));
    CHECK_FALSE(set("==2.11.0+cu130").contains(v("2.11.0")));
}

TEST_CASE("SpecifierSet::str is canonical") {
    CHECK(set("").str().empty());
    CHECK(set(">=1.0, <2").str() == "<2,>=1.0");
    CHECK(set(" == 2.* ").str() == "==2.*");
    CHECK(set("<2,>=1.0").str() == set(">=1.0,<2").str());
    CHECK(spec("~= 1.4").str() == "~=1.4");
}

TEST_CASE("SpecifierSet parse errors say what and where") {
    const std::vector<std::pair<std::string, std::string>> cases{
        {">=", "invalid specifier '>=': expected a version after '>=' at column 3"},
        {"=>1.0",
         "invalid specifier '=>1.0': expected a comparison operator (==, !=, <=, >=, <, >, ~=, "
         "===) at column 1"},
        {">=1.0,,<2",
         "invalid specifier '>=1.0,,<2': expected a version specifier such as '>=1.0' at "
         "column 7"},
        {">=1.0,",
         "invalid specifier '>=1.0,': expected a version specifier such as '>=1.0' at "
         "column 7"},
        {">=1.0 <2", "invalid specifier '>=1.0 <2': unexpected '<2' after the version at column 7"},
        {"==1.0x", "invalid specifier '==1.0x': '1.0x' is not a valid version at column 3"},
        {"~=1",
         "invalid specifier '~=1': '~=' needs at least two release numbers, as in "
         "'~=1.0' at column 3"},
        {">=1.0.*",
         "invalid specifier '>=1.0.*': '.*' is only allowed with == and !=, not '>=' at "
         "column 3"},
        {">=1.0+cu130",
         "invalid specifier '>=1.0+cu130': a local version label is not allowed "
         "in '>=1.0+cu130' at column 3"},
        {"==1.0+abc.*",
         "invalid specifier '==1.0+abc.*': a local version label is not allowed "
         "in '==1.0+abc.*' at column 3"},
        {"~=1.0+abc",
         "invalid specifier '~=1.0+abc': a local version label is not allowed "
         "in '~=1.0+abc' at column 3"},
        // PEP 440 prefix matching takes release numbers only; packaging 26.4 raises
        // InvalidSpecifier for each of these, and bootstrap used to accept them.
        {"==1.0.dev1.*",
         "invalid specifier '==1.0.dev1.*': '.*' may only follow release numbers, and "
         "'==1.0.dev1.*' puts it after a dev-release segment at column 3"},
        {"==2.0a1.*",
         "invalid specifier '==2.0a1.*': '.*' may only follow release numbers, and "
         "'==2.0a1.*' puts it after a pre-release segment at column 3"},
        {">=1, != 2.0.post1.*",
         "invalid specifier '>=1, != 2.0.post1.*': '.*' may only follow release numbers, and "
         "'!=2.0.post1.*' puts it after a post-release segment at column 9"},
    };
    for (const auto& [text, message] : cases) {
        INFO(text);
        auto r = SpecifierSet::parse(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message == message);
    }
    CHECK(SpecifierSet::parse("===anything-goes").has_value());
    CHECK(SpecifierSet::parse("==1!2.0.*, !=2.0.*").has_value());
    CHECK(SpecifierSet::parse("   ").has_value());
    CHECK_FALSE(Specifier::parse("").has_value());
}
