// A secret's value in a step's argv (`{env.MY_TOKEN}`, whole or inside "--token=VALUE") reaches
// the child, but the key, its inputs and every shown argv hold "***": rotating the token re-runs
// nothing, and no plan, log or journal shows it.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct Planned {
    recipe::Recipe recipe;  // the plan points into it
    engine::Plan plan;
};

/// The plan of `run` (argv `python3 -c x {env.NAME} --token={env.NAME}`) with `name` set to
/// `token`, declared secret (`[env] secret`) or not.
Planned plan_with(const core::TempDir& dir, const std::string& name, const std::string& token, bool declared) {
    const fs::path bin = dir.path() / "bin";
    fs::create_directories(bin);
    for (const char* tool : {"uv", "python3.11", "python3"}) {
        std::ofstream(bin / tool) << "#!/bin/sh\n";
        fs::permissions(bin / tool, fs::perms::owner_all);
    }
    const std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
                             "\"\npython = \"3.11\"\n" + (declared ? "[env]\nsecret = [\"" + name + "\"]\n" : "") +
                             "[[step]]\nid = \"venv\"\nkind = \"venv\"\n[[step]]\nid = \"run\"\nkind = \"run\"\n"
                             "argv = [\"python3\", \"-c\", \"x\", \"{env." +
                             name + "}\", \"--token={env." + name + "}\"]\n";
    Planned out;
    auto r = steps::parse_recipe(text, (dir.path() / "t.toml").string());
    REQUIRE(r);
    out.recipe = std::move(*r);
    engine::Facts f;
    f.env = {
        {"PATH", bin.string()}, {"HOME", "/root"}, {"BOOTSTRAP_HOME", (dir.path() / "home").string()}, {name, token}};
    f.cpus = 4;
    engine::PlanOptions opts;
    opts.dry_run = true;
    auto plan = engine::make_plan(out.recipe, opts, f);
    REQUIRE(plan);
    out.plan = std::move(*plan);
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += s + "\n";
    return out;
}

}  // namespace

TEST_CASE("a declared secret in a run step's argv is *** in its key, key inputs and shown argv") {
    struct Forget {
        ~Forget() { core::clear_secret_values(); }
    } forget;
    core::TempDir dir("bs-plan-secret");
    auto a = plan_with(dir, "MY_VALUE", "tok-first-1234", true);
    const auto& step = a.plan.steps.at(1);
    // The child gets the value, whole and inside the longer word.
    CHECK(step.argv.at(3) == "tok-first-1234");
    CHECK(step.argv.at(4) == "--token=tok-first-1234");
    CHECK(step.key_explain.find("tok-first-1234") == std::string::npos);
    CHECK(step.key_explain.find("--token=***") != std::string::npos);
    CHECK(core::redact_text(step.argv.at(4)) == "--token=***");

    // Another value of the token: the same key.
    auto b = plan_with(dir, "MY_VALUE", "tok-rotated-5678", true);
    CHECK(b.plan.steps.at(1).key == step.key);
    CHECK(b.plan.steps.at(1).argv.at(3) == "tok-rotated-5678");

    // A name secret by itself (MY_TOKEN) needs no declaration.
    auto e = plan_with(dir, "MY_TOKEN", "tok-by-name-999", false);
    CHECK(e.plan.steps.at(1).key_explain.find("--token=***") != std::string::npos);

    // Not declared secret (and not secret by its name): the value is an input like any other.
    core::clear_secret_values();
    auto c = plan_with(dir, "MY_VALUE", "plain-value-1", false);
    auto d = plan_with(dir, "MY_VALUE", "plain-value-2", false);
    CHECK(c.plan.steps.at(1).key != d.plan.steps.at(1).key);
    CHECK(c.plan.steps.at(1).key_explain.find("--token=plain-value-1") != std::string::npos);
    CHECK(joined(c.plan.steps.at(1).argv).find("plain-value-1") != std::string::npos);
}
