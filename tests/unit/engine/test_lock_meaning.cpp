// Whether a lock stands for its recipe (engine/lock_meaning.hpp): by what the steps do when the
// lock records it, each change named once by step and input; by bytes for an older lock.
#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "engine/lock_meaning.hpp"
#include "manifest/lockfile.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;

namespace {

const std::string k_recipe = R"(schema = 1
name = "demo"
summary = "the demo"

[venv]
path = "/tmp/v"
python = "3.12"

[[step]]
id = "venv"
kind = "venv"

[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.0.0"]
verify = [{ import = "demo_core" }]
)";

recipe::Recipe parsed(const std::string& text) {
    auto r = steps::parse_recipe(text, "/w/r.toml");
    REQUIRE(r);
    return *r;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

/// The lock `lock` would write for k_recipe: both steps covered, the meaning recorded.
manifest::Lockfile locked(const recipe::Recipe& recipe) {
    manifest::Lockfile lock;
    lock.file = "/w/r.lock.json";
    lock.recipe_name = recipe.name;
    lock.recipe_digest = recipe.source_digest;
    for (const auto& step : recipe.steps) lock.steps[step.id] = {};
    engine::record_meaning(lock, recipe);
    return lock;
}

}  // namespace

TEST_CASE("lock meaning: a comment or a summary leaves the lock standing") {
    const auto lock = locked(parsed(k_recipe));
    REQUIRE_FALSE(lock.recipe_inputs.empty());
    REQUIRE_FALSE(lock.steps.at("core").inputs.empty());
    const auto edited = parsed("# why\n" + replaced(k_recipe, "the demo", "another summary") + "# end\n");
    CHECK(edited.source_digest != lock.recipe_digest);
    CHECK(engine::meaning_changes(lock, edited).empty());
    CHECK(engine::check_lock_stands(lock, edited));
}

TEST_CASE("lock meaning: a changed pin is stale, naming the step and the input once") {
    const auto lock = locked(parsed(k_recipe));
    const auto pinned = parsed(replaced(k_recipe, "demo-core==1.0.0", "demo-core==2.0.0"));
    CHECK(engine::meaning_changes(lock, pinned) ==
          std::vector<std::string>{"step 'core': packages: +demo-core==2.0.0, -demo-core==1.0.0"});
    auto stands = engine::check_lock_stands(lock, pinned);
    REQUIRE_FALSE(stands);
    CHECK(stands.error().code == ErrorCode::usage);
    CHECK(stands.error().message ==
          "the recipe /w/r.toml changed since its lockfile /w/r.lock.json was written: step 'core': packages: "
          "+demo-core==2.0.0, -demo-core==1.0.0");
    CHECK(stands.error().detail.find("demo-core") == std::string::npos);  // not told twice
    CHECK(stands.error().detail.find("bootstrap lock /w/r.toml -o /w/r.lock.json") != std::string::npos);

    // Several changes: a count in the message, each change once in the detail.
    const auto two = parsed(
        replaced(replaced(k_recipe, "demo-core==1.0.0", "demo-core==2.0.0"), "python = \"3.12\"", "python = \"3.11\""));
    auto both = engine::check_lock_stands(lock, two);
    REQUIRE_FALSE(both);
    CHECK(both.error().message ==
          "the recipe /w/r.toml changed since its lockfile /w/r.lock.json was written: 2 changes");
    CHECK(
        both.error().detail.starts_with("step 'core': packages: +demo-core==2.0.0, -demo-core==1.0.0\n"
                                        "recipe: venv.python: 3.12 → 3.11\n"));
}

TEST_CASE("lock meaning: a step added, removed or moved") {
    const auto lock = locked(parsed(k_recipe));
    const auto added =
        parsed(k_recipe + "\n[[step]]\nid = \"utils\"\nkind = \"install\"\npackages = [\"demo-utils\"]\n");
    CHECK(engine::meaning_changes(lock, added) == std::vector<std::string>{"step 'utils': added"});
    auto without = lock;
    without.steps.emplace("gone", manifest::LockedStep{});
    without.steps.at("gone").inputs = {{"kind", {"run"}, false}};
    without.recipe_inputs.front().values.push_back("gone");
    CHECK(engine::meaning_changes(without, parsed(k_recipe)) == std::vector<std::string>{"step 'gone': removed"});
    const auto moved = parsed(R"(schema = 1
name = "demo"
[venv]
path = "/tmp/v"
python = "3.12"
[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.0.0"]
verify = [{ import = "demo_core" }]
[[step]]
id = "venv"
kind = "venv"
)");
    CHECK(engine::meaning_changes(lock, moved) ==
          std::vector<std::string>{"recipe: steps: same values, another order"});
}

TEST_CASE("lock meaning: a lock without it (an older bootstrap's) is checked by the recipe's bytes") {
    const auto recipe = parsed(k_recipe);
    auto old = locked(recipe);
    old.recipe_inputs.clear();
    for (auto& [id, st] : old.steps) st.inputs.clear();
    CHECK(engine::check_lock_stands(old, recipe));
    auto stale = engine::check_lock_stands(old, parsed(k_recipe + "# a comment\n"));
    REQUIRE_FALSE(stale);
    CHECK(stale.error().message == "the recipe /w/r.toml changed since its lockfile /w/r.lock.json was written");
    CHECK(stale.error().detail.find("records only the recipe's bytes") != std::string::npos);
}

TEST_CASE("lock meaning: it survives the JSON lockfile's round trip") {
    core::TempDir tmp("bs-lock-meaning");
    const auto recipe = parsed(k_recipe);
    auto lock = locked(recipe);
    const auto file = tmp.path() / "r.lock.json";
    REQUIRE(manifest::save_lockfile(file, lock));
    auto back = manifest::load_lockfile(file);
    REQUIRE(back);
    CHECK(back->recipe_inputs == lock.recipe_inputs);
    CHECK(back->steps.at("core").inputs == lock.steps.at("core").inputs);
    CHECK(engine::check_lock_stands(*back, parsed("# c\n" + k_recipe)));
    CHECK(manifest::to_json(*back) == manifest::to_json(lock));

    REQUIRE(core::write_file_atomic(
        file, R"({"schema": 2, "recipe": {"name": "r", "digest": "d", "inputs": [["steps", 3]]}, "python": {},
                  "packages": {}})"));
    auto bad = manifest::load_lockfile(file);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("recipe.inputs") != std::string::npos);
}
