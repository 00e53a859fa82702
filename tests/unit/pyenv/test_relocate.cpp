#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "core/fs.hpp"
#include "pyenv/relocate.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

TEST_CASE("relocate_venv in a staging directory writes the final path, keeping modes") {
    core::TempDir tmp("relocate");
    fs::path staging = tmp.path() / ".stage";
    REQUIRE(core::write_file_atomic(staging / "pyvenv.cfg", "home = /usr/bin\n"));
    REQUIRE(core::write_file_atomic(staging / "bin" / "activate", "VIRTUAL_ENV='/build/venv'\nexport VIRTUAL_ENV\n"));
    REQUIRE(core::write_file_atomic(staging / "bin" / "tool", "#!/build/venv/bin/python\nimport tool\n", 0755));
    REQUIRE(core::write_file_atomic(staging / "bin" / "near-miss", "#!/build/venv2/bin/python\n", 0700));

    auto report = pyenv::relocate_venv(staging, {}, "/nodes/n3/venv/");
    REQUIRE(report);
    CHECK(report->old_prefix == "/build/venv");
    CHECK(report->rewritten.size() == 2);
    CHECK(*core::read_file(staging / "bin" / "tool") == "#!/nodes/n3/venv/bin/python\nimport tool\n");
    CHECK(*core::read_file(staging / "bin" / "activate") == "VIRTUAL_ENV='/nodes/n3/venv'\nexport VIRTUAL_ENV\n");
    CHECK(*core::read_file(staging / "bin" / "near-miss") == "#!/build/venv2/bin/python\n");
    struct stat st {};
    REQUIRE(::stat((staging / "bin" / "tool").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
    REQUIRE(::stat((staging / "bin" / "near-miss").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
}

TEST_CASE("relocate_venv refuses a directory that is not a venv and rewrites nothing") {
    core::TempDir tmp("relocate");
    const fs::path dir = tmp.path() / "tools";
    REQUIRE(core::write_file_atomic(dir / "bin" / "activate", "VIRTUAL_ENV='/build/venv'\n"));
    REQUIRE(core::write_file_atomic(dir / "bin" / "tool", "#!/build/venv/bin/python\n", 0755));
    auto report = pyenv::relocate_venv(dir, {}, "/nodes/n3/venv");
    REQUIRE_FALSE(report);
    CHECK(report.error().code == ErrorCode::usage);
    CHECK(report.error().message == dir.string() +
                                        " is not a venv (it has no pyvenv.cfg): refusing to rewrite the "
                                        "scripts in its bin/");
    CHECK(*core::read_file(dir / "bin" / "tool") == "#!/build/venv/bin/python\n");
}

TEST_CASE("prefix_positions matches whole paths only") {
    CHECK(pyenv::prefix_positions("#!/a/venv/bin/python /a/venv2 '/a/venv'", "/a/venv") == std::vector<size_t>{2, 31});
    CHECK(pyenv::prefix_positions("anything", "").empty());
}
