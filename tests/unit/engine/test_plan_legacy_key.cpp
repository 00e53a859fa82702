#include <catch2/catch.hpp>

#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

// The keys below were printed by bootstrap-step-v3's own code (before v4) for this world: a
// fixed directory, a fake uv with a fixed mtime, and an environment with variables v3 counted.
// legacy_key must reproduce them exactly, or venvs settled under v3 re-run every step.
TEST_CASE("legacy keys reproduce bootstrap-step-v3 exactly and v4 keys leave the ambient variables out") {
    const fs::path root = fs::temp_directory_path() / "bootstrap-v3-golden";
    fs::remove_all(root);
    fs::create_directories(root / "bin");
    std::ofstream(root / "bin" / "uv") << "#!/bin/sh\n";
    fs::permissions(root / "bin" / "uv", fs::perms::owner_all);
    struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
    ::utimensat(AT_FDCWD, (root / "bin" / "uv").c_str(), times, 0);
    const std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (root / "venv").string() +
                             "\"\npython = \"3.11\"\n[env]\nset = { A = \"1\" }\n" + R"(
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.0.0"]
index_url = "http://127.0.0.1:1/simple"
verify = [{ import = "demo_core", version = ">=1" }]
[[step]]
id = "cmd"
kind = "run"
argv = ["true", "x"]
creates = "/nonexistent/x"
env = { B = "2" }
)";
    auto r = steps::parse_recipe(text, "t.toml");
    REQUIRE(r);
    engine::Facts f;
    f.env = {{"PATH", (root / "bin").string() + ":/usr/bin:/bin"},
             {"HOME", "/root"},
             {"CUDA_VISIBLE_DEVICES", "1"},
             {"NCCL_DEBUG", "INFO"},
             {"UV_INDEX_STRATEGY", "first-index"},
             {"TERM", "xterm"}};
    f.cpus = 4;
    engine::PlanOptions options;
    options.dry_run = true;
    auto plan = engine::make_plan(*r, options, f);
    REQUIRE(plan);
    REQUIRE(plan->steps.size() == 3);
    CHECK(plan->steps[0].legacy_key == "ac778a01b771ec5c298075b75689f5695faf0fb23d53a23f952689017dd2b03a");
    CHECK(plan->steps[1].legacy_key == "a53290d3b8c61a58b217a9865225c4b142e8bfda1bdc8317337dcec83ac7db65");
    CHECK(plan->steps[2].legacy_key == "d34fd3389106bdb3029f6166336469e63c325059b2b5212b6c336105ca6ae850");
    for (const auto& s : plan->steps) CHECK(s.key != s.legacy_key);

    // v4: CUDA_VISIBLE_DEVICES, NCCL_DEBUG and TERM are no inputs; uv's index strategy is one
    // of the install steps' (uv runs there), not of the run step's.
    auto ambient = f;
    ambient.env.erase("CUDA_VISIBLE_DEVICES");
    ambient.env["NCCL_DEBUG"] = "WARN";
    ambient.env["SLURM_JOB_ID"] = "7";
    auto other = engine::make_plan(*r, options, ambient);
    REQUIRE(other);
    for (size_t i = 0; i < 3; ++i) CHECK(other->steps[i].key == plan->steps[i].key);
    auto strategy = f;
    strategy.env["UV_INDEX_STRATEGY"] = "unsafe-best-match";
    auto changed = engine::make_plan(*r, options, strategy);
    REQUIRE(changed);
    CHECK(changed->steps[1].key != plan->steps[1].key);
    CHECK(changed->steps[2].key == plan->steps[2].key);
    fs::remove_all(root);
}
