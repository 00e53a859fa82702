// The lines bootstrap writes into requirements files (pyenv/requirement_line.hpp).
#include <catch2/catch.hpp>

#include "pyenv/requirement_line.hpp"

using namespace bootstrap;

namespace {

const std::string k_a(64, 'a');

std::string refused(const pyenv::HashedRequirement& r) {
    auto line = pyenv::hashed_requirement_line(r);
    REQUIRE_FALSE(line);
    return line.error().message;
}

}  // namespace

TEST_CASE("requirement line: a pin, a plain path, a path as a file URL, a marker, every hash") {
    CHECK(pyenv::hashed_requirement_line({"demo-core", "1.0.0", "", "", {k_a, k_a}}).value() ==
          "demo-core==1.0.0 --hash=sha256:" + k_a + " --hash=sha256:" + k_a);
    CHECK(pyenv::hashed_requirement_line({"x", "1.0", "/s/x-1.0-py3-none-any.whl", "", {k_a}}).value() ==
          "/s/x-1.0-py3-none-any.whl --hash=sha256:" + k_a);
    CHECK(pyenv::hashed_requirement_line({"x", "1.0", "/s/a b#\"%@/x-1.0-py3-none-any.whl", "", {k_a}}).value() ==
          "x @ file:///s/a%20b%23%22%25%40/x-1.0-py3-none-any.whl --hash=sha256:" + k_a);
    CHECK(pyenv::hashed_requirement_line({"x", "1.0", "", "sys_platform=='linux'", {k_a}}).value() ==
          "x==1.0 ; sys_platform == \"linux\" --hash=sha256:" + k_a);
}

TEST_CASE("requirement line: a value that would be another line, an option or a comment is refused") {
    CHECK(refused({"x", "1.0", "/s/x.whl\ndemo-utils==1.0.0", "", {k_a}}) ==
          "x: wheel path holds a control character (U+000A at byte 8): not written to a requirements file");
    CHECK(refused({"x", "1.0\n--extra-index-url=http://evil/", "", "", {k_a}}).find("control character") !=
          std::string::npos);
    CHECK(refused({"x", "1.0", "", "", {k_a + "\n--extra-index-url=http://evil/"}}).find("is not 64 hex digits") !=
          std::string::npos);
    CHECK(refused({"x\ny", "1.0", "", "", {k_a}}) ==
          "x\ny: the name is not a PEP 508 name: not written to a "
          "requirements file");
    CHECK(refused({"x", "1.0", "-r/etc/x.whl", "", {k_a}}).find("starts with '-'") != std::string::npos);
    CHECK(refused({"x", "1.0", "rel/x.whl", "", {k_a}}).find("is not absolute") != std::string::npos);
    CHECK(refused({"x", "1.0", "", "sys_platform == ' --index-url=http://evil/'", {k_a}})
              .find("has a word an installer reads as an option or a comment") != std::string::npos);
    CHECK(refused({"x", "1.0", "", "sys_platform == ' #'", {k_a}}).find("or a comment") != std::string::npos);
    CHECK(refused({"x", "1.0", "", "", {}}) == "x: no sha256: not written to a requirements file");
    CHECK(pyenv::unsafe_installer_value("ok") == std::nullopt);
    CHECK(pyenv::unsafe_installer_value("a\x7f") == "holds a control character (U+007F at byte 1)");
}
