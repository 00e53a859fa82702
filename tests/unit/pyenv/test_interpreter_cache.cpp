#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>

#include "core/fs.hpp"
#include "pyenv/interpreter.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// A venv whose bin/python is a shell script answering the facts query and counting its runs.
fs::path fake_venv(const fs::path& root) {
    const fs::path venv = root / "venv";
    REQUIRE(core::write_file_atomic(venv / "pyvenv.cfg", "version_info = 3.11.2\n"));
    const fs::path python = venv / "bin" / "python";
    REQUIRE(core::write_file_atomic(python,
                                    "#!/bin/sh\necho run >> \"$(dirname \"$0\")/../runs\"\n"
                                    "printf 'version=3.11.2\\nversion_short=3.11\\nimplementation=cpython\\n"
                                    "purelib=/site\\nmarker.os_name=posix\\n'\n"));
    ::chmod(python.c_str(), 0755);
    return venv;
}

int runs(const fs::path& venv) {
    auto text = core::read_file(venv / "runs");
    if (!text) return 0;
    int n = 0;
    for (char c : *text) n += c == '\n';
    return n;
}

}  // namespace

TEST_CASE("python.facts is versioned JSON, an old-format file is a miss, rewritten") {
    core::TempDir tmp("bs-pyfacts");
    const fs::path venv = fake_venv(tmp.path());
    const exec::EnvMap env{{"PATH", "/usr/bin:/bin"}};
    const fs::path cache = venv / ".bootstrap" / "python.facts";

    auto first = pyenv::venv_facts(venv, env, true);
    REQUIRE(first);
    CHECK(first->version == "3.11.2");
    CHECK(first->markers.at("os_name") == "posix");
    CHECK(runs(venv) == 1);
    const std::string text = core::read_file(cache).value();
    CHECK(text.rfind("{", 0) == 0);
    CHECK(text.find("\"version\": 1") != std::string::npos);
    CHECK(text.find("\"marker.os_name\": \"posix\"") != std::string::npos);

    auto second = pyenv::venv_facts(venv, env, true);  // from the cache: no Python
    REQUIRE(second);
    CHECK(second->purelib == "/site");
    CHECK(runs(venv) == 1);

    // What an older bootstrap wrote ("stamp=..." and the answer's lines), or a damaged file.
    for (const std::string& old :
         {std::string("stamp=1:2:3/4:5:6\nversion=3.11.2\n"), std::string("{\"version\": 1, \"stamp\": "),
          std::string("{\"version\": 1, \"stamp\": 7, \"facts\": {}}")}) {
        REQUIRE(core::write_file_atomic(cache, old));
        const int before = runs(venv);
        auto again = pyenv::venv_facts(venv, env, true);
        REQUIRE(again);
        CHECK(again->version == "3.11.2");
        CHECK(runs(venv) == before + 1);
        CHECK(core::read_file(cache).value() == text);
    }
}
