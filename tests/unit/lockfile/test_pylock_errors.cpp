// A pylock.toml bootstrap cannot install from is refused with FILE:LINE:COL, every problem
// of the file at once.
#include <catch2/catch.hpp>

#include "lockfile/pylock.hpp"

using namespace bootstrap;

namespace {

const std::string k_sha(64, 'a');

/// The error's message and detail, for a text that must be refused.
std::string refused(const std::string& text) {
    auto lock = lockfile::parse_pylock(text, "/l/pylock.toml");
    REQUIRE_FALSE(lock.has_value());
    CHECK(lock.error().code == ErrorCode::usage);
    return lock.error().message + "\n" + lock.error().detail;
}

std::string wheel(const std::string& file) {
    return "wheels = [{ url = \"https://h/" + file + "\", hashes = { sha256 = \"" + k_sha + "\" } }]\n";
}

}  // namespace

TEST_CASE("pylock errors: no lock-version, an unknown major version, a TOML syntax error") {
    CHECK(refused("created-by = \"x\"\npackages = []\n") ==
          "not a valid pylock.toml: /l/pylock.toml:1:1: 'lock-version' is missing\n");
    CHECK(refused("# comment\nlock-version = \"2.0\"\ncreated-by = \"x\"\npackages = []\n") ==
          "not a valid pylock.toml: /l/pylock.toml:2:16: lock-version \"2.0\" is not supported: this bootstrap "
          "reads pylock.toml 1.x\n");
    const auto syntax = refused("lock-version = \"1.0\"\n[[packages]\n");
    CHECK(syntax.rfind("/l/pylock.toml:2:", 0) == 0);
    // A newer minor version reads.
    CHECK(lockfile::parse_pylock("lock-version = \"1.1\"\ncreated-by = \"x\"\npackages = []\n", "/l/pylock.toml"));
}

TEST_CASE("pylock errors: a package without version or wheels, a wheel without url or path, bad hashes") {
    const auto text =
        "lock-version = \"1.0\"\n"                  // 1
        "created-by = \"x\"\n"                      // 2
        "\n"                                        // 3
        "[[packages]]\n"                            // 4
        "name = \"no-version\"\n" +                 // 5
        wheel("no_version-1.0-py3-none-any.whl") +  // 6
        "\n[[packages]]\n"                          // 7, 8
        "name = \"no-wheels\"\n"                    // 9
        "version = \"1.0\"\n"                       // 10
        "\n[[packages]]\n"                          // 11, 12
        "name = \"bad-hash\"\n"                     // 13
        "version = \"1.0\"\n"                       // 14
        "wheels = [{ url = \"https://h/bad_hash-1.0-py3-none-any.whl\", hashes = { sha256 = \"abc\" } }]\n"
        "\n[[packages]]\n"  // 16, 17
        "name = \"md5-only\"\n"
        "version = \"1.0\"\n"
        "wheels = [{ url = \"https://h/md5_only-1.0-py3-none-any.whl\", hashes = { md5 = \"abc\" } }]\n"
        "\n[[packages]]\n"  // 21, 22
        "name = \"nowhere\"\n"
        "version = \"1.0\"\n"
        "wheels = [{ name = \"nowhere-1.0-py3-none-any.whl\", hashes = { sha256 = \"" +
        k_sha + "\" } }]\n";
    const auto error = refused(text);
    INFO(error);
    CHECK(error.rfind("not a valid pylock.toml: /l/pylock.toml:4:1: package no-version: 'version' is missing "
                      "(bootstrap pins every package by version) (and 4 more problem(s))\n",
                      0) == 0);
    CHECK(error.find("\n/l/pylock.toml:8:1: package no-wheels: no 'wheels', 'sdist' nor 'directory'\n") !=
          std::string::npos);
    CHECK(error.find("\n/l/pylock.toml:15:") != std::string::npos);
    CHECK(error.find("package bad-hash: wheel bad_hash-1.0-py3-none-any.whl: hashes.sha256 is not 64 hex digits") !=
          std::string::npos);
    CHECK(error.find("/l/pylock.toml:20:") != std::string::npos);
    CHECK(error.find("package md5-only: wheel md5_only-1.0-py3-none-any.whl: no sha256 in 'hashes' (bootstrap "
                     "checks sha256)") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:25:") != std::string::npos);
    CHECK(error.find("package nowhere: a wheel needs a 'url' or a 'path'") != std::string::npos);
}

TEST_CASE("pylock errors: sources bootstrap does not install, a wheel of another release, a duplicate") {
    const auto text =
        "lock-version = \"1.0\"\ncreated-by = \"x\"\n"
        "[[packages]]\nname = \"from-git\"\nvcs = { type = \"git\", url = \"https://g\", commit-id = "
        "\"abc\" }\n"  // 3-5
        "[[packages]]\nname = \"sdist-only\"\nversion = \"1.0\"\nsdist = { url = \"https://h/s.tar.gz\", "
        "hashes = { sha256 = \"" +
        k_sha +
        "\" } }\n"  // 6-9
        "[[packages]]\nname = \"other\"\nversion = \"1.0\"\n" +
        wheel("other-2.0-py3-none-any.whl") +  // 10-13
        "[[packages]]\nname = \"other\"\nversion = \"2.0\"\n" + wheel("other-2.0-py3-none-any.whl");
    const auto error = refused(text);
    INFO(error);
    CHECK(error.find("/l/pylock.toml:5:7: package from-git: a 'vcs' source: bootstrap installs a pylock's wheels "
                     "only") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:9:9: package sdist-only: sdist: s.tar.gz is not an sdist of sdist-only 1.0") !=
          std::string::npos);
    CHECK(error.find("package other: other-2.0-py3-none-any.whl is not a wheel of other 1.0") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:14:1: package other is listed twice (also at line 10)") != std::string::npos);
}

TEST_CASE("pylock errors: bootstrap's own tables are checked too") {
    const auto text =
        "lock-version = \"1.0\"\ncreated-by = \"bootstrap\"\npackages = []\n"
        "[tool.bootstrap]\nschema = 9\nrecipe = \"r\"\n"  // 4-6
        "[tool.bootstrap.steps.web]\npackages = [\"requests\"]\n";
    const auto error = refused(text);
    INFO(error);
    CHECK(error.find("/l/pylock.toml:5:10: tool.bootstrap: schema 9 is not one this bootstrap reads (1 to 2)") !=
          std::string::npos);
    CHECK(error.find("tool.bootstrap: 'recipe-digest' is missing") != std::string::npos);
    CHECK(error.find("tool.bootstrap: step web: names requests, which is not locked") != std::string::npos);
}
