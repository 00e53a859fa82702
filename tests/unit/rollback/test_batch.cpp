#include <catch2/catch.hpp>

#include <algorithm>

#include "rollback/batch.hpp"

using namespace bootstrap;
using rollback::InstallSource;
using Kind = rollback::InstallSource::Kind;

namespace {

const std::string k_pypi = "https://pypi.org/simple";
const std::string k_torch = "https://download.pytorch.org/whl/cu130";

rollback::RollbackInstall install(const std::string& name, const std::string& version, Kind kind,
                                  const std::string& installer = "uv", bool reinstall = false) {
    rollback::RollbackInstall i;
    i.name = name;
    i.display_name = name;
    i.version = version;
    i.reinstall = reinstall;
    i.target.name = name;
    i.target.version = version;
    i.target.installer = installer;
    i.source.kind = kind;
    switch (kind) {
        case Kind::index: i.source.index_urls = {k_pypi}; break;
        case Kind::original_file:
        case Kind::artifact:
        case Kind::find_links: i.source.wheel = "/w/" + name + "-" + version + "-py3-none-any.whl"; break;
        case Kind::direct_url: i.source.url = "https://example.org/" + name + ".tar.gz"; break;
        case Kind::editable: i.source.url = "/src/" + name; break;
    }
    return i;
}

std::string by_installer(const manifest::Package& p) { return p.installer; }

std::vector<std::string> names(const rollback::InstallBatch& b) {
    std::vector<std::string> out;
    for (const auto* m : b.members) out.push_back(m->name);
    return out;
}

}  // namespace

TEST_CASE("rollback batches: index packages and wheel files in one command") {
    rollback::RollbackPlan plan;
    plan.install = {install("demo-core", "1.0.0", Kind::index), install("mylocal", "1.0", Kind::original_file),
                    install("regex", "2024.1.0", Kind::index, "uv", true), install("stored", "0.1", Kind::artifact),
                    install("wheelhouse", "2.0", Kind::find_links)};
    auto batches = rollback::batch_installs(plan, by_installer);
    REQUIRE(batches.size() == 1);
    const auto& b = batches[0];
    CHECK(b.installer == "uv");
    CHECK(b.resolves);
    CHECK(b.from == "index " + k_pypi + " and local wheels");
    CHECK(names(b) == std::vector<std::string>{"demo-core", "regex", "mylocal", "stored", "wheelhouse"});
    CHECK(b.request.requirements ==
          std::vector<std::string>{"demo-core==1.0.0", "regex==2024.1.0", "/w/mylocal-1.0-py3-none-any.whl",
                                   "/w/stored-0.1-py3-none-any.whl", "/w/wheelhouse-2.0-py3-none-any.whl"});
    CHECK(b.request.index_url == k_pypi);
    CHECK(b.request.extra_index_urls.empty());
    CHECK(b.request.no_deps);
    CHECK_FALSE(b.request.no_index);
    CHECK_FALSE(b.request.dry_run);
    // Only the same-version reinstall is named; --reinstall would refresh uv's whole cache.
    CHECK_FALSE(b.request.reinstall);
    CHECK(b.request.reinstall_packages == std::vector<std::string>{"regex"});

    auto uv = pyenv::make_installer("uv", "", "", true);
    REQUIRE(uv);
    auto argv = (*uv)->install("/v", b.request, {}).argv;
    CHECK(std::count(argv.begin(), argv.end(), "--reinstall") == 0);
    CHECK(std::find(argv.begin(), argv.end(), "--dry-run") == argv.end());
}

TEST_CASE("rollback batches: wheel files alone install offline") {
    rollback::RollbackPlan plan;
    plan.install = {install("mylocal", "1.0", Kind::artifact), install("other", "2.0", Kind::find_links)};
    auto batches = rollback::batch_installs(plan, by_installer);
    REQUIRE(batches.size() == 1);
    CHECK(batches[0].request.no_index);
    CHECK_FALSE(batches[0].request.index_url);
    CHECK_FALSE(batches[0].resolves);
    CHECK(batches[0].from == "local wheels");
}

TEST_CASE("rollback batches: what cannot share a command, in the order they run") {
    rollback::RollbackPlan plan;
    auto torch = install("torch", "2.9.0", Kind::index);
    torch.source.index_urls = {k_torch, k_pypi};
    plan.install = {install("aaa-editable", "0.1", Kind::editable),         install("bbb-url", "3.0", Kind::direct_url),
                    install("click", "8.1.7", Kind::index, "pip", true),    install("demo-core", "1.0.0", Kind::index),
                    install("pipwheel", "1.0", Kind::original_file, "pip"), torch,
                    install("uvwheel", "1.0", Kind::original_file)};
    auto batches = rollback::batch_installs(plan, by_installer);
    REQUIRE(batches.size() == 5);
    // Index commands first (pip's, then uv's two index lists), then URLs, then editables.
    CHECK(batches[0].installer == "pip");
    CHECK(names(batches[0]) == std::vector<std::string>{"click", "pipwheel"});
    CHECK(batches[0].request.reinstall);  // pip: --force-reinstall, only the named ones (--no-deps)
    CHECK(batches[0].request.reinstall_packages.empty());
    CHECK(batches[1].installer == "uv");
    // A wheel file joins its installer's first index command.
    CHECK(names(batches[1]) == std::vector<std::string>{"torch", "uvwheel"});
    CHECK(batches[1].request.index_url == k_torch);
    CHECK(batches[1].request.extra_index_urls == std::vector<std::string>{k_pypi});
    CHECK(names(batches[2]) == std::vector<std::string>{"demo-core"});
    CHECK(batches[2].request.index_url == k_pypi);
    CHECK(names(batches[3]) == std::vector<std::string>{"bbb-url"});
    CHECK(batches[3].resolves);
    CHECK(batches[3].request.requirements == std::vector<std::string>{"bbb-url @ https://example.org/bbb-url.tar.gz"});
    CHECK_FALSE(batches[3].request.index_url);
    CHECK(names(batches[4]) == std::vector<std::string>{"aaa-editable"});
    CHECK_FALSE(batches[4].resolves);
    CHECK(batches[4].request.requirements == std::vector<std::string>{"-e", "/src/aaa-editable"});
    for (const auto& b : batches) CHECK(b.request.no_deps);
}

TEST_CASE("rollback batches: an empty plan runs nothing") {
    CHECK(rollback::batch_installs(rollback::RollbackPlan{}, by_installer).empty());
}
