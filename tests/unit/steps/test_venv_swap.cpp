#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "steps/venv_swap.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {
void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}
std::string read(const fs::path& p) { return core::read_file(p).value_or("<missing>"); }

/// An "old" venv with bootstrap state beside it.
fs::path old_venv(const core::TempDir& dir) {
    fs::path venv = dir.path() / "venv";
    write(venv / "pyvenv.cfg", "version = 3.11.7\n");
    write(venv / "bin" / "python", "old python");
    write(venv / ".bootstrap" / "journal.json", "{}");
    return venv;
}
}  // namespace

TEST_CASE("a failed recreation leaves the old venv as it was", "[venv_swap]") {
    core::TempDir dir;
    auto venv = old_venv(dir);
    auto r = steps::recreate_venv(venv, [&]() -> Status {
        write(venv / "pyvenv.cfg", "version = 3.99\n");  // a partial new venv
        return fail(ErrorCode::step_failed, "uv venv: no interpreter for 3.99");
    });
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "uv venv: no interpreter for 3.99");
    CHECK(read(venv / "pyvenv.cfg") == "version = 3.11.7\n");
    CHECK(read(venv / "bin" / "python") == "old python");
    CHECK(read(venv / ".bootstrap" / "journal.json") == "{}");
    CHECK_FALSE(fs::exists(venv / ".bootstrap" / "recreate-old"));
}

TEST_CASE("a successful recreation replaces everything but .bootstrap", "[venv_swap]") {
    core::TempDir dir;
    auto venv = old_venv(dir);
    auto r = steps::recreate_venv(venv, [&]() -> Status {
        CHECK_FALSE(fs::exists(venv / "bin"));  // made in place, on an empty venv dir
        write(venv / "pyvenv.cfg", "version = 3.12.1\n");
        return {};
    });
    REQUIRE(r);
    CHECK(read(venv / "pyvenv.cfg") == "version = 3.12.1\n");
    CHECK_FALSE(fs::exists(venv / "bin"));
    CHECK(read(venv / ".bootstrap" / "journal.json") == "{}");
    for (const auto& e : fs::directory_iterator(venv / ".bootstrap")) CHECK(e.path().filename() == "journal.json");
}

TEST_CASE("a recreation killed midway is undone by the next venv step", "[venv_swap]") {
    core::TempDir dir;
    auto venv = old_venv(dir);
    // What SIGKILL leaves: the old entries aside, a partial new venv in place.
    fs::create_directories(venv / ".bootstrap" / "recreate-old");
    fs::rename(venv / "bin", venv / ".bootstrap" / "recreate-old" / "bin");
    fs::rename(venv / "pyvenv.cfg", venv / ".bootstrap" / "recreate-old" / "pyvenv.cfg");
    write(venv / "pyvenv.cfg", "partial");
    auto restored = steps::restore_unfinished_recreate(venv);
    REQUIRE(restored);
    CHECK(*restored);
    CHECK(read(venv / "pyvenv.cfg") == "version = 3.11.7\n");
    CHECK(read(venv / "bin" / "python") == "old python");
    auto again = steps::restore_unfinished_recreate(venv);
    REQUIRE(again);
    CHECK_FALSE(*again);
}

TEST_CASE("a venv path whose contents may not be replaced is refused, naming why", "[venv_swap]") {
    core::TempDir dir;
    const fs::path home = dir.path() / "home" / "alice";
    const fs::path project = home / "proj";
    fs::create_directories(project / "sub");
    const fs::path cwd = project / "sub";
    auto why = [&](const fs::path& venv) {
        auto r = steps::check_replaceable(venv, home, project, cwd);
        return r ? std::string() : r.error().message;
    };
    CHECK(why("/").find("the root of the file system") != std::string::npos);
    CHECK(why("/etc").find("it is a system directory (/etc)") != std::string::npos);
    CHECK(why("/usr/").find("it is a system directory (/usr)") != std::string::npos);
    CHECK(why(home).find("it is the home directory") != std::string::npos);
    CHECK(why(home / "").find("it is the home directory") != std::string::npos);
    CHECK(why(dir.path() / "home").find("an ancestor of the home directory") != std::string::npos);
    CHECK(why(project).find("it is the recipe's directory") != std::string::npos);
    CHECK(why(cwd).find("it is the current directory") != std::string::npos);
    CHECK(why(home / "proj" / ".." / "proj").find("it is the recipe's directory") != std::string::npos);
    // Through a symlink too.
    fs::create_directory_symlink(home, dir.path() / "link");
    CHECK(why(dir.path() / "link").find("it is the home directory") != std::string::npos);
    // A directory of its own is fine, inside any of them.
    CHECK(why(home / ".venvs" / "x").empty());
    CHECK(why(project / "venv").empty());
    CHECK(why(cwd / "venv").empty());
    CHECK(steps::check_replaceable("/opt/venv", "", "", "").has_value());
}
