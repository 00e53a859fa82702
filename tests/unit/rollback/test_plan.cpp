#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "rollback/plan.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using rollback::InstallSource;

namespace {

const std::string k_index = "http://127.0.0.1:1/main/simple";

manifest::Package pkg(const std::string& name, const std::string& version, const std::string& record = "r-",
                      const std::string& kind = "index") {
    manifest::Package p;
    p.name = name;
    p.display_name = name;
    p.version = version;
    p.record_sha256 = record == "r-" ? "r-" + name + "-" + version : record;
    p.wheel_tag = "py3-none-any";
    p.origin.kind = bootstrap::manifest::parse_origin_kind(kind);
    if (kind == "index") p.origin.index_urls = {k_index};
    return p;
}

manifest::Manifest manifest_of(std::vector<manifest::Package> pkgs) {
    manifest::Manifest m;
    for (auto& p : pkgs) m.packages[p.name] = p;
    return m;
}

fs::path write_file(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

}  // namespace

TEST_CASE("rollback plan: removals, missing, version changes and reinstalls") {
    auto target = manifest_of(
        {pkg("demo-core", "1.0.0"), pkg("demo-utils", "1.0.0"), pkg("regex", "2024.1.0"), pkg("same", "1.0")});
    auto changed_regex = pkg("regex", "2024.1.0", "other-record");
    auto current = manifest_of(
        {pkg("demo-core", "2.0.0"), changed_regex, pkg("same", "1.0"), pkg("wandb", "0.22.0"), pkg("click", "8.1.7")});
    rollback::RollbackSources sources;
    auto plan = rollback::plan_rollback(target, current, sources);

    REQUIRE(plan.remove.size() == 2);
    CHECK(plan.remove[0].name == "click");
    CHECK(plan.remove[0].version == "8.1.7");
    CHECK(plan.remove[1].name == "wandb");
    REQUIRE(plan.install.size() == 3);
    CHECK(plan.install[0].name == "demo-core");
    CHECK(plan.install[0].reason == "2.0.0 -> 1.0.0");
    CHECK(plan.install[0].current == "2.0.0");
    CHECK(plan.install[1].name == "demo-utils");
    CHECK(plan.install[1].reason == "missing");
    CHECK(plan.install[1].current.empty());
    CHECK(plan.install[2].name == "regex");
    CHECK(plan.install[2].reason == "reinstall: RECORD differs");
    // Only an equal installed version needs the installer told to reinstall.
    CHECK_FALSE(plan.install[0].reinstall);
    CHECK_FALSE(plan.install[1].reinstall);
    CHECK(plan.install[2].reinstall);
    for (const auto& i : plan.install) {
        CHECK(i.source.kind == InstallSource::Kind::index);
        CHECK(i.source.index_urls == std::vector<std::string>{k_index});
    }
    CHECK(plan.unreachable.empty());
    CHECK(plan.summary() == "2 to remove, 3 to install");
    CHECK(plan.format() ==
          "  - click 8.1.7 (remove)\n"
          "  - wandb 0.22.0 (remove)\n"
          "  ~ demo-core 1.0.0 (2.0.0 -> 1.0.0) from index " +
              k_index +
              "\n"
              "  + demo-utils 1.0.0 (missing) from index " +
              k_index +
              "\n"
              "  ~ regex 2024.1.0 (reinstall: RECORD differs) from index " +
              k_index + "\n");
}

TEST_CASE("rollback plan: identical manifests plan nothing, equal PEP 440 spellings are kept") {
    auto target = manifest_of({pkg("a", "1.0"), pkg("b", "2.0", "")});
    auto current = manifest_of({pkg("a", "1.0"), pkg("b", "2.0", "unknown-before")});
    auto plan = rollback::plan_rollback(target, current, {});
    CHECK(plan.empty());
    CHECK(plan.unreachable.empty());
    CHECK(plan.summary() == "nothing to do");
}

TEST_CASE("rollback plan: --index-url overrides recorded indexes and serves unknown origins") {
    auto target = manifest_of({pkg("a", "1.0"), pkg("b", "1.0", "r-", "unknown")});
    rollback::RollbackSources sources;
    sources.index_url = "http://override/simple";
    auto plan = rollback::plan_rollback(target, manifest::Manifest{}, sources);
    REQUIRE(plan.install.size() == 2);
    for (const auto& i : plan.install) CHECK(i.source.index_urls == std::vector<std::string>{"http://override/simple"});
}

TEST_CASE("rollback plan: unknown origins are unreachable with the reason") {
    auto target = manifest_of({pkg("mystery", "3.1", "r-", "unknown")});
    auto index_without_url = pkg("lost", "1.0");
    index_without_url.origin.index_urls.clear();
    target.packages["lost"] = index_without_url;
    auto plan = rollback::plan_rollback(target, manifest::Manifest{}, {});
    CHECK(plan.install.empty());
    REQUIRE(plan.unreachable.size() == 2);
    CHECK(plan.unreachable[0].name == "lost");
    CHECK(plan.unreachable[0].why == "it came from an index that was not recorded; give --index-url or --find-links");
    CHECK(plan.unreachable[1].name == "mystery");
    CHECK(plan.unreachable[1].version == "3.1");
    CHECK(plan.unreachable[1].why ==
          "its origin is unknown (no index or URL recorded); give --index-url or --find-links");
    CHECK(plan.summary() == "2 unreachable");
    CHECK(plan.format().find("  ! mystery 3.1: cannot be restored: its origin is unknown") != std::string::npos);
}

TEST_CASE("rollback plan: local wheels come from the original file, then the artifact store") {
    core::TempDir tmp("bs-rollback-plan");
    auto built = write_file(tmp.path() / "dist" / "mylocal-1.0-py3-none-any.whl", "built wheel");
    auto sha = core::sha256_hex("built wheel");
    auto local = pkg("mylocal", "1.0", "r-", "local");
    local.origin.url = "file://" + built.string();
    local.origin.artifact_sha256 = sha;
    auto target = manifest_of({local});
    manifest::ArtifactStore store(tmp.path() / "store");
    rollback::RollbackSources sources;
    sources.store = &store;

    SECTION("original file present and unchanged") {
        auto plan = rollback::plan_rollback(target, {}, sources);
        REQUIRE(plan.install.size() == 1);
        CHECK(plan.install[0].source.kind == InstallSource::Kind::original_file);
        CHECK(plan.install[0].source.wheel == built);
    }
    SECTION("original gone, artifact kept") {
        auto stored = store.add(built);
        REQUIRE(stored);
        fs::remove(built);
        auto plan = rollback::plan_rollback(target, {}, sources);
        REQUIRE(plan.install.size() == 1);
        CHECK(plan.install[0].source.kind == InstallSource::Kind::artifact);
        CHECK(plan.install[0].source.wheel == *store.find(sha));
    }
    SECTION("original rebuilt with other bytes, artifact kept") {
        REQUIRE(store.add(built));
        write_file(built, "rebuilt wheel");
        auto plan = rollback::plan_rollback(target, {}, sources);
        REQUIRE(plan.install.size() == 1);
        CHECK(plan.install[0].source.kind == InstallSource::Kind::artifact);
    }
    SECTION("original gone, artifact missing: unreachable, naming both") {
        fs::remove(built);
        auto plan = rollback::plan_rollback(target, {}, sources);
        CHECK(plan.install.empty());
        REQUIRE(plan.unreachable.size() == 1);
        CHECK(plan.unreachable[0].why == built.string() + " no longer exists; artifact sha256:" + sha.substr(0, 12) +
                                             " is not in the store " + store.root().string());
    }
    SECTION("no artifact recorded and the file is gone") {
        target.packages["mylocal"].origin.artifact_sha256.clear();
        fs::remove(built);
        auto plan = rollback::plan_rollback(target, {}, sources);
        REQUIRE(plan.unreachable.size() == 1);
        CHECK(plan.unreachable[0].why == built.string() + " no longer exists; no copy was kept in the artifact store");
    }
}

TEST_CASE("rollback plan: --find-links wheels match name, version and recorded sha256") {
    core::TempDir tmp("bs-rollback-plan");
    const fs::path house = tmp.path() / "wheelhouse";
    auto core_whl = write_file(house / "demo_core-1.0.0-py3-none-any.whl", "core");
    write_file(house / "demo_core-2.0.0-py3-none-any.whl", "core2");
    write_file(house / "Other_Name-1.0-py3-none-any.whl", "other");
    auto target = manifest_of({pkg("demo-core", "1.0", "r-", "unknown"), pkg("other-name", "1.0", "r-", "unknown"),
                               pkg("absent", "1.0", "r-", "unknown")});
    rollback::RollbackSources sources;
    sources.find_links = {house};
    auto plan = rollback::plan_rollback(target, {}, sources);
    REQUIRE(plan.install.size() == 2);
    CHECK(plan.install[0].name == "demo-core");
    CHECK(plan.install[0].source.kind == InstallSource::Kind::find_links);
    CHECK(plan.install[0].source.wheel == core_whl);
    CHECK(plan.install[1].name == "other-name");
    REQUIRE(plan.unreachable.size() == 1);
    CHECK(plan.unreachable[0].why ==
          "no wheel of absent 1.0 in --find-links " + house.string() +
              "; its origin is unknown (no index or URL recorded); give --index-url or --find-links");

    SECTION("a wheel with the same name and version but other bytes is refused") {
        target.packages["demo-core"].origin.artifact_sha256 = core::sha256_hex("the real one");
        auto p = rollback::plan_rollback(target, {}, sources);
        REQUIRE(p.unreachable.size() == 2);
        CHECK(p.unreachable[1].name == "demo-core");
        const auto real = core::sha256_hex("the real one").substr(0, 12);
        CHECK(p.unreachable[1].why == "artifact sha256:" + real + " recorded but no artifact store given; " +
                                          core_whl.string() + " is not the recorded wheel (sha256 " +
                                          core::sha256_hex("core").substr(0, 12) + ", recorded " + real +
                                          "); its origin is unknown (no index or URL recorded); give --index-url or "
                                          "--find-links");
    }
}

TEST_CASE("rollback plan: vcs, remote URL and editable origins") {
    core::TempDir tmp("bs-rollback-plan");
    auto vcs = pkg("tool", "0.1", "r-", "vcs");
    vcs.origin.url = "https://example.invalid/tool.git";
    vcs.origin.vcs = "git";
    vcs.origin.commit = "abc123";
    auto remote = pkg("arch", "1.0", "r-", "url");
    remote.origin.url = "https://example.invalid/arch-1.0-py3-none-any.whl";
    auto editable = pkg("mine", "0.0.1", "r-", "editable");
    editable.origin.url = "file://" + tmp.path().string();
    auto gone = pkg("gone", "0.0.1", "r-", "editable");
    gone.origin.url = "file:///nonexistent/src";
    auto plan = rollback::plan_rollback(manifest_of({vcs, remote, editable, gone}), {}, {});
    REQUIRE(plan.install.size() == 3);
    CHECK(plan.install[0].name == "arch");
    CHECK(plan.install[0].source.kind == InstallSource::Kind::direct_url);
    CHECK(plan.install[0].source.url == remote.origin.url);
    CHECK(plan.install[1].name == "mine");
    CHECK(plan.install[1].source.kind == InstallSource::Kind::editable);
    CHECK(plan.install[1].source.url == tmp.path().string());
    CHECK(plan.install[2].source.url == "git+https://example.invalid/tool.git@abc123");
    REQUIRE(plan.unreachable.size() == 1);
    CHECK(plan.unreachable[0].why == "editable source /nonexistent/src no longer exists");
}

TEST_CASE("wheel file names (pyenv's PEP 427 parser) and file URLs") {
    core::TempDir tmp;
    for (const char* name :
         {"Demo_Core-2.1.0rc1-py3-none-any.whl", "demo_core-2.1rc1-cp311-cp311-linux_x86_64.whl",
          "demo_core-2.1.0-py3-none-any.whl", "demo_core-2.1.0rc1.tar.gz", "demo_core-2.1.0rc1-any.whl"})
        REQUIRE(core::write_file_atomic(tmp.path() / name, "x"));
    // The PEP 503 name and PEP 440 version decide; among equals the tag, then the file name.
    CHECK(rollback::find_wheel({tmp.path()}, "demo-core", "2.1.0rc1") ==
          tmp.path() / "Demo_Core-2.1.0rc1-py3-none-any.whl");
    CHECK(rollback::find_wheel({tmp.path()}, "demo-core", "2.1.0rc1", "cp311-cp311-linux_x86_64") ==
          tmp.path() / "demo_core-2.1rc1-cp311-cp311-linux_x86_64.whl");
    CHECK(rollback::find_wheel({tmp.path()}, "demo-core", "2.1") == tmp.path() / "demo_core-2.1.0-py3-none-any.whl");
    CHECK_FALSE(rollback::find_wheel({tmp.path()}, "demo-core", "2.2"));

    CHECK(rollback::file_url_path("file:///tmp/a%20b/x.whl") == fs::path("/tmp/a b/x.whl"));
    CHECK(rollback::file_url_path("file://localhost/tmp/x.whl") == fs::path("/tmp/x.whl"));
    CHECK_FALSE(rollback::file_url_path("https://h/x.whl"));
    CHECK_FALSE(rollback::file_url_path("file://otherhost/x.whl"));
}

TEST_CASE("package mismatches name every difference") {
    auto target = manifest_of({pkg("a", "1.0", "0123456789abcdef"), pkg("b", "2.0"), pkg("c", "3.0")});
    auto actual = manifest_of({pkg("a", "1.0", "fedcba9876543210"), pkg("c", "3.1"), pkg("d", "4.0")});
    CHECK(rollback::package_mismatches(target, actual) ==
          std::vector<std::string>{"a 1.0: RECORD differs (sha256 fedcba987654, expected 0123456789ab)",
                                   "b 2.0: missing", "c: 3.1 installed, expected 3.0", "d 4.0: not in the target"});
    CHECK(rollback::package_mismatches(target, target).empty());
}

TEST_CASE("rollback plan: an equal version spelt differently is reinstalled") {
    auto target = manifest_of({pkg("a", "1.0")});
    auto current = manifest_of({pkg("a", "1.0.0")});
    auto plan = rollback::plan_rollback(target, current, {});
    REQUIRE(plan.install.size() == 1);
    CHECK(plan.install[0].reason == "reinstall: version spelt 1.0.0 (recorded 1.0)");
    CHECK(plan.install[0].reinstall);
}
