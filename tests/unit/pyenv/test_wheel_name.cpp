#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "pyenv/wheel_name.hpp"

using namespace bootstrap;
using Tags = std::set<std::string>;

namespace {

pyenv::WheelName parsed(const std::string& file) {
    auto w = pyenv::parse_wheel_name(file);
    INFO(file << ": " << (w ? "" : w.error().message));
    REQUIRE(w.has_value());
    return *w;
}

std::string error_of(const std::string& file) {
    auto w = pyenv::parse_wheel_name(file);
    REQUIRE_FALSE(w.has_value());
    return w.error().message;
}

}  // namespace

TEST_CASE("wheel names keep the name as written and normalise it (PyPI's capitalised Pygments)") {
    auto w = parsed("Pygments-2.0.2-py3-none-any.whl");
    CHECK(w.file_name == "Pygments-2.0.2-py3-none-any.whl");
    CHECK(w.name == "Pygments");
    CHECK(w.normalized_name == "pygments");
    CHECK(w.version == "2.0.2");
    CHECK(w.build_tag.empty());
    CHECK(w.python_tags == std::vector<std::string>{"py3"});
    CHECK(w.abi_tags == std::vector<std::string>{"none"});
    CHECK(w.platform_tags == std::vector<std::string>{"any"});
    CHECK(w.tags == Tags{"py3-none-any"});
    // The lower-case spelling PyPI lists today is the same project and release.
    auto lower = parsed("pygments-2.0.2-py3-none-any.whl");
    CHECK(lower.normalized_name == w.normalized_name);
    CHECK(pyenv::is_release_of(lower, "Pygments", "2.0.2"));

    auto dotted = parsed("zope.interface-6.1-cp311-cp311-manylinux_2_17_x86_64.whl");
    CHECK(dotted.normalized_name == "zope-interface");
    CHECK(parsed("charset_normalizer-3.4.1-cp311-cp311-musllinux_1_2_x86_64.whl").normalized_name ==
          "charset-normalizer");
}

TEST_CASE("compressed tag sets expand to their cartesian product, whatever their order") {
    auto a = parsed(
        "charset_normalizer-3.5.3-cp311-cp311-"
        "manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl");
    auto b = parsed(
        "charset_normalizer-3.5.3-cp311-cp311-"
        "manylinux_2_5_x86_64.manylinux1_x86_64.manylinux_2_28_x86_64.whl");
    CHECK(a.platform_tags ==
          std::vector<std::string>{"manylinux1_x86_64", "manylinux_2_28_x86_64", "manylinux_2_5_x86_64"});
    CHECK(a.tags == Tags{"cp311-cp311-manylinux1_x86_64", "cp311-cp311-manylinux_2_28_x86_64",
                         "cp311-cp311-manylinux_2_5_x86_64"});
    CHECK(a.tags == b.tags);
    CHECK(a.file_name != b.file_name);

    auto universal = parsed("six-1.16.0-py2.py3-none-any.whl");
    CHECK(universal.tags == Tags{"py2-none-any", "py3-none-any"});
    auto product = parsed("x-1.0-cp310.cp311-abi3.none-linux_x86_64.manylinux2014_x86_64.whl");
    CHECK(product.tags.size() == 8);
    CHECK(product.tags.count("cp311-none-manylinux2014_x86_64") == 1);
    // Tags compare case-insensitively, as packaging's parse_tag does.
    CHECK(parsed("x-1.0-py3-none-Any.whl").tags == Tags{"py3-none-any"});
}

TEST_CASE("build tags, local versions and PEP 440 version equality") {
    auto w = parsed("torch-2.5.1+cu124-1build2-cp311-cp311-linux_x86_64.whl");
    CHECK(w.version == "2.5.1+cu124");
    CHECK(w.build_tag == "1build2");
    CHECK(w.tags == Tags{"cp311-cp311-linux_x86_64"});
    CHECK(pyenv::is_release_of(w, "torch", "2.5.1+cu124"));
    CHECK(pyenv::is_release_of(w, "Torch", "2.5.1.0+cu124"));  // PEP 440: equal releases
    CHECK_FALSE(pyenv::is_release_of(w, "torch", "2.5.1"));
    CHECK_FALSE(pyenv::is_release_of(w, "torchvision", "2.5.1+cu124"));
    CHECK(pyenv::is_release_of(parsed("demo-1.0rc1-py3-none-any.whl"), "demo", "1.0.0-RC1"));
}

TEST_CASE("a bad wheel name is an error naming the file and the problem") {
    CHECK(error_of("pygments-2.18.0.tar.gz") ==
          "'pygments-2.18.0.tar.gz' is not a wheel file name: it does not end with .whl");
    CHECK(error_of("pygments-2.18.0-py3-any.whl") ==
          "'pygments-2.18.0-py3-any.whl' is not a wheel file name: it has 4 '-'-separated parts, "
          "not 5 or 6 (name-version[-build]-python-abi-platform)");
    CHECK(error_of("a-1-b-c-d-e-f.whl").find("has 7 '-'-separated parts") != std::string::npos);
    CHECK(error_of("x-1.0-build-py3-none-any.whl") ==
          "'x-1.0-build-py3-none-any.whl' is not a wheel file name: its build tag 'build' does not "
          "start with a digit");
    CHECK(error_of("x-not.a.version-py3-none-any.whl") ==
          "'x-not.a.version-py3-none-any.whl' is not a wheel file name: 'not.a.version' is not a PEP "
          "440 version");
    CHECK(error_of("_x-1.0-py3-none-any.whl").find("'_x' is not a distribution name") != std::string::npos);
    CHECK(error_of("x-1.0-py3..py2-none-any.whl").find("its python tag 'py3..py2' has an empty element") !=
          std::string::npos);
    CHECK(error_of("x-1.0-py3-none-linux x86.whl").find("its platform tag 'linux x86' has the character ' '") !=
          std::string::npos);
    CHECK(error_of("x-1.0--none-any.whl").find("its python tag '' has an empty element") != std::string::npos);
}

TEST_CASE("expand_tags reads WHEEL Tag lines, compressed or not") {
    auto tags = pyenv::expand_tags({"cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"});
    REQUIRE(tags);
    CHECK(*tags == Tags{"cp311-cp311-manylinux2014_x86_64", "cp311-cp311-manylinux_2_17_x86_64"});
    auto compressed = pyenv::expand_tags({"py2.py3-none-any"});
    REQUIRE(compressed);
    CHECK(*compressed == Tags{"py2-none-any", "py3-none-any"});
    CHECK(pyenv::expand_tags({})->empty());
    auto bad = pyenv::expand_tags({"py3-none"});
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "'py3-none' is not a wheel tag (python-abi-platform)");
    auto bad_char = pyenv::expand_tags({"py3-none-any!"});
    REQUIRE_FALSE(bad_char);
    CHECK(bad_char.error().message ==
          "'py3-none-any!' is not a wheel tag: its platform tag 'any!' has the character '!'");
}
