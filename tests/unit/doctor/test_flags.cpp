// Config readers: args files and shell scripts, flat YAML, Megatron's nested --yaml-cfg layout;
// every flag keeps its file:line.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "doctor/flags.hpp"
#include "doctor/lint.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;

namespace {

const Flag* find(const TrainingConfig& c, const std::string& name) {
    for (const auto& f : c.flags)
        if (f.name == name) return &f;
    return nullptr;
}

using Values = std::vector<std::string>;

}  // namespace

TEST_CASE("args: flags, values, comments, --flag=value, negative numbers") {
    auto c = parse_args(
        "# a comment\n"
        "--multi-latent-attention\n"
        "--q-lora-rank 768   # trailing comment\n"
        "--cuda-graph-scope moe_router moe_preprocess\n"
        "--lr=2.5e-4 --seed -1\n"
        "# --delay-wgrad-compute\n",
        "a.args");
    CHECK(c.format == ConfigFormat::args);
    REQUIRE(c.flags.size() == 5);
    CHECK(c.flags[0].name == "--multi-latent-attention");
    CHECK(c.flags[0].values.empty());
    CHECK(c.flags[0].where.str() == "a.args:2: --multi-latent-attention");
    CHECK(c.flags[1].values == Values{"768"});
    CHECK(c.flags[1].where.line == 3);
    CHECK(c.flags[2].values == Values{"moe_router", "moe_preprocess"});
    CHECK(c.flags[3].name == "--lr");
    CHECK(c.flags[3].values == Values{"2.5e-4"});
    CHECK(c.flags[4].name == "--seed");
    CHECK(c.flags[4].values == Values{"-1"});
    CHECK(find(c, "--delay-wgrad-compute") == nullptr);  // commented out
}

TEST_CASE("shell script: continuations, quotes, arrays, env assignments") {
    auto c = parse_args(
        "#!/bin/bash\n"                                                          // 1
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"                                 // 2
        "MODEL_ARGS=(\n"                                                         // 3
        "    --num-layers 24\n"                                                  // 4
        "    --tokenizer-model \"/data/tok model.json\"\n"                       // 5
        ")\n"                                                                    // 6
        "MCORE_DPA_USE_SDPA=1 torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"  // 7
        "    ${MODEL_ARGS[@]} \\\n"                                              // 8
        "    --data-path '$DATA' \\\n"                                           // 9
        "    --delay-wgrad-compute \\\n"                                         // 10
        "    --log-interval 1 2>&1 | tee log.txt\n"                              // 11
        "echo \"--not-a-flag\"   # quoted words after echo are values of nothing\n",
        "train.sh");
    REQUIRE(find(c, "--num-layers"));
    CHECK(find(c, "--num-layers")->where.line == 4);
    CHECK(find(c, "--tokenizer-model")->values == Values{"/data/tok model.json"});
    CHECK(find(c, "--data-path")->values == Values{"$DATA"});
    REQUIRE(find(c, "--delay-wgrad-compute"));
    CHECK(find(c, "--delay-wgrad-compute")->where.str() == "train.sh:10: --delay-wgrad-compute \\");
    CHECK(find(c, "--log-interval")->values == Values{"1"});
    REQUIRE(c.env.size() == 2);
    CHECK(c.env[0].name == "CUDA_DEVICE_MAX_CONNECTIONS");
    CHECK(c.env[0].where.line == 2);
    CHECK(c.env[1].name == "MCORE_DPA_USE_SDPA");
    CHECK(c.env[1].value == "1");
    CHECK(c.env[1].where.line == 7);
}

TEST_CASE("flat YAML: --flag keys and plain keys, booleans, lists, null") {
    auto c = parse_yaml(
        "--enable-mhc-connections: true\n"          // 1
        "cuda_graph_scope: moe_router\n"            // 2
        "gradient_accumulation_fusion: false\n"     // 3
        "overlap_moe_expert_parallel_comm: null\n"  // 4
        "cuda-graph-modules: [attn, moe_router]\n"  // 5
        "tokenizer_type: \"true\"\n",               // 6
        "flat.yaml");
    REQUIRE(c);
    CHECK(c->format == ConfigFormat::yaml_flat);
    REQUIRE(c->flags.size() == 5);
    CHECK(c->flags[0].name == "--enable-mhc-connections");
    CHECK(c->flags[0].values.empty());
    CHECK(c->flags[0].where.str() == "flat.yaml:1: --enable-mhc-connections: true");
    CHECK(c->flags[1].name == "--cuda-graph-scope");
    CHECK(c->flags[1].values == Values{"moe_router"});
    CHECK(c->flags[2].name == "--no-gradient-accumulation-fusion");  // false on a store_false dest
    CHECK(c->flags[2].where.line == 3);
    CHECK(c->flags[3].values == Values{"attn", "moe_router"});
    CHECK(c->flags[3].where.line == 5);
    CHECK(c->flags[4].values == Values{"true"});  // quoted: a string, not a switch
    CHECK(find(*c, "--overlap-moe-expert-parallel-comm") == nullptr);
}

TEST_CASE("Megatron --yaml-cfg: nested sections flatten to their own key names") {
    auto c = parse_yaml(
        "# WARNING: Yaml configs is currently an experimental feature\n"  // 1
        "language_model:\n"                                               // 2
        "  num_layers: 24\n"                                              // 3
        "  enable_hyper_connections: True\n"                              // 4
        "  num_residual_streams: 4\n"                                     // 5
        "model_parallel:\n"                                               // 6
        "  tensor_model_parallel_size: 1\n"                               // 7
        "  gradient_accumulation_fusion: False\n"                         // 8
        "  delay_wgrad_compute: True\n"                                   // 9
        "transformer_impl: transformer_engine\n"                          // 10
        "micro_batch_size: 2\n",                                          // 11
        "gpt.yaml");
    REQUIRE(c);
    CHECK(c->format == ConfigFormat::yaml_nested);
    REQUIRE(find(*c, "--num-layers"));
    CHECK(find(*c, "--num-layers")->values == Values{"24"});
    CHECK(find(*c, "--num-layers")->where.line == 3);
    CHECK(find(*c, "--enable-hyper-connections")->where.line == 4);
    CHECK(find(*c, "--no-gradient-accumulation-fusion")->where.line == 8);
    CHECK(find(*c, "--delay-wgrad-compute")->where.str() == "gpt.yaml:9: delay_wgrad_compute: True");
    CHECK(find(*c, "--transformer-impl")->values == Values{"transformer_engine"});
    CHECK(find(*c, "--micro-batch-size")->where.line == 11);
}

TEST_CASE("parse_config picks the layout by extension, a scalar .yaml is an args list") {
    auto scalar = parse_config(
        "# start.sh style\n--enable-hyper-connections\n"
        "--cuda-graph-scope attn\n",
        "a400m.yaml");
    REQUIRE(scalar);
    CHECK(scalar->format == ConfigFormat::args);
    REQUIRE(find(*scalar, "--cuda-graph-scope"));
    CHECK(find(*scalar, "--cuda-graph-scope")->where.line == 3);

    auto list = parse_config("- --enable-hyper-connections\n- --cuda-graph-scope attn\n", "l.yml");
    REQUIRE(list);
    REQUIRE(find(*list, "--cuda-graph-scope"));
    CHECK(find(*list, "--cuda-graph-scope")->values == Values{"attn"});
    CHECK(find(*list, "--cuda-graph-scope")->where.line == 2);

    auto args = parse_config("key: value\n--x 1\n", "run.sh");  // not YAML by extension
    REQUIRE(args);
    CHECK(args->format == ConfigFormat::args);
    CHECK(find(*args, "--x"));
}

TEST_CASE("YAML errors name the file and line") {
    auto bad = parse_config("a: [1, 2\nb: 3\n", "bad.yaml");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::usage);
    CHECK(bad.error().message.rfind("bad.yaml:", 0) == 0);
    CHECK(bad.error().message.find("cannot read the YAML configuration") != std::string::npos);
}

TEST_CASE("read_config reads a file, a missing file is a runtime error naming it") {
    core::TempDir dir;
    auto path = dir.path() / "cfg.args";
    std::ofstream(path) << "--a 1\n";
    auto c = read_config(path);
    REQUIRE(c);
    CHECK(c->file == path.string());
    CHECK(c->flags.size() == 1);
    auto missing = read_config(dir.path() / "nope.args");
    REQUIRE_FALSE(missing);
    CHECK(exit_code_for(missing.error()) == 1);
    CHECK(missing.error().message.find("nope.args") != std::string::npos);
}

TEST_CASE("aliases: built-in pairs and recipe groups map to one canonical flag") {
    FlagAliases a;
    CHECK(a.canonical("--enable-mhc-connections") == "--enable-hyper-connections");
    CHECK(a.canonical("--cuda-graph-modules") == "--cuda-graph-scope");
    CHECK(a.canonical("--mhc-num-residual-streams") == "--num-residual-streams");
    CHECK(a.canonical("--cuda_graph_modules") == "--cuda-graph-scope");
    CHECK(a.canonical("--other") == "--other");
    CHECK(a.spellings("--cuda-graph-scope") == "--cuda-graph-modules");
    // A recipe may name the other spelling canonical: the whole group follows.
    a.add("--enable-mhc-connections", {"--mhc"});
    CHECK(a.canonical("--enable-hyper-connections") == "--enable-mhc-connections");
    CHECK(a.canonical("--mhc") == "--enable-mhc-connections");
}

TEST_CASE("normalize_flag") {
    CHECK(normalize_flag("cuda_graph_scope") == "--cuda-graph-scope");
    CHECK(normalize_flag("--cuda_graph_scope") == "--cuda-graph-scope");
    CHECK(normalize_flag("--x") == "--x");
}
