#include <catch2/catch.hpp>

#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>

#include "core/fs.hpp"
#include "pyenv/tool_version.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// A fake tool that prints `version` and counts its calls in `calls`.
fs::path fake_tool(const fs::path& dir, const std::string& version) {
    const fs::path tool = dir / "tool";
    std::ofstream(tool) << "#!/bin/sh\necho x >> " << (dir / "calls").string() << "\nprintf '" << version << "'\n";
    fs::permissions(tool, fs::perms::owner_all);
    return tool;
}

size_t calls(const fs::path& dir) {
    std::ifstream in(dir / "calls");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

}  // namespace

TEST_CASE("version_line picks the release line, else the first") {
    CHECK(pyenv::version_line("uv 0.9.5\n") == "uv 0.9.5");
    CHECK(pyenv::version_line("\n  gcc (Debian 12.2.0-14) 12.2.0\nCopyright\n") == "gcc (Debian 12.2.0-14) 12.2.0");
    CHECK(pyenv::version_line("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025\n"
                              "Cuda compilation tools, release 13.0, V13.0.48\n") ==
          "Cuda compilation tools, release 13.0, V13.0.48");
    CHECK(pyenv::version_line("") == "");
}

TEST_CASE("a tool is known by its version, asked once per stat, and a touch asks again and agrees") {
    core::TempDir dir("bs-tool");
    const fs::path tool = fake_tool(dir.path(), "tool 1.2.3\\n");
    const fs::path cache = dir.path() / "home" / "tool-versions.json";
    {
        pyenv::ToolVersions tools(cache, true);
        CHECK(tools.version(tool.string()) == "tool 1.2.3");
        CHECK(tools.version(tool.string()) == "tool 1.2.3");
        CHECK(calls(dir.path()) == 1);
        tools.save();
    }
    {
        pyenv::ToolVersions tools(cache, true);  // another process: the file answers
        CHECK(tools.version(tool.string()) == "tool 1.2.3");
        CHECK(calls(dir.path()) == 1);
    }
    struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};  // touch -d
    REQUIRE(::utimensat(AT_FDCWD, tool.c_str(), times, 0) == 0);
    pyenv::ToolVersions tools(cache, false);
    CHECK(tools.version(tool.string()) == "tool 1.2.3");
    CHECK(calls(dir.path()) == 2);
}

TEST_CASE("a tool that cannot say is known by its file, a missing one by its name") {
    core::TempDir dir("bs-tool");
    const fs::path tool = fake_tool(dir.path(), "");
    pyenv::ToolVersions tools({}, false);
    auto silent = tools.version(tool.string());
    REQUIRE(silent);
    CHECK(silent->starts_with(tool.string() + " "));
    CHECK(tools.version((dir.path() / "nope").string()) == (dir.path() / "nope").string() + " (not found)");
    CHECK(tools.version("relative") == "relative (not found)");
}

TEST_CASE("plan's cache is read, never written") {
    core::TempDir dir("bs-tool");
    const fs::path tool = fake_tool(dir.path(), "tool 2\\n");
    const fs::path cache = dir.path() / "tool-versions.json";
    pyenv::ToolVersions tools(cache, false);
    CHECK(tools.version(tool.string()) == "tool 2");
    tools.save();
    CHECK_FALSE(fs::exists(cache));
}
