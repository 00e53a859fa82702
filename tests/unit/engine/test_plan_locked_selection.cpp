// `--locked` with locked steps left out (engine/locked_selection.hpp): what only their closures
// hold is left out of the lock check; a kept step that needs it is refused, naming the steps.

#include <catch2/catch.hpp>

#include "engine/locked_selection.hpp"
#include "manifest/lockfile.hpp"

using namespace bootstrap;

namespace {

manifest::LockedPackage package(const std::string& name, const std::string& step) {
    manifest::LockedPackage p;
    p.name = name;
    p.version = "1.0.0";
    p.wheel = name + "-1.0.0-py3-none-any.whl";
    p.sha256 = std::string(64, 'a');
    p.origin.step = step;
    return p;
}

steps::ResolvedStep step(const std::string& id, size_t index, const std::string& kind = "run") {
    steps::ResolvedStep s;
    s.id = id;
    s.index = index;
    s.kind = kind;
    s.spec = steps::RunSpec{};
    return s;
}

// venv, core (demo-core), utils (demo-utils + demo-core), extra (click), ext (a build of
// fastext against demo-core). The lock credits demo-core to core, which installed it.
struct World {
    manifest::Lockfile lock;
    engine::Plan plan;
    World() {
        lock.packages["demo-core"] = package("demo-core", "core");
        lock.packages["demo-utils"] = package("demo-utils", "utils");
        lock.packages["click"] = package("click", "extra");
        lock.packages["fastext"] = package("fastext", "ext");
        lock.packages["pip"] = package("pip", "");  // seeded by the venv's creation
        lock.steps["venv"] = {};
        lock.steps["core"].packages = {"demo-core"};
        lock.steps["utils"].packages = {"demo-core", "demo-utils"};
        lock.steps["extra"].packages = {"click"};
        lock.steps["ext"] = {};
        plan.steps = {step("venv", 0), step("core", 1), step("utils", 2), step("extra", 3), step("ext", 4, "build")};
        steps::BuildSpec build;
        build.abi_versions = {"demo-core 1.0.0"};
        plan.steps[4].spec = build;
        plan.selected.assign(plan.steps.size(), true);
    }
    void skip(const std::vector<size_t>& indexes) {
        for (auto i : indexes) plan.selected[i] = false;
    }
};

}  // namespace

TEST_CASE("a locked run leaves out of the lock check only what left-out steps alone lock", "[engine][locked]") {
    World w;
    SECTION("a leaf step") {
        w.skip({3});
        auto left = engine::locked_left_out(w.lock, w.plan);
        CHECK(left.packages == std::set<std::string>{"click"});
        CHECK(left.steps == std::vector<std::string>{"extra"});
        CHECK(left.needs.empty());
        REQUIRE(engine::apply_locked_selection(w.lock, w.plan));
        CHECK(w.plan.locked_left_out == std::set<std::string>{"click"});
        REQUIRE(w.plan.notices.size() == 1);
        CHECK(w.plan.notices[0] ==
              "--locked: step extra left out: the lock check does not require the 1 package(s) only it locks: click");
    }
    SECTION("a step whose package a kept step's closure also holds leaves nothing out") {
        w.skip({1});
        auto left = engine::locked_left_out(w.lock, w.plan);
        CHECK(left.packages.empty());
        CHECK(left.steps.empty());
        REQUIRE(engine::apply_locked_selection(w.lock, w.plan));
        CHECK(w.plan.locked_left_out.empty());
        CHECK(w.plan.notices.empty());
    }
    SECTION("the venv's own packages are never left out") {
        w.skip({0, 3});
        auto left = engine::locked_left_out(w.lock, w.plan);
        CHECK(left.packages == std::set<std::string>{"click"});
    }
    SECTION("a left-out build step leaves out its wheel") {
        w.skip({3, 4});
        auto left = engine::locked_left_out(w.lock, w.plan);
        CHECK(left.packages == std::set<std::string>{"click", "fastext"});
        CHECK(left.steps == std::vector<std::string>{"extra", "ext"});
    }
}

TEST_CASE("a locked run refuses to leave out what a kept build step builds against", "[engine][locked]") {
    World w;
    w.skip({1, 2});
    auto left = engine::locked_left_out(w.lock, w.plan);
    CHECK(left.packages == std::set<std::string>{"demo-core", "demo-utils"});
    CHECK(left.steps == std::vector<std::string>{"core", "utils"});
    REQUIRE(left.needs.size() == 1);
    CHECK(left.needs[0] == "step 'ext' builds against demo-core (abi_packages), which only steps 'core', 'utils' lock");
    auto applied = engine::apply_locked_selection(w.lock, w.plan);
    REQUIRE_FALSE(applied);
    CHECK(applied.error().code == ErrorCode::usage);
    CHECK(applied.error().message == "--locked: the selection leaves out steps 'core', 'utils', which kept steps need");
    CHECK(applied.error().detail.find("--skip core utils") != std::string::npos);
    CHECK(w.plan.locked_left_out.empty());
}

TEST_CASE("the lock check does not require left-out packages but still checks an installed one's version",
          "[manifest][locked]") {
    World w;
    manifest::Manifest venv;
    for (const auto* name : {"demo-core", "demo-utils", "fastext", "pip"}) venv.packages[name].version = "1.0.0";
    CHECK(manifest::lock_drift(w.lock, venv) == std::vector<std::string>{"click 1.0.0 is locked but not installed"});
    CHECK(manifest::lock_drift(w.lock, venv, {"click"}).empty());
    venv.packages["click"].version = "2.0.0";
    CHECK(manifest::lock_drift(w.lock, venv, {"click"}) == std::vector<std::string>{"click is 2.0.0, locked 1.0.0"});
}
