#pragma once
// A scratch directory in which recipes are planned (dry run) without a venv: stand-in `uv` and
// `python3.11` on PATH, a BOOTSTRAP_HOME of its own. For the planning tests of one kind's keys.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::test {

struct PlanWorld {
    core::TempDir dir;
    std::filesystem::path bin = dir.path() / "bin";
    /// TOML put before the steps (a `[vars]` table, say).
    std::string header;

    explicit PlanWorld(const char* name, std::string recipe_header = "") : dir(name), header(std::move(recipe_header)) {
        std::filesystem::create_directories(bin);
        for (const char* tool : {"uv", "python3.11"}) {
            std::ofstream(bin / tool) << "#!/bin/sh\n";
            std::filesystem::permissions(bin / tool, std::filesystem::perms::owner_all);
        }
    }
    /// A file beside the recipe.
    void write(const std::string& name, const std::string& text) const { std::ofstream(dir.path() / name) << text; }
    /// The plan of a venv step followed by `steps`, without the venv step.
    Result<engine::Plan> plan(const std::string& steps) const {
        std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
                           "\"\npython = \"3.11\"\n" + header + "[[step]]\nid = \"venv\"\nkind = \"venv\"\n" + steps;
        auto r = steps::parse_recipe(text, (dir.path() / "t.toml").string());
        REQUIRE(r);
        recipe = std::move(*r);  // the plan points into the recipe's steps
        engine::Facts f;
        f.env = {{"PATH", bin.string()}, {"HOME", "/root"}, {"BOOTSTRAP_HOME", (dir.path() / "home").string()}};
        f.cpus = 4;
        engine::PlanOptions opts;
        opts.dry_run = true;
        auto plan = engine::make_plan(recipe, opts, f);
        if (plan) plan->steps.erase(plan->steps.begin());
        return plan;
    }
    mutable recipe::Recipe recipe;
};

}  // namespace bootstrap::test
