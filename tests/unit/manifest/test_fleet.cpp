#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "fixture.hpp"
#include "manifest/fleet.hpp"

using namespace bootstrap::manifest;
using bootstrap::core::TempDir;
using bs_test::pkg;

namespace {

Manifest node_manifest(const std::string& venv) {
    Manifest m;
    m.venv = venv;
    m.python.version = "3.11.7";
    m.host = bs_test::fake_host();
    for (auto p : {pkg("torch", "2.11.0"), pkg("nvidia-cublas", "13.4.1.1"), pkg("regex", "2024.1")}) {
        p.record_sha256 = "exact-" + venv;  // console scripts name each venv
        p.record_sha256_portable = "portable-" + p.name;
        m.packages[p.name] = p;
    }
    return m;
}

std::vector<FleetNode> fleet(int n) {
    std::vector<FleetNode> nodes;
    for (int i = 1; i <= n; ++i)
        nodes.push_back({"n" + std::to_string(i), node_manifest("/local/n" + std::to_string(i) + "/venv")});
    return nodes;
}

}  // namespace

TEST_CASE("fleet diff: venvs at different paths with the same files are one environment") {
    auto report = fleet_diff(fleet(4));
    CHECK(report.same());
    REQUIRE(report.groups.size() == 1);
    CHECK(report.groups[0] == std::vector<std::string>{"n1", "n2", "n3", "n4"});
    CHECK(format_fleet(report) == "4 nodes, 1 environment: no drift\n");
}

TEST_CASE("fleet diff: the odd node is named with its value and the others' count") {
    auto nodes = fleet(32);
    nodes[16].manifest.packages["nvidia-cublas"].version = "13.1.0.3";
    auto report = fleet_diff(nodes);
    REQUIRE(report.drift.size() == 1);
    CHECK(report.groups.size() == 2);
    CHECK(format_fleet(report).find("n17: nvidia-cublas 13.1.0.3, the other 31 nodes 13.4.1.1\n") != std::string::npos);
}

TEST_CASE("fleet diff: same version with other files, a missing package and a fact") {
    auto nodes = fleet(5);
    nodes[1].manifest.packages["regex"].record_sha256_portable = "rebuilt";
    nodes[2].manifest.packages.erase("regex");
    nodes[3].manifest.host.driver = "590.10";
    auto report = fleet_diff(nodes);
    CHECK(report.groups.size() == 4);
    REQUIRE(report.drift.size() == 2);
    const auto& regex = report.drift[0];
    CHECK(regex.what == "regex");
    REQUIRE(regex.values.size() == 3);
    CHECK(regex.values[0].value == "2024.1 (files portable-reg)");
    CHECK(regex.values[0].nodes == std::vector<std::string>{"n1", "n4", "n5"});
    const std::string text = format_fleet(report);
    INFO(text);
    CHECK(text.find("regex differs: 2024.1 (files portable-reg) on n1, n4, n5; "
                    "2024.1 (files rebuilt) on n2; absent on n3\n") != std::string::npos);
    CHECK(report.drift[1].what == "host.driver");
    CHECK_FALSE(report.drift[1].package);
    CHECK(text.find("n4: host.driver 590.10, the other 4 nodes ") != std::string::npos);
}

TEST_CASE("fleet diff: an even split has no majority, and a broken install is shown as broken") {
    auto nodes = fleet(4);
    for (int i : {2, 3}) nodes[i].manifest.packages["torch"].version = "2.10.0";
    nodes[0].manifest.packages["regex"].broken = "METADATA missing";
    const std::string text = format_fleet(fleet_diff(nodes));
    INFO(text);
    CHECK(text.find("torch differs: 2.11.0 on n1, n2; 2.10.0 on n3, n4\n") != std::string::npos);
    CHECK(text.find("n1: regex 2024.1 (broken: METADATA missing), the other 3 nodes 2024.1\n") != std::string::npos);
}

TEST_CASE("load_fleet orders nodes naturally and names the files it refuses") {
    TempDir dir("bs-fleet");
    for (const char* name : {"n10", "n2", "n1"})
        REQUIRE(save_manifest(dir.path() / (std::string(name) + ".json"), node_manifest(name)));
    auto nodes = load_fleet({dir.path()});
    REQUIRE(nodes);
    REQUIRE(nodes->size() == 3);
    CHECK((*nodes)[0].name == "n1");
    CHECK((*nodes)[1].name == "n2");
    CHECK((*nodes)[2].name == "n10");

    auto one = load_fleet({dir.path() / "n1.json"});
    REQUIRE_FALSE(one);
    CHECK(one.error().message.find("two or more") != std::string::npos);

    auto twice = load_fleet({dir.path(), dir.path() / "n2.json"});
    REQUIRE_FALSE(twice);
    CHECK(twice.error().message.find("two manifests for node n2") != std::string::npos);

    TempDir empty("bs-fleet-empty");
    auto none = load_fleet({empty.path(), dir.path()});
    REQUIRE_FALSE(none);
    CHECK(none.error().message.find("holds no manifests") != std::string::npos);
}
