// [[lint]], [[fault]], [flag_aliases] and [perf]: parsed values and golden problem text.
#include <catch2/catch.hpp>

#include <filesystem>

#include "recipe/recipe.hpp"
#include "recipe_text.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

using testing::k_head;
using testing::problems;

const std::string k_rule_tail = "explain = \"e\"\nfix = \"f\"\n";

}  // namespace

TEST_CASE("lint rules: every form is read with its location") {
    auto r = steps::parse_recipe(k_head + R"([[lint]]
id = "mhc"
when = "--enable-hyper-connections"
forbid = ["--delay-wgrad-compute", "--overlap-moe-expert-parallel-comm"]
explain = "why"
fix = "how"

[[lint]]
id = "scope"
when = ["--enable-hyper-connections", "--cuda-graph-impl=transformer_engine"]
allowed = { flag = "--cuda-graph-scope", values = ["moe_router"] }
severity = "warning"
explain = "why"
fix = "how"

[[lint]]
id = "apex"
unless_import = "fused_weight_gradient_mlp_cuda"
require = "--no-gradient-accumulation-fusion"
forbid_env = ["MCORE_DPA_USE_SDPA"]
explain = "why"
fix = "how"
)",
                                 "r.toml");
    REQUIRE(r);
    REQUIRE(r->lint_rules.size() == 3);
    const auto& mhc = r->lint_rules[0];
    CHECK(mhc.id == "mhc");
    CHECK(mhc.loc.str() == "r.toml:6:1");
    REQUIRE(mhc.when.size() == 1);
    CHECK(mhc.when[0].value == "--enable-hyper-connections");
    CHECK(mhc.when[0].loc.str() == "r.toml:8:8");
    REQUIRE(mhc.forbid.size() == 2);
    CHECK(mhc.forbid[1].value == "--overlap-moe-expert-parallel-comm");
    CHECK(mhc.severity == Severity::error);
    CHECK(mhc.explain == "why");
    CHECK(mhc.fix == "how");

    const auto& scope = r->lint_rules[1];
    CHECK(scope.when.size() == 2);
    CHECK(scope.when[1].value == "--cuda-graph-impl=transformer_engine");
    REQUIRE(scope.allowed_flag);
    CHECK(scope.allowed_flag->value == "--cuda-graph-scope");
    REQUIRE(scope.allowed_values.size() == 1);
    CHECK(scope.allowed_values[0].value == "moe_router");
    CHECK(scope.severity == Severity::warning);

    const auto& apex = r->lint_rules[2];
    REQUIRE(apex.unless_import);
    CHECK(apex.unless_import->value == "fused_weight_gradient_mlp_cuda");
    REQUIRE(apex.require.size() == 1);  // one string stands for a one-element array
    CHECK(apex.require[0].value == "--no-gradient-accumulation-fusion");
    REQUIRE(apex.forbid_env.size() == 1);
    CHECK(apex.forbid_env[0].value == "MCORE_DPA_USE_SDPA");
}

TEST_CASE("golden: lint rule problems") {
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbidd = [\"--a\"]\n" + k_rule_tail) ==
          "r.toml:8:1: unknown key 'forbidd' in lint rule 'x' (did you mean 'forbid'?)");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nwhen = \"--a\"\n" + k_rule_tail) ==
          "r.toml:6:1: lint rule 'x' checks nothing: give it 'forbid', 'require', 'allowed' or "
          "'forbid_env'");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbid = [\"delay-wgrad\", \"--ok\"]\n" + k_rule_tail) ==
          "r.toml:8:11: 'forbid[0]' must be a flag like \"--name\" or \"--name=value\", not "
          "\"delay-wgrad\"");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbid = [\"--a\"]\nseverity = \"eror\"\n" + k_rule_tail) ==
          "r.toml:9:12: unknown severity 'eror' (did you mean 'error'?)");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbid = [\"--a\"]\n") ==
          "r.toml:6:1: lint rule 'x' is missing required key 'explain'\n"
          "r.toml:6:1: lint rule 'x' is missing required key 'fix'");
    CHECK(problems(k_head + "[[lint]]\nforbid = [\"--a\"]\n" + k_rule_tail) ==
          "r.toml:6:1: lint rule #1 is missing required key 'id'");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbid = \"--a\"\n" + k_rule_tail +
                   "[[lint]]\nid = \"x\"\nforbid = \"--b\"\n" + k_rule_tail) ==
          "r.toml:12:6: duplicate lint rule id 'x' (first defined at r.toml:7:6)");
    CHECK(problems(k_head +
                   "[[lint]]\nid = \"x\"\nrequire = [\"--a\"]\nunless_import = "
                   "\"apex-fused\"\n" +
                   k_rule_tail) ==
          "r.toml:9:17: 'unless_import' must be a Python module name like "
          "\"fused_weight_gradient_mlp_cuda\", not \"apex-fused\"");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nforbid_env = [\"MCORE-DPA\"]\n" + k_rule_tail) ==
          "r.toml:8:15: 'MCORE-DPA' is not a valid environment variable name");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nallowed = { flag = \"--s\", value = [\"a\"] }\n" + k_rule_tail) ==
          "r.toml:8:27: unknown key 'value' in 'allowed' (did you mean 'values'?)");
    CHECK(problems(k_head + "[[lint]]\nid = \"x\"\nallowed = { flag = \"--s=a\", values = [] }\n" + k_rule_tail) ==
          "r.toml:8:20: 'allowed.flag' must be a flag like \"--name\", not \"--s=a\"\n"
          "r.toml:8:38: 'allowed.values' must not be empty");
    CHECK(problems(k_head + "[lint]\nid = \"x\"\n") ==
          "r.toml:6:1: 'lint' must be an array of tables (write [[lint]]), not a table");
}

TEST_CASE("faults: read, regex checked, step must exist") {
    auto r = steps::parse_recipe(k_head + R"([[step]]
id = "venv"
kind = "venv"

[[fault]]
id = "copied-venv"
match = "bad interpreter: No such file"
step = "venv"
explain = "why"
fix = "how"
)",
                                 "r.toml");
    REQUIRE(r);
    REQUIRE(r->faults.size() == 1);
    CHECK(r->faults[0].id == "copied-venv");
    CHECK(r->faults[0].match.value == "bad interpreter: No such file");
    CHECK(r->faults[0].match.loc.str() == "r.toml:12:9");
    REQUIRE(r->faults[0].step);
    CHECK(r->faults[0].step->value == "venv");

    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmatch = \"(unclosed\"\n" + k_rule_tail)
              .rfind("r.toml:8:9: 'match' is not a valid regular expression (", 0) == 0);
    CHECK(problems(k_head +
                   "[[step]]\nid = \"venv\"\nkind = \"venv\"\n[[fault]]\nid = "
                   "\"f\"\nmatch = \"x\"\nstep = \"vnev\"\n" +
                   k_rule_tail) ==
          "r.toml:12:8: fault 'f' names step 'vnev', which this recipe does not have (did you "
          "mean 'venv'?)");
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\n" + k_rule_tail) ==
          "r.toml:6:1: fault 'f' is missing required key 'match'");
    CHECK(problems(k_head + "[[fault]]\nid = \"f\"\nmach = \"x\"\n" + k_rule_tail) ==
          "r.toml:8:1: unknown key 'mach' in fault 'f' (did you mean 'match'?)");
}

TEST_CASE("flag aliases: groups read, a flag in two groups is a problem") {
    auto r = steps::parse_recipe(k_head +
                                     "[flag_aliases]\n\"--use-fused-mhc\" = [\"--mhc-fused\"]\n"
                                     "\"--a\" = \"--b\"\n",
                                 "r.toml");
    REQUIRE(r);
    REQUIRE(r->flag_aliases.size() == 2);
    CHECK(r->flag_aliases.at("--use-fused-mhc") == std::vector<std::string>{"--mhc-fused"});
    CHECK(r->flag_aliases.at("--a") == std::vector<std::string>{"--b"});

    CHECK(problems(k_head + "[flag_aliases]\n\"--a\" = [\"--b\"]\n\"--c\" = [\"--b\"]\n") ==
          "r.toml:8:10: flag '--b' is already in the alias group of '--a'");
    CHECK(problems(k_head + "[flag_aliases]\n\"use-fused\" = [\"--b\"]\n") ==
          "r.toml:7:1: 'flag_aliases key' must be a flag like \"--name\", not \"use-fused\"");
}

TEST_CASE("perf baseline: read and validated") {
    auto r = steps::parse_recipe(k_head +
                                     "[perf]\nbaseline = { tflops = 450, tolerance = 0.1, note = "
                                     "\"8xH200\" }\n",
                                 "r.toml");
    REQUIRE(r);
    REQUIRE(r->perf_baseline);
    CHECK(r->perf_baseline->tflops == Approx(450.0));
    CHECK(r->perf_baseline->tolerance == Approx(0.1));
    CHECK(r->perf_baseline->note == "8xH200");

    auto d = steps::parse_recipe(k_head + "[perf]\nbaseline = { tflops = 450.5 }\n", "r.toml");
    REQUIRE(d);
    CHECK(d->perf_baseline->tolerance == Approx(0.05));

    CHECK(problems(k_head + "[perf]\nbaseline = { tflops = 0 }\n") ==
          "r.toml:7:23: 'perf.baseline.tflops' must be a number greater than 0, not 0");
    CHECK(problems(k_head + "[perf]\nbaseline = { tflops = 1.0, tolerance = 1.5 }\n") ==
          "r.toml:7:40: 'perf.baseline.tolerance' must be a fraction from 0 up to (not "
          "including) 1, not 1.5");
    CHECK(problems(k_head + "[perf]\nbaseline = { tflop = 400.0 }\n") ==
          "r.toml:7:14: unknown key 'tflop' in 'perf.baseline' (did you mean 'tflops'?)");
    CHECK(problems(k_head + "[perf]\nbasline = 1\n") ==
          "r.toml:7:1: unknown key 'basline' in [perf] (did you mean 'baseline'?)");
    CHECK(problems(k_head + "[perf]\nbaseline = { note = \"x\" }\n") ==
          "r.toml:7:12: 'perf.baseline' is missing required key 'tflops'");
}

TEST_CASE("a recipe without the doctor sections has none") {
    auto r = steps::parse_recipe(k_head, "r.toml");
    REQUIRE(r);
    CHECK(r->lint_rules.empty());
    CHECK(r->faults.empty());
    CHECK(r->flag_aliases.empty());
    CHECK_FALSE(r->perf_baseline);
}

TEST_CASE("the shipped h200-te214 recipe carries the seed's lint rules and faults") {
    auto file = std::filesystem::path(BS_TEST_DATA).parent_path().parent_path() / "recipes" / "h200-te214.toml";
    auto r = steps::load_recipe(file);
    REQUIRE(r);
    std::vector<std::string> ids;
    for (const auto& rule : r->lint_rules) ids.push_back(rule.id);
    CHECK(ids == std::vector<std::string>{"mhc-no-fine-grained-schedule", "mhc-cuda-graph-scope",
                                          "mhc-cuda-graph-scope-explicit", "no-apex-no-grad-accum-fusion",
                                          "te-no-sdpa-env"});
    CHECK(r->faults.size() == 2);
}
