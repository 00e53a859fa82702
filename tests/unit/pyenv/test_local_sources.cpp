#include <catch2/catch.hpp>

#include <map>

#include "core/fs.hpp"
#include "pyenv/local_sources.hpp"
#include "pyenv/record.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// A dist-info in `site` with `files` (site-relative path -> content) recorded in its RECORD.
void install(const fs::path& site, const std::string& name, const std::map<std::string, std::string>& files,
             const std::string& direct_url) {
    const std::string info = name + "-1.0.dist-info";
    std::map<std::string, std::string> all = files;
    all[info + "/METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n";
    if (!direct_url.empty()) all[info + "/direct_url.json"] = direct_url;
    std::string record;
    for (const auto& [path, text] : all) {
        REQUIRE(core::write_file_atomic(site / path, text));
        record += path + "," + pyenv::record_hash(text) + "," + std::to_string(text.size()) + "\n";
    }
    record += info + "/RECORD,,\n";
    REQUIRE(core::write_file_atomic(site / info / "RECORD", record));
}

}  // namespace

TEST_CASE("find_local_sources reads editable installs: a .pth line, a setuptools finder, no PEP 610 record") {
    core::TempDir tmp("local-sources");
    const fs::path site = tmp.path() / "lib" / "python3.11" / "site-packages";
    // setuptools' flat layout (Megatron-LM): an import line and a finder whose MAPPING names the tree.
    install(site, "megatron-core",
            {{"__editable__.megatron_core-1.0.pth",
              "import __editable___megatron_core_1_0_finder; "
              "__editable___megatron_core_1_0_finder.install()\n"},
             {"__editable___megatron_core_1_0_finder.py", "MAPPING = {'megatron': '/src/Megatron LM/megatron'}\n"}},
            R"({"url":"file:///src/Megatron%20LM","dir_info":{"editable":true}})");
    // src layout / hatchling: a .pth line.
    install(site, "edpkg", {{"_edpkg.pth", "/work/edpkg/src\n"}, {"edpkg/__init__.py", ""}},
            R"({"url":"file:///work/edpkg","dir_info":{"editable":true}})");
    // A non-editable install from a directory: its files are in site-packages, nothing leaned on.
    install(site, "copied", {{"copied/__init__.py", ""}}, R"({"url":"file:///work/copied","dir_info":{}})");
    // An index install with a .pth of its own naming a directory inside site-packages.
    install(site, "inner", {{"inner.pth", (site / "inner_dir").string() + "\n"}}, "");
    // An older installer: no direct_url.json, a .pth naming a directory outside.
    install(site, "legacy", {{"legacy.pth", "/opt/legacy\n"}}, "");

    auto found = pyenv::find_local_sources(site);
    REQUIRE(found);
    REQUIRE(found->size() == 3);
    CHECK((*found)[0].name == "edpkg");
    CHECK((*found)[0].path == "/work/edpkg");
    CHECK((*found)[0].files == std::vector<std::string>{"_edpkg.pth", "edpkg-1.0.dist-info/direct_url.json"});
    CHECK((*found)[1].name == "legacy");
    CHECK((*found)[1].path == "/opt/legacy");
    CHECK((*found)[2].name == "megatron-core");
    CHECK((*found)[2].path == "/src/Megatron LM");
    CHECK((*found)[2].files == std::vector<std::string>{"__editable___megatron_core_1_0_finder.py",
                                                        "megatron-core-1.0.dist-info/direct_url.json"});
}

TEST_CASE("repoint_local_source rewrites the finder, the .pth and direct_url.json, and their RECORD rows") {
    core::TempDir tmp("local-sources");
    const fs::path site = tmp.path() / "site-packages";
    install(site, "megatron-core",
            {{"__editable___megatron_core_1_0_finder.py",
              "MAPPING = {'megatron': '/src/Megatron LM/megatron'}\nOTHER = '/src/Megatron LM2'\n"}},
            R"({"url":"file:///src/Megatron%20LM","dir_info":{"editable":true}})");
    install(site, "edpkg", {{"_edpkg.pth", "/work/edpkg/src\n"}}, "");
    auto found = pyenv::find_local_sources(site);
    REQUIRE(found);
    REQUIRE(found->size() == 2);

    auto n = pyenv::repoint_local_source(site, (*found)[1], "/nodes/n1/venv/src/megatron-core");
    REQUIRE(n);
    CHECK(*n == 2);
    const std::string finder = *core::read_file(site / "__editable___megatron_core_1_0_finder.py");
    CHECK(finder ==
          "MAPPING = {'megatron': '/nodes/n1/venv/src/megatron-core/megatron'}\nOTHER = '/src/Megatron LM2'\n");
    const std::string direct_url = *core::read_file(site / "megatron-core-1.0.dist-info" / "direct_url.json");
    CHECK(direct_url == R"({"dir_info":{"editable":true},"url":"file:///nodes/n1/venv/src/megatron-core"})");
    const std::string record = *core::read_file(site / "megatron-core-1.0.dist-info" / "RECORD");
    CHECK(record.find("__editable___megatron_core_1_0_finder.py," + pyenv::record_hash(finder) + "," +
                      std::to_string(finder.size())) != std::string::npos);
    CHECK(record.find("megatron-core-1.0.dist-info/direct_url.json," + pyenv::record_hash(direct_url)) !=
          std::string::npos);

    // The legacy one (no direct_url.json): the directory its .pth names is the source.
    n = pyenv::repoint_local_source(site, (*found)[0], "/elsewhere/edpkg");
    REQUIRE(n);
    CHECK(*n == 1);
    CHECK(*core::read_file(site / "_edpkg.pth") == "/elsewhere/edpkg\n");
    auto again = pyenv::find_local_sources(site);
    REQUIRE(again);
    CHECK((*again)[0].path == "/elsewhere/edpkg");
    CHECK((*again)[1].path == "/nodes/n1/venv/src/megatron-core");
}

TEST_CASE("file URLs and paths convert both ways") {
    CHECK(pyenv::file_url_to_path("file:///a%20b/c") == fs::path("/a b/c"));
    CHECK(pyenv::file_url_to_path("file://localhost/x") == fs::path("/x"));
    CHECK_FALSE(pyenv::file_url_to_path("file://host/x"));
    CHECK_FALSE(pyenv::file_url_to_path("https://example.org/x"));
    CHECK(pyenv::path_to_file_url("/a b/c+d") == "file:///a%20b/c%2Bd");
}
