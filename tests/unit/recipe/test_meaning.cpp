// A recipe's meaning (recipe/meaning.hpp): what changes what its steps do is in it, named as the
// recipe names it; comments, summary, name, [venv] path, [network], a step's timeout and
// attempts, and the doctor's sections are not; nothing secret is in it.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/key.hpp"
#include "recipe/meaning.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

const std::string k_recipe = R"(schema = 1
name = "demo"
summary = "the demo"

[vars]
pin = "1.0.0"

[venv]
path = "/tmp/v"
python = "3.12"

[network]
timeout = 30

[env]
set = { NCCL_ALGO = "Ring", HF_TOKEN = "hf_secret_value" }

[[step]]
id = "venv"
kind = "venv"

[[step]]
id = "core"
kind = "install"
packages = ["demo-core=={vars.pin}", "demo-utils"]
index_url = "https://user:hunter22@example.org/simple"
env = { MAX_JOBS = "4", MY_PASSWORD = "p4ss" }
verify = [{ import = "demo_core" }]
timeout = 60
)";

Meaning of(const std::string& text) {
    auto r = steps::parse_recipe(text, "r.toml");
    REQUIRE(r);
    return meaning(*r);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

/// What changed from `a` to `b`: recipe-wide lines, then each step's ("core: packages: ...").
std::vector<std::string> changes(const Meaning& a, const Meaning& b) {
    auto out = core::explain_change(a.recipe, b.recipe);
    REQUIRE(a.steps.size() == b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i)
        for (const auto& c : core::explain_change(a.steps[i].inputs, b.steps[i].inputs))
            out.push_back(b.steps[i].id + ": " + c);
    return out;
}

const core::KeyInput* input(const std::vector<core::KeyInput>& inputs, const std::string& field) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& in) { return in.field == field; });
    return it == inputs.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("meaning: a step's keys as written, its kind and environment, the steps in order") {
    const auto m = of(k_recipe);
    REQUIRE(m.steps.size() == 2);
    CHECK(m.steps[1].id == "core");
    const auto& core_inputs = m.steps[1].inputs;
    REQUIRE(input(core_inputs, "packages"));
    CHECK(input(core_inputs, "packages")->list);
    CHECK(input(core_inputs, "packages")->values == std::vector<std::string>{"demo-core=={vars.pin}", "demo-utils"});
    CHECK(input(core_inputs, "kind")->values == std::vector<std::string>{"install"});
    CHECK(input(core_inputs, "verify")->values == std::vector<std::string>{"{import = \"demo_core\"}"});
    CHECK(input(core_inputs, "timeout") == nullptr);
    CHECK(input(core_inputs, "id") == nullptr);
    CHECK(input(m.recipe, "steps")->values == std::vector<std::string>{"venv", "core"});
    CHECK(input(m.recipe, "vars.pin")->values == std::vector<std::string>{"1.0.0"});
    CHECK(input(m.recipe, "venv.python")->values == std::vector<std::string>{"3.12"});
}

TEST_CASE("meaning: comments, summary, name, venv path, network, timeouts and the doctor's sections do not count") {
    const auto base = of(k_recipe);
    for (const auto& edited : {
             "# a comment\n" + k_recipe + "\n# another\n",
             replaced(k_recipe, "summary = \"the demo\"", "summary = \"another summary\""),
             replaced(k_recipe, "name = \"demo\"", "name = \"renamed\""),
             replaced(k_recipe, "path = \"/tmp/v\"", "path = \"/elsewhere/v\""),
             replaced(k_recipe, "timeout = 30", "timeout = 600\nretries = 9"),
             replaced(k_recipe, "timeout = 60", "timeout = 600\nattempts = 3\noptional = true"),
             replaced(k_recipe, "packages = [\"demo-core=={vars.pin}\", \"demo-utils\"]",
                      "packages = [\n  \"demo-core=={vars.pin}\",  # the pin\n  \"demo-utils\",\n]"),
             k_recipe + "\n[[fault]]\nid = \"f\"\nmatch = \"boom\"\nexplain = \"e\"\nfix = \"f\"\n",
         }) {
        INFO(edited);
        CHECK(changes(base, of(edited)).empty());
    }
}

TEST_CASE("meaning: a changed pin, variable, environment or verify is named by its input") {
    const auto base = of(k_recipe);
    CHECK(changes(base, of(replaced(k_recipe, "\"demo-utils\"", "\"demo-utils==2.0\""))) ==
          std::vector<std::string>{"core: packages: +demo-utils==2.0, -demo-utils"});
    CHECK(changes(base, of(replaced(k_recipe, "pin = \"1.0.0\"", "pin = \"2.0.0\""))) ==
          std::vector<std::string>{"vars.pin: 1.0.0 → 2.0.0"});
    CHECK(changes(base, of(replaced(k_recipe, "NCCL_ALGO = \"Ring\"", "NCCL_ALGO = \"Tree\""))) ==
          std::vector<std::string>{"env NCCL_ALGO: Ring → Tree"});
    CHECK(changes(base, of(replaced(k_recipe, "MAX_JOBS = \"4\"", "MAX_JOBS = \"8\""))) ==
          std::vector<std::string>{"core: env MAX_JOBS: 4 → 8"});
    CHECK(changes(base, of(replaced(k_recipe, "env = { MAX_JOBS = \"4\", MY_PASSWORD = \"p4ss\" }\n", ""))) ==
          std::vector<std::string>{"core: env MAX_JOBS: 4 → unset", "core: env MY_PASSWORD: *** → unset"});
    CHECK(changes(base,
                  of(replaced(k_recipe, "{ import = \"demo_core\" }", "{ import = \"demo_core\", attr = \"x\" }"))) ==
          std::vector<std::string>{"core: verify: +{attr = \"x\", import = \"demo_core\"}, -{import = \"demo_core\"}"});
    CHECK(changes(base, of(replaced(k_recipe, "python = \"3.12\"", "python = \"3.11\""))) ==
          std::vector<std::string>{"venv.python: 3.12 → 3.11"});
    CHECK(changes(base, of(replaced(k_recipe, "timeout = 60\n", "timeout = 60\nno_deps = true\n"))) ==
          std::vector<std::string>{"core: no_deps: added (true)"});
}

TEST_CASE("meaning: secret values and URL credentials are not in it") {
    const auto m = of(k_recipe);
    std::string all;
    for (const auto& in : m.recipe)
        for (const auto& v : in.values) all += v + "\n";
    for (const auto& s : m.steps)
        for (const auto& in : s.inputs)
            for (const auto& v : in.values) all += v + "\n";
    CHECK(all.find("hf_secret_value") == std::string::npos);
    CHECK(all.find("hunter22") == std::string::npos);
    CHECK(all.find("p4ss") == std::string::npos);
    CHECK(all.find("HF_TOKEN=***") != std::string::npos);
    CHECK(all.find("https://user:***@example.org/simple") != std::string::npos);
    // A rotated secret is not a change (as in step keys).
    CHECK(changes(m, of(replaced(k_recipe, "hf_secret_value", "hf_rotated"))).empty());
}
