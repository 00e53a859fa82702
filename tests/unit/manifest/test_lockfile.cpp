// Lockfiles (schema 2): per-step coverage and closures survive a round trip; what a reader
// cannot trust is refused with the file's name.
#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "manifest/lockfile.hpp"

namespace fs = std::filesystem;
using namespace bootstrap::manifest;
using bootstrap::core::TempDir;

namespace {

Lockfile sample() {
    Lockfile lock;
    lock.recipe_name = "r";
    lock.recipe_digest = std::string(64, 'a');
    lock.python_version = "3.12.1";
    lock.platform = "linux-x86_64";
    Origin index;
    index.kind = bootstrap::manifest::OriginKind::index;
    index.index_urls = {"https://pypi.org/simple"};
    index.step = "idna";
    lock.packages["idna"] = {"idna", "3.10", "idna-3.10-py3-none-any.whl", std::string(64, 'b'), index};
    index.step = "web";
    lock.packages["requests"] = {"requests", "2.32.3", "requests-2.32.3-py3-none-any.whl", std::string(64, 'c'), index};
    lock.steps["web"] = {true, false, "", {"idna", "requests"}};
    lock.steps["idna"] = {true, false, "", {"idna"}};
    lock.steps["venv"] = {true, false, "", {}};
    lock.steps["nvrx"] = {false, true, "optional step failed on 2026-12-01: no solution", {}};
    lock.steps["apex"] = {false, false, "not run", {}};
    return lock;
}

}  // namespace

TEST_CASE("lockfile: steps, their closures and what is not covered survive a round trip") {
    TempDir tmp("bs-lockfile");
    const auto file = tmp.path() / "r.lock.json";
    REQUIRE(save_lockfile(file, sample()));
    auto back = load_lockfile(file);
    REQUIRE(back);
    CHECK(back->schema == 2);
    CHECK(back->file == file);
    CHECK(back->steps.at("web").packages == std::vector<std::string>{"idna", "requests"});
    CHECK(back->steps.at("venv").covered);
    CHECK(back->steps.at("venv").packages.empty());
    CHECK_FALSE(back->steps.at("nvrx").covered);
    CHECK(back->steps.at("nvrx").optional);
    CHECK(back->steps.at("nvrx").why == "optional step failed on 2026-12-01: no solution");
    CHECK_FALSE(back->steps.at("apex").optional);
    CHECK(to_json(*back) == to_json(sample()));
}

TEST_CASE("lockfile: schema 1 reads (for the message), a newer schema and a step naming no locked package do not") {
    TempDir tmp("bs-lockfile");
    const auto file = tmp.path() / "r.lock.json";
    REQUIRE(bootstrap::core::write_file_atomic(
        file, R"({"schema": 1, "recipe": {"name": "r", "digest": "d"}, "python": {}, "packages": {}})"));
    auto v1 = load_lockfile(file);
    REQUIRE(v1);
    CHECK(v1->schema == 1);
    CHECK(v1->steps.empty());

    REQUIRE(bootstrap::core::write_file_atomic(
        file, R"({"schema": 3, "recipe": {"name": "r", "digest": "d"}, "python": {}, "packages": {}})"));
    auto v3 = load_lockfile(file);
    REQUIRE_FALSE(v3);
    CHECK(v3.error().message.find("schema 3 is newer") != std::string::npos);

    REQUIRE(bootstrap::core::write_file_atomic(
        file, R"({"schema": 2, "recipe": {"name": "r", "digest": "d"}, "python": {}, "packages": {},
                  "steps": {"web": {"packages": ["requests"]}}})"));
    auto dangling = load_lockfile(file);
    REQUIRE_FALSE(dangling);
    CHECK(dangling.error().message ==
          file.string() + ": not a valid lockfile: steps.web.packages: names requests, which is not locked");
}

TEST_CASE("lockfile: every wheel a pylock allows is a --hash, and a marker or a source tree relaxes drift") {
    const std::string aa(64, 'a'), bb(64, 'b'), cc(64, 'c');
    LockedPackage core{"demo-core", "1.0.0", "demo_core-1.0.0-py3-none-any.whl", aa, {}};
    core.more_sha256 = {bb, cc};
    CHECK(locked_requirements({&core}, {}).value() ==
          "demo-core==1.0.0 --hash=sha256:" + aa + " --hash=sha256:" + bb + " --hash=sha256:" + cc + "\n");

    Lockfile lock;
    lock.packages["demo-core"] = core;
    lock.packages["win-only"] = {"win-only", "1.0", "w.whl", "dd", {}};
    lock.packages["win-only"].marker = "sys_platform == 'win32'";
    lock.packages["myproject"] = {"myproject", "", "", "", {}};  // a pylock's directory entry
    Manifest venv;
    venv.packages["demo-core"].version = "1.0.0";
    venv.packages["myproject"].version = "0.3.dev1";
    CHECK(lock_drift(lock, venv).empty());
    venv.packages.erase("myproject");
    CHECK(lock_drift(lock, venv) == std::vector<std::string>{"myproject is locked but not installed"});
}

TEST_CASE("lockfile: the wheel's URL and its index survive the JSON") {
    TempDir tmp("bs-lockfile");
    auto lock = sample();
    lock.packages["idna"].url = "https://files.example/idna-3.10-py3-none-any.whl";
    lock.packages["idna"].index = "https://pypi.org/simple";
    const auto file = tmp.path() / "r.lock.json";
    REQUIRE(save_lockfile(file, lock));
    auto back = load_lockfile(file);
    REQUIRE(back);
    CHECK(back->packages.at("idna").url == lock.packages["idna"].url);
    CHECK(back->packages.at("idna").index == "https://pypi.org/simple");
    CHECK(back->packages.at("requests").url.empty());
}
