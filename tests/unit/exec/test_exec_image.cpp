#include <catch2/catch.hpp>

#include <cstring>

#include "exec/exec_image.hpp"

using namespace bootstrap;

TEST_CASE("ExecImage: NUL-terminated argv and NAME=value envp that own their strings") {
    std::vector<std::string> argv{"prog", "a b", ""};
    exec::EnvMap env{{"B", "2"}, {"A", "x=y"}};
    exec::ExecImage image(argv, env);
    argv.clear();  // the image keeps its own copies
    env.clear();
    char* const* a = image.argv();
    REQUIRE(a[0] != nullptr);
    CHECK(std::strcmp(a[0], "prog") == 0);
    CHECK(std::strcmp(a[1], "a b") == 0);
    CHECK(std::strcmp(a[2], "") == 0);
    CHECK(a[3] == nullptr);
    char* const* e = image.envp();
    CHECK(std::strcmp(e[0], "A=x=y") == 0);
    CHECK(std::strcmp(e[1], "B=2") == 0);
    CHECK(e[2] == nullptr);
}

TEST_CASE("replace_process names a program it cannot find, and the PATH searched") {
    auto err = exec::replace_process({"surely-not-a-program-xyz"}, {{"PATH", "/nonexistent-dir"}});
    CHECK(err.code == ErrorCode::not_found);
    CHECK(err.message == "surely-not-a-program-xyz not found on PATH /nonexistent-dir");
    CHECK(exec::replace_process({}, {}).code == ErrorCode::usage);
}
