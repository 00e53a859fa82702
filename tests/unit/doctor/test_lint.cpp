// The seed's rules from the shipped recipes/h200-te214.toml, against configurations that break
// each of them, and the seed's minimal known-good flag set.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "doctor/flags.hpp"
#include "doctor/lint.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
using recipe::Severity;

namespace {

namespace fs = std::filesystem;

fs::path repo_root() { return fs::path(BS_TEST_DATA).parent_path().parent_path(); }

const recipe::Recipe& h200() {
    static const recipe::Recipe r = [] {
        auto loaded = steps::load_recipe(repo_root() / "recipes" / "h200-te214.toml");
        REQUIRE(loaded);
        return *loaded;
    }();
    return r;
}

/// Fixed import facts.
class FakeProbe final : public ImportProbe {
public:
    explicit FakeProbe(ImportFact::State state) : m_state(state) {}
    ImportFact can_import(const std::string& module) override {
        asked.push_back(module);
        return {m_state,
                m_state == ImportFact::State::fails ? "ModuleNotFoundError: No module named '" + module + "'" : ""};
    }
    std::vector<std::string> asked;

private:
    ImportFact::State m_state;
};

/// A baseline that passes every rule when apex imports: the seed's section 8.
const std::string k_good =
    "--transformer-impl transformer_engine\n"  // 1
    "--enable-hyper-connections\n"             // 2
    "--num-residual-streams 4\n"               // 3
    "--cuda-graph-impl transformer_engine\n"   // 4
    "--cuda-graph-scope moe_router\n";         // 5

std::vector<Finding> lint(const std::string& text, ImportFact::State apex = ImportFact::State::imports,
                          exec::EnvMap env = {}, const std::string& name = "cfg.args") {
    auto config = parse_config(text, name);
    REQUIRE(config);
    FakeProbe probe(apex);
    return lint_config(*config, h200(), probe, env);
}

std::vector<Finding> errors(const std::vector<Finding>& all) {
    std::vector<Finding> out;
    for (const auto& f : all)
        if (f.severity == Severity::error) out.push_back(f);
    return out;
}

}  // namespace

TEST_CASE("the seed's minimal known-good flag set passes with no findings") {
    auto text = core::read_file(repo_root() / "examples" / "a400m_minimal.args");
    REQUIRE(text);
    auto findings = lint(*text);
    INFO(format_findings(findings));
    CHECK(findings.empty());
    CHECK(lint(k_good).empty());
}

TEST_CASE("mHC with each forbidden fine-grained schedule flag is an error at its line") {
    for (const std::string flag : {"--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute"}) {
        auto findings = errors(lint(k_good + flag + "\n"));
        INFO(format_findings(findings));
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].rule == "mhc-no-fine-grained-schedule");
        CHECK(findings[0].message == flag + " is not allowed with --enable-hyper-connections");
        REQUIRE(findings[0].evidence.size() == 2);
        CHECK(findings[0].evidence[0] == "cfg.args:6: " + flag);
        CHECK(findings[0].evidence[1] == "cfg.args:2: --enable-hyper-connections");
        CHECK(findings[0].fix.find(flag) != std::string::npos);
    }
}

TEST_CASE("the forbidden flags are fine without mHC") {
    auto findings = lint(
        "--transformer-impl transformer_engine\n--delay-wgrad-compute\n"
        "--overlap-moe-expert-parallel-comm\n--cuda-graph-scope attn\n");
    CHECK(errors(findings).empty());
}

TEST_CASE("main's spelling of mHC triggers the same rule (alias)") {
    auto findings = errors(lint("--enable-mhc-connections\n--delay-wgrad-compute\n"));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].message == "--delay-wgrad-compute is not allowed with --enable-mhc-connections");
}

TEST_CASE("with mHC every graph scope but moe_router is an error") {
    for (const std::string scope : {"attn", "full-layer", "mlp", "moe", "moe_preprocess"}) {
        std::string text = "--enable-hyper-connections\n--cuda-graph-scope " + scope + "\n";
        auto findings = errors(lint(text));
        INFO(scope << "\n" << format_findings(findings));
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].rule == "mhc-cuda-graph-scope");
        CHECK(findings[0].message == "--cuda-graph-scope " + scope +
                                         " is not allowed with --enable-hyper-connections "
                                         "(allowed: moe_router)");
        CHECK(findings[0].evidence[0] == "cfg.args:2: --cuda-graph-scope " + scope);
    }
    CHECK(errors(lint("--enable-hyper-connections\n--cuda-graph-scope moe_router\n")).empty());
    // The newer flag name and a second value are caught too.
    auto modules = errors(lint("--enable-hyper-connections\n--cuda-graph-modules moe_router attn\n"));
    REQUIRE(modules.size() == 1);
    CHECK(modules[0].message.rfind("--cuda-graph-modules attn is not allowed", 0) == 0);
}

TEST_CASE("with mHC and TE CUDA graphs the default (full-layer) scope is an error") {
    auto findings = errors(lint("--enable-hyper-connections\n--cuda-graph-impl transformer_engine\n"));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].rule == "mhc-cuda-graph-scope-explicit");
    CHECK(findings[0].message ==
          "--cuda-graph-scope=moe_router (or --cuda-graph-modules) is required with "
          "--enable-hyper-connections and --cuda-graph-impl=transformer_engine");
    CHECK(findings[0].evidence == std::vector<std::string>{"cfg.args:1: --enable-hyper-connections",
                                                           "cfg.args:2: --cuda-graph-impl transformer_engine"});
}

TEST_CASE(
    "without apex's fused_weight_gradient_mlp_cuda --no-gradient-accumulation-fusion is "
    "required") {
    auto findings = errors(lint(k_good, ImportFact::State::fails));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].rule == "no-apex-no-grad-accum-fusion");
    CHECK(findings[0].message ==
          "--no-gradient-accumulation-fusion is required with `import "
          "fused_weight_gradient_mlp_cuda` failing");
    REQUIRE(findings[0].evidence.size() == 1);
    CHECK(findings[0].evidence[0] ==
          "python -c 'import fused_weight_gradient_mlp_cuda': ModuleNotFoundError: No module "
          "named 'fused_weight_gradient_mlp_cuda'");
    CHECK(errors(lint(k_good + "--no-gradient-accumulation-fusion\n", ImportFact::State::fails)).empty());
    // The YAML spelling of the same flag.
    CHECK(errors(lint("gradient_accumulation_fusion: false\n", ImportFact::State::fails, {}, "cfg.yaml")).empty());
}

TEST_CASE("an unknown import fact is an info finding, never an error") {
    auto findings = lint(k_good, ImportFact::State::unknown);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].severity == Severity::info);
    CHECK(findings[0].message.rfind("not checked: cannot tell whether `import "
                                    "fused_weight_gradient_mlp_cuda` works",
                                    0) == 0);
    CHECK(findings[0].fix.find("--venv") != std::string::npos);
}

TEST_CASE("the import fact comes from the venv's own python (real probe, fake interpreter)") {
    core::TempDir venv;
    fs::create_directories(venv.path() / "bin");
    auto python = venv.path() / "bin" / "python";
    {
        std::ofstream out(python);
        // Answers as the import probe does: `python -c SCRIPT MODULE ATTR`.
        out << "#!/bin/sh\n"
               "case \"$3\" in\n"
               "  fused_weight_gradient_mlp_cuda)\n"
               "    echo 'Traceback (most recent call last):' >&2\n"
               "    echo \"bootstrap-verify: import $3 failed: ModuleNotFoundError: No module named "
               "'fused_weight_gradient_mlp_cuda'\"\n"
               "    exit 3 ;;\n"
               "esac\n"
               "[ \"$(pwd)\" = / ] || exit 3\n"
               "exit 0\n";
    }
    fs::permissions(python, fs::perms::owner_all);
    VenvImportProbe probe(venv.path());
    auto missing = probe.can_import("fused_weight_gradient_mlp_cuda");
    CHECK(missing.state == ImportFact::State::fails);
    CHECK(missing.detail == "ModuleNotFoundError: No module named 'fused_weight_gradient_mlp_cuda'");
    CHECK(probe.can_import("torch").state == ImportFact::State::imports);  // and cwd was "/"

    auto config = parse_config(k_good, "cfg.args");
    REQUIRE(config);
    auto findings = errors(lint_config(*config, h200(), probe, {}));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].rule == "no-apex-no-grad-accum-fusion");

    VenvImportProbe nowhere(venv.path() / "missing");
    CHECK(nowhere.can_import("x").state == ImportFact::State::unknown);
    CHECK(probe.can_import("not a module").state == ImportFact::State::unknown);
}

TEST_CASE("MCORE_DPA_USE_SDPA with the TE path is an error, from the script or the environment") {
    auto script =
        errors(lint("MCORE_DPA_USE_SDPA=1 torchrun pretrain_gpt.py \\\n"
                    "  --transformer-impl transformer_engine\n",
                    ImportFact::State::imports, {}, "train.sh"));
    REQUIRE(script.size() == 1);
    CHECK(script[0].rule == "te-no-sdpa-env");
    CHECK(script[0].message ==
          "MCORE_DPA_USE_SDPA must not be set with "
          "--transformer-impl=transformer_engine");
    CHECK(script[0].evidence[0] == "train.sh:1: MCORE_DPA_USE_SDPA=1 torchrun pretrain_gpt.py \\");

    auto env = errors(lint(k_good, ImportFact::State::imports, {{"MCORE_DPA_USE_SDPA", "1"}}));
    REQUIRE(env.size() == 1);
    CHECK(env[0].evidence[0] == "environment: MCORE_DPA_USE_SDPA=1");

    // The local path may use it.
    CHECK(
        errors(lint("--transformer-impl local\n", ImportFact::State::imports, {{"MCORE_DPA_USE_SDPA", "1"}})).empty());
}

TEST_CASE("Megatron's nested --yaml-cfg layout is checked with file:line evidence") {
    auto findings =
        errors(lint("language_model:\n"
                    "  enable_hyper_connections: true\n"
                    "  cuda_graph_scope: attn\n"
                    "model_parallel:\n"
                    "  delay_wgrad_compute: true\n",
                    ImportFact::State::imports, {}, "gpt.yaml"));
    REQUIRE(findings.size() == 2);
    CHECK(findings[0].rule == "mhc-no-fine-grained-schedule");
    CHECK(findings[0].evidence[0] == "gpt.yaml:5: delay_wgrad_compute: true");
    CHECK(findings[1].rule == "mhc-cuda-graph-scope");
    CHECK(findings[1].evidence[0] == "gpt.yaml:3: cuda_graph_scope: attn");
}

TEST_CASE("format_findings prints severity, rule, evidence, why and fix") {
    auto findings = lint(k_good + "--delay-wgrad-compute\n");
    auto text = format_findings(findings);
    CHECK(text.rfind("error [mhc-no-fine-grained-schedule] --delay-wgrad-compute is not allowed "
                     "with --enable-hyper-connections\n  at: cfg.args:6: --delay-wgrad-compute\n",
                     0) == 0);
    CHECK(text.find("\n  why: ") != std::string::npos);
    CHECK(text.find("\n  fix: ") != std::string::npos);
    CHECK(count_severity(findings, Severity::error) == 1);
}

TEST_CASE("rules: value conditions look at the last occurrence, require=value names the value") {
    auto r = steps::parse_recipe(R"(schema = 1
name = "t"
[venv]
path = "/tmp/v"
python = "3.12"
[flag_aliases]
"--attention-backend" = ["--attn-backend"]
[[lint]]
id = "flash"
when = "--transformer-impl=transformer_engine"
require = "--attention-backend=flash"
severity = "warning"
explain = "e"
fix = "f"
)",
                                 "r.toml");
    REQUIRE(r);
    FakeProbe probe(ImportFact::State::imports);
    auto check = [&](const std::string& text) {
        auto c = parse_config(text, "c.args");
        REQUIRE(c);
        return lint_config(*c, *r, probe, {});
    };
    auto wrong = check(
        "--transformer-impl local\n--transformer-impl transformer_engine\n"
        "--attn-backend fused\n");
    REQUIRE(wrong.size() == 1);
    CHECK(wrong[0].severity == Severity::warning);
    CHECK(wrong[0].message == "--attn-backend must be flash with --transformer-impl=transformer_engine, not fused");
    CHECK(wrong[0].evidence[0] == "c.args:3: --attn-backend fused");
    CHECK(check("--transformer-impl transformer_engine\n--transformer-impl local\n").empty());
    CHECK(check("--transformer-impl transformer_engine\n--attention-backend flash\n").empty());
    CHECK(probe.asked.empty());
}

TEST_CASE("a module name of any length is checked without std::regex") {
    // The regex check of a 100,000-character name overflowed the stack.
    core::TempDir tmp("lint-long");
    VenvImportProbe nowhere(tmp.path() / "missing");
    std::string name = std::string(50'000, 'a') + "." + std::string(50'000, 'b');
    auto fact = nowhere.can_import(name);
    CHECK(fact.state == ImportFact::State::unknown);
    CHECK(fact.detail.rfind("no interpreter at ", 0) == 0);
    auto bad = nowhere.can_import(name + ".9");
    CHECK(bad.state == ImportFact::State::unknown);
    CHECK(bad.detail.size() < 300);
    CHECK(bad.detail.find("is not a module name") != std::string::npos);
    CHECK_FALSE(nowhere.can_import("a..b").detail.find("is not a module name") == std::string::npos);
    CHECK_FALSE(nowhere.can_import("a.").detail.find("is not a module name") == std::string::npos);
    CHECK(nowhere.can_import("_a1.b_2").detail.rfind("no interpreter at ", 0) == 0);
}
