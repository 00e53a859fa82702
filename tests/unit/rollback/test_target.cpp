#include <catch2/catch.hpp>

#include "../manifest/fixture.hpp"
#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/dist_info.hpp"
#include "rollback/plan.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using bs_test::DistSpec;

namespace {

manifest::Manifest valid_target() {
    manifest::Manifest m;
    auto a = bs_test::pkg("demo-core", "1.0.0", core::sha256_hex("a"));
    a.display_name = "Demo_Core";
    a.origin.artifact_sha256 = core::sha256_hex("wheel");
    m.packages["demo-core"] = a;
    m.packages["regex"] = bs_test::pkg("regex", "2024.1.0", "");  // no RECORD digest recorded
    m.packages["torch"] = bs_test::pkg("torch", "2.5.1+cu124", core::sha256_hex("t"));
    return m;
}

}  // namespace

TEST_CASE("target_problems accepts what snapshots record") {
    CHECK(rollback::target_problems(valid_target()).empty());
    CHECK(rollback::target_problems(manifest::Manifest{}).empty());
}

TEST_CASE("target_problems names every bad name, version, digest and URL") {
    auto m = valid_target();
    m.packages["demo-core"].version = "1.0.0; rm -rf /";
    m.packages["regex"].record_sha256 = "ABCDEF";
    m.packages["torch"].origin.artifact_sha256 = std::string(64, 'G');
    m.packages["--index-url=http://evil"] = bs_test::pkg("--index-url=http://evil", "1.0");
    m.packages["Not_Normal"] = bs_test::pkg("Not_Normal", "1.0");
    auto other = bs_test::pkg("click", "8.1.7", core::sha256_hex("c"));
    other.display_name = "clack";
    m.packages["click"] = other;
    auto renamed = bs_test::pkg("wandb", "0.22.0", core::sha256_hex("w"));
    renamed.name = "wandb2";
    m.packages["wandb"] = renamed;
    auto url = bs_test::pkg("remote", "3.0", core::sha256_hex("u"));
    url.origin.kind = bootstrap::manifest::OriginKind::url;
    url.origin.url = "https://example.org/remote-3.0.tar.gz ; python_version < '3'";
    url.origin.index_urls = {"", "http://index/simple\n"};
    m.packages["remote"] = url;

    auto problems = rollback::target_problems(m);
    CHECK(problems == std::vector<std::string>{
                          "--index-url=http://evil: not a normalised PEP 503 project name",
                          "Not_Normal: not a normalised PEP 503 project name",
                          "click: display name 'clack' is not a spelling of click",
                          "demo-core: version '1.0.0; rm -rf /' is not a PEP 440 version",
                          "regex: record_sha256 'ABCDEF' is not a sha256 digest (64 lower-case hex digits)",
                          "remote: origin.url 'https://example.org/remote-3.0.tar.gz ; python_version < '3'' "
                          "contains blanks",
                          "remote: origin.index_urls entry '' is not a URL",
                          "remote: origin.index_urls entry 'http://index/simple\n' is not a URL",
                          "torch: origin.artifact_sha256 '" + std::string(64, 'G') +
                              "' is not a sha256 digest (64 lower-case hex digits)",
                          "wandb: listed under another name 'wandb2'",
                      });
}

TEST_CASE("read_installed_package reads a dist-info as take_snapshot records it") {
    core::TempDir tmp("bs-read-back");
    const fs::path venv = tmp.path() / "venv";
    const fs::path site = bs_test::site_packages(venv);
    REQUIRE(core::write_file_atomic(venv / "pyvenv.cfg", "version = 3.11.7\n"));
    bs_test::write_dist(site, {"demo_core", "1.0.0", "uv\n", true});
    DistSpec foo{"Foo.Bar", "2.0", "pip\n"};
    foo.tags = {"cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"};
    bs_test::write_dist(site, foo);
    DistSpec wheel{"localwheel", "1.2"};
    wheel.direct_url = R"({"url": "file:///w/localwheel-1.2-py3-none-any.whl",
        "archive_info": {"hashes": {"sha256": "ff"}}})";
    bs_test::write_dist(site, wheel);
    DistSpec vcs{"vcspkg", "0.5"};
    vcs.direct_url = R"({"url": "https://github.com/x/vcspkg", "vcs_info": {"vcs": "git",
        "commit_id": "0123456789abcdef"}})";
    bs_test::write_dist(site, vcs);
    DistSpec legacy{"legacy", "1.0", "conda\n"};
    legacy.record.reset();
    legacy.tags.clear();
    bs_test::write_dist(site, legacy);

    manifest::SnapshotRequest request;
    request.venv = venv;
    request.python = bs_test::fake_python(venv);
    request.host = bs_test::fake_host();
    auto snapshot = manifest::take_snapshot(request);
    REQUIRE(snapshot);
    auto dists = pyenv::scan_site_packages(site);
    REQUIRE(dists);
    REQUIRE(dists->size() == 5);
    for (const auto& [name, dist] : *dists) {
        INFO(name);
        auto pkg = rollback::read_installed_package(dist);
        REQUIRE(pkg);
        CHECK(*pkg == snapshot->packages.at(name));
    }
}
