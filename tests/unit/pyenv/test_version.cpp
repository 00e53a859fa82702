#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "pyenv/name.hpp"
#include "pyenv/version.hpp"

using bootstrap::pyenv::Version;

namespace {

Version v(const std::string& text) {
    auto parsed = Version::parse(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return *parsed;
}

}  // namespace

TEST_CASE("normalize_name and is_valid_name follow PEP 503 / PEP 508") {
    using bootstrap::pyenv::is_valid_name;
    using bootstrap::pyenv::normalize_name;
    CHECK(normalize_name("Foo_Bar.baz--Qux") == "foo-bar-baz-qux");
    CHECK(normalize_name("friendly-bard") == "friendly-bard");
    CHECK(normalize_name("FRIENDLY._-BARD") == "friendly-bard");
    CHECK(normalize_name("nvidia_cublas_cu12") == "nvidia-cublas-cu12");
    CHECK(is_valid_name("a"));
    CHECK(is_valid_name("torch"));
    CHECK(is_valid_name("zope.interface"));
    CHECK(is_valid_name("A_1-b"));
    CHECK_FALSE(is_valid_name(""));
    CHECK_FALSE(is_valid_name("-foo"));
    CHECK_FALSE(is_valid_name("foo_"));
    CHECK_FALSE(is_valid_name("foo bar"));
    CHECK_FALSE(is_valid_name("foo+bar"));
    CHECK_FALSE(is_valid_name("f\xc3\xa9"));
}

TEST_CASE("Version normalises every PEP 440 spelling") {
    const std::vector<std::pair<std::string, std::string>> cases{
        // release, epoch, leading v, whitespace, leading zeros
        {"1.0", "1.0"},
        {"v1.0", "1.0"},
        {"V1.0", "1.0"},
        {"  1.0\n", "1.0"},
        {"01.02.003", "1.2.3"},
        {"1!2.0", "1!2.0"},
        {"0!1.0", "1.0"},
        {"2024.10.1", "2024.10.1"},
        // pre-releases
        {"1.0a", "1.0a0"},
        {"1.0a1", "1.0a1"},
        {"1.0.a1", "1.0a1"},
        {"1.0-a1", "1.0a1"},
        {"1.0_a_1", "1.0a1"},
        {"1.0alpha1", "1.0a1"},
        {"1.0ALPHA1", "1.0a1"},
        {"1.0b2", "1.0b2"},
        {"1.0beta2", "1.0b2"},
        {"1.0c1", "1.0rc1"},
        {"1.0pre1", "1.0rc1"},
        {"1.0preview1", "1.0rc1"},
        {"1.0RC1", "1.0rc1"},
        {"1.0-rc-1", "1.0rc1"},
        // post-releases
        {"1.0-1", "1.0.post1"},
        {"1.0post1", "1.0.post1"},
        {"1.0.post", "1.0.post0"},
        {"1.0.rev1", "1.0.post1"},
        {"1.0r1", "1.0.post1"},
        {"1.0-r-1", "1.0.post1"},
        {"1.0_post_1", "1.0.post1"},
        {"1.0.POST1", "1.0.post1"},
        // dev releases
        {"1.0dev", "1.0.dev0"},
        {"1.0-dev1", "1.0.dev1"},
        {"1.0_dev_1", "1.0.dev1"},
        {"1.0.DEV3", "1.0.dev3"},
        // everything together
        {"1.0a1.post2.dev3", "1.0a1.post2.dev3"},
        {"1!1.0rc1-2_DEV4+Ubuntu-1_2", "1!1.0rc1.post2.dev4+ubuntu.1.2"},
        // local labels
        {"2.11.0+cu130", "2.11.0+cu130"},
        {"1.0+ABC-def_1", "1.0+abc.def.1"},
        {"1.0+01", "1.0+1"},
        {"1.0+abc.007", "1.0+abc.7"},
        {"2.5.0.dev20240101+cu124", "2.5.0.dev20240101+cu124"},
    };
    for (const auto& [input, canonical] : cases) {
        INFO(input);
        auto parsed = Version::parse(input);
        REQUIRE(parsed.has_value());
        CHECK(parsed->str() == canonical);
    }
}

TEST_CASE("Version rejects what PEP 440 rejects") {
    const std::vector<std::string> bad{"",
                                       "french toast",
                                       "1.0x",
                                       "1..0",
                                       "1.0-",
                                       "1!",
                                       "!1.0",
                                       "1.0.*",
                                       "1.0+",
                                       "1.0+abc.",
                                       "1.0+abc+def",
                                       "1.0 a1",
                                       "v",
                                       "1.0a1a2",
                                       "1.0.post1.post2",
                                       "1.0dev1.post1",
                                       "1.0+ab_",
                                       "99999999999999999999"};
    for (const auto& input : bad) {
        INFO(input);
        CHECK_FALSE(Version::parse(input).has_value());
    }
}

TEST_CASE("Version parse errors quote the text and the column") {
    auto r = Version::parse("1.0x");
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "invalid version '1.0x': unexpected 'x' at column 4");
    r = Version::parse("abc");
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "invalid version 'abc': expected a release number at column 1");
    r = Version::parse("1.0+");
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "invalid version '1.0+': expected a local version label at column 5");
}

TEST_CASE("Version accessors") {
    Version x = v("1!2.3.4rc1.post5.dev6+local.7");
    CHECK(x.epoch() == 1);
    CHECK(x.release() == std::vector<long>{2, 3, 4});
    CHECK(x.is_prerelease());
    CHECK(x.is_postrelease());
    CHECK(x.is_devrelease());
    CHECK(x.local() == "local.7");
    CHECK(x.public_version().str() == "1!2.3.4rc1.post5.dev6");
    CHECK(x.base_version().str() == "1!2.3.4");

    CHECK_FALSE(v("1.0").is_prerelease());
    CHECK_FALSE(v("1.0.post1").is_prerelease());
    CHECK(v("1.0.dev0").is_prerelease());
    CHECK(v("1.0b1").is_prerelease());
    CHECK_FALSE(v("1.0+cu130").is_prerelease());
}

TEST_CASE("Version ordering follows the PEP 440 example list") {
    // Strictly increasing (PEP 440's ordering example, plus local labels and epochs).
    const std::vector<std::string> ordered{"1.0.dev456",    "1.0a1",         "1.0a2.dev456", "1.0a12.dev456",
                                           "1.0a12",        "1.0b1.dev456",  "1.0b2",        "1.0b2.post345.dev456",
                                           "1.0b2.post345", "1.0rc1.dev456", "1.0rc1",       "1.0",
                                           "1.0+abc",       "1.0+abc.5",     "1.0+abc.7",    "1.0+abc.10",
                                           "1.0+5",         "1.0+5.abc",     "1.0+6",        "1.0.post456.dev34",
                                           "1.0.post456",   "1.0.15",        "1.1.dev1",     "1.1",
                                           "2.0",           "10.0",          "1!0.1",        "1!1.0"};
    for (size_t i = 0; i < ordered.size(); ++i) {
        for (size_t j = 0; j < ordered.size(); ++j) {
            INFO(ordered[i] << " vs " << ordered[j]);
            Version a = v(ordered[i]), b = v(ordered[j]);
            CHECK(((a <=> b) < 0) == (i < j));
            CHECK((a == b) == (i == j));
        }
    }
}

TEST_CASE("Version comparison ignores trailing zeros but not local labels") {
    CHECK(v("1.0") == v("1"));
    CHECK(v("1.0.0") == v("1"));
    CHECK(v("1.0.0.0a1") == v("1a1"));
    CHECK(v("1.0a1") == v("1.0alpha1"));
    CHECK(v("1.0.post0") != v("1.0"));
    CHECK(v("1.0+cu130") != v("1.0"));
    CHECK(v("1.0+cu130") > v("1.0"));
    CHECK(v("1.0+cu130") < v("1.0.post1"));
    CHECK(v("1.0+CU130") == v("1.0+cu130"));
    CHECK(v("1.0+abc-1") == v("1.0+abc.1"));
    CHECK(v("1.0+1") == v("1.0+001"));
    CHECK(v("1.0.1") > v("1.0"));
    CHECK(v("1.0.dev1") < v("1.0a0"));
    CHECK(v("1.0a0.dev1") < v("1.0a0"));
    CHECK(v("1.0.post1.dev1") < v("1.0.post1"));
    CHECK(v("1.0.post1.dev1") > v("1.0"));
    CHECK(v("1.0rc1") > v("1.0b9"));
    CHECK(v("1.0c1") == v("1.0rc1"));
}
