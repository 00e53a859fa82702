// The knowledge base against recorded log snippets: every error text of the seed finds its
// entry, at the right line.
#include <catch2/catch.hpp>

#include <filesystem>

#include "doctor/knowledge.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;

namespace {

/// The single match of `log`, or a failed check.
FaultMatch only_match(const std::string& log) {
    auto matches = match_log(log);
    REQUIRE(matches.size() == 1);
    return matches[0];
}

}  // namespace

TEST_CASE("every built-in entry compiles") {
    CHECK(builtin_faults().size() == 14);
    for (const auto& f : builtin_faults()) {
        CHECK(f.compiled);
        CHECK_FALSE(f.explain.empty());
        CHECK_FALSE(f.fix.empty());
    }
}

TEST_CASE("seed 3.3: the cublasLt undefined symbol (TE 2.14 on torch's pinned cuBLAS)") {
    auto m = only_match(
        "Traceback (most recent call last):\n"
        "  File \"<string>\", line 1, in <module>\n"
        "  File \".../transformer_engine/__init__.py\", line 12, in <module>\n"
        "RuntimeError: undefined symbol: cublasLtGroupedMatrixLayoutInit_internal, version "
        "libcublasLt.so.13\n");
    CHECK(m.fault->id == "cublaslt-undefined-symbol");
    CHECK(m.line == 4);
    CHECK(m.text.rfind("RuntimeError: undefined symbol", 0) == 0);
    CHECK(m.fault->step == "cublas");
}

TEST_CASE("seed 3.4: AutoTokenizer not defined is the specific entry, not the generic one") {
    auto m = only_match(
        "building tokenizer ...\n"
        "  File \"huggingface_tokenizer.py\", line 91:\n"
        "ValueError: ... Exception: name 'AutoTokenizer' is not defined\n");
    CHECK(m.fault->id == "autotokenizer-not-defined");
    CHECK(m.line == 3);
    CHECK(m.fault->step == "transformers");
}

TEST_CASE("P21: another swallowed import falls to the generic NameError entry") {
    auto m = only_match("x\nNameError: name 'HAVE_APEX_FUSED' is not defined\n");
    CHECK(m.fault->id == "name-not-defined");
    CHECK(m.line == 2);
}

TEST_CASE("seed 6: gradient_accumulation_fusion without apex, message wrapped over two lines") {
    auto m = only_match(
        "[rank0]: Traceback (most recent call last):\n"
        "RuntimeError: ColumnParallelLinear was called with gradient_accumulation_fusion set to "
        "True \n"
        "but the custom CUDA extension fused_weight_gradient_mlp_cuda module is not found.\n");
    CHECK(m.fault->id == "gradient-accumulation-fusion-no-apex");
    CHECK(m.line == 2);
    CHECK(m.count == 2);
}

TEST_CASE("seed 5.1: mat1 and mat2 shapes (mHC with the fine-grained schedule flags)") {
    auto m = only_match(
        " iteration        1/  500000 | consumed samples: 256\n"
        "  File \"megatron/core/transformer/hyper_connection.py\", line 211, in forward\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (16384x1280 and 5120x24)\n");
    CHECK(m.fault->id == "mhc-fine-grained-schedule-shape");
    CHECK(m.line == 3);
    CHECK(m.fault->fix.find("--delay-wgrad-compute") != std::string::npos);
}

TEST_CASE("seed 5.2: cudaErrorCapturedEvent (CUDA-graph scope)") {
    auto m = only_match(
        "capturing cuda graph for layer 0\n"
        "  File \"token_dispatcher.py\", line 88, in _maybe_dtoh_and_synchronize\n"
        "torch.AcceleratorError: CUDA error: operation not permitted when stream is "
        "capturing (cudaErrorCapturedEvent)\n");
    CHECK(m.fault->id == "cuda-graph-captured-event");
    CHECK(m.line == 3);
    CHECK(m.fault->fix.find("moe_router") != std::string::npos);
}

TEST_CASE("seed 3.2: uv's timeout message, old and new forms") {
    auto fancy = only_match(
        "Downloading nvidia-cudnn-cu13 (600.1MiB)\n"
        "  x Failed to download `nvidia-cudnn-cu13==9.13.0.50`\n"
        "  |-> Failed to extract archive: nvidia_cudnn_cu13-9.13.0.50.whl\n"
        "  `-> Failed to download distribution due to network timeout. Try "
        "increasing\n"
        "      UV_HTTP_TIMEOUT (current value: 30s).\n");
    CHECK(fancy.fault->id == "uv-network-timeout");
    CHECK(fancy.line == 4);
    CHECK(fancy.count == 2);
    auto old = only_match(
        "error: Failed to download distributions\n"
        "  Caused by: Failed to fetch wheel: torch==2.2.0\n"
        "  Caused by: operation timed out\n");
    CHECK(old.fault->id == "uv-network-timeout");
    CHECK(old.line == 3);
}

TEST_CASE("no Python 3.12 on an air-gapped node: uv's managed download fails, or is off") {
    // uv 0.13.9, `uv venv --python 3.12` with no 3.12 installed and no route to GitHub.
    auto dns = only_match(
        "error: Request failed after 3 retries in 11.6s\n"
        "  cause: Failed to download `https://github.com/astral-sh/python-build-standalone/"
        "releases/download/20261110/cpython-3.12.16%2B20261110-x86_64-unknown-linux-gnu-"
        "install_only_stripped.tar.gz`\n"
        "  cause: error sending request for url (https://github.com/astral-sh/...)\n"
        "  cause: client error (Connect)\n"
        "  cause: dns error\n"
        "  cause: failed to lookup address information: Name or service not known\n");
    CHECK(dns.fault->id == "uv-python-unavailable");
    CHECK(dns.line == 2);
    CHECK(dns.fault->step == "venv");
    CHECK(dns.fault->fix.find("set [venv] python to its path") != std::string::npos);
    CHECK(dns.fault->fix.find("UV_PYTHON_INSTALL_MIRROR") != std::string::npos);
    // UV_PYTHON_DOWNLOADS=never: nothing is downloaded and nothing is found.
    auto never = only_match(
        "error: No interpreter found for Python 3.12 in managed "
        "installations or search path\n");
    CHECK(never.fault->id == "uv-python-unavailable");
}

TEST_CASE("P15: Unknown CUDA arch") {
    auto m = only_match(
        "running build_ext\n"
        "ValueError: Unknown CUDA arch (8.9,9.0) or GPU not supported\n");
    CHECK(m.fault->id == "unknown-cuda-arch");
    CHECK(m.line == 2);
}

TEST_CASE("arch auto-detection without a GPU: IndexError only under _get_cuda_arch_flags") {
    auto m = only_match(
        "  File \"/v/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 2411, in "
        "_get_cuda_arch_flags\n"
        "    arch_list[-1] += '+PTX'\n"
        "    ~~~~~~~~~^^^^\n"
        "IndexError: list index out of range\n");
    CHECK(m.fault->id == "arch-autodetect-no-gpu");
    CHECK(m.line == 4);
    // The same exception elsewhere means nothing to us.
    CHECK(match_log("  File \"train.py\", line 3, in main\nIndexError: list index out of range\n").empty());
}

TEST_CASE("P1: nvidia-smi's not a valid field") {
    auto m = only_match(
        "$ nvidia-smi --query-gpu=compute_cap --format=csv\n"
        "Field \"compute_cap\" is not a valid field to query.\n");
    CHECK(m.fault->id == "nvidia-smi-invalid-field");
    CHECK(m.line == 2);
}

TEST_CASE("several faults in one log come back in line order, each once") {
    std::string log =
        "ok\n"
        "Field \"compute_cap\" is not a valid field to query.\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 3x4)\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 3x4)\n"
        "/v/bin/python: No module named pip\r\n";
    auto matches = match_log(log);
    REQUIRE(matches.size() == 3);
    CHECK(matches[0].fault->id == "nvidia-smi-invalid-field");
    CHECK(matches[1].fault->id == "mhc-fine-grained-schedule-shape");
    CHECK(matches[1].count == 2);
    CHECK(matches[2].fault->id == "uv-venv-no-pip");  // shadows the generic no-module entry
    CHECK(matches[2].line == 5);
    CHECK(matches[2].text == "/v/bin/python: No module named pip");
}

TEST_CASE("a clean training log matches nothing") {
    CHECK(match_log(" iteration      100/  500000 | consumed samples: 25600 | elapsed time per "
                    "iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 412.3 |\n")
              .empty());
    CHECK(match_log("").empty());
}

TEST_CASE("recipe entries come first and may replace a built-in") {
    auto r = steps::parse_recipe(R"(schema = 1
name = "t"
[venv]
path = "/tmp/v"
python = "3.12"
[[fault]]
id = "nemo"
match = "nemo[-_]run"
explain = "test group"
fix = "--no-group test"
[[fault]]
id = "cuda-graph-captured-event"
match = "cudaErrorCapturedEvent"
explain = "ours"
fix = "ours too"
)",
                                 "r.toml");
    REQUIRE(r);
    auto kb = knowledge_for(*r);
    CHECK(kb.size() == builtin_faults().size() + 1);
    CHECK(kb[0].id == "nemo");
    CHECK(kb[0].source == "r.toml:6:1");
    auto matches = match_log(
        "  Building nemo_run @ git+https://github.com/NVIDIA/NeMo-Run\n"
        "x (cudaErrorCapturedEvent)\n",
        kb);
    REQUIRE(matches.size() == 2);
    CHECK(matches[0].fault->id == "nemo");
    CHECK(matches[1].fault->explain == "ours");
    auto text = format_matches(matches, "step.log");
    CHECK(text.find("known fault 'nemo' at step.log:1\n") == 0);
    CHECK(text.find("  from: r.toml:6:1\n") != std::string::npos);
}

TEST_CASE("the shipped recipe's faults match their texts") {
    auto file = std::filesystem::path(BS_TEST_DATA).parent_path().parent_path() / "recipes" / "h200-te214.toml";
    auto r = steps::load_recipe(file);
    REQUIRE(r);
    auto kb = knowledge_for(*r);
    auto matches = match_log(
        "start.sh: /old/venv/bin/python: bad interpreter: No such file or "
        "directory\n",
        kb);
    REQUIRE(matches.size() == 1);
    CHECK(matches[0].fault->id == "copied-venv-shebang");
    CHECK(matches[0].fault->step == "venv");
}

TEST_CASE("format_matches shows the line, why, fix and step") {
    auto matches = match_log(
        "a\nRuntimeError: undefined symbol: cublasLtGroupedMatrixLayoutInit_"
        "internal, version libcublasLt.so.13\n");
    auto text = format_matches(matches, "/logs/te.log");
    CHECK(text.find("known fault 'cublaslt-undefined-symbol' at /logs/te.log:2\n  | RuntimeError") == 0);
    CHECK(text.find("\n  why: ") != std::string::npos);
    CHECK(text.find("\n  fix: ") != std::string::npos);
    CHECK(text.find("\n  step: cublas\n") != std::string::npos);
}

TEST_CASE("an invalid regex is an error value naming the entry") {
    KnownFault broken;
    broken.id = "broken";
    broken.pattern = "(";
    auto bad = make_fault(broken);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("known fault 'broken'") == 0);
}

TEST_CASE("a recipe pattern is bounded and matched without capture groups") {
    // 20 nested capture groups cost libstdc++'s matcher ~6 KiB of stack per character: a
    // 4,000-character line overflowed it. Compiled with nosubs it is ~320 bytes a character.
    KnownFault nested;
    nested.id = "nested";
    nested.pattern = std::string(20, '(') + "x" + std::string(20, ')') + "+y";
    auto made = make_fault(nested);
    REQUIRE(made);
    CHECK(made->compiled->mark_count() == 0);
    std::vector<KnownFault> kb{*made};
    auto matches = match_log("start\n" + std::string(4000, 'x') + "y\n", kb);
    REQUIRE(matches.size() == 1);
    CHECK(matches[0].line == 2);
    // A line beyond k_max_line is cut first: the `y` at 100,001 is never seen.
    CHECK(match_log(std::string(100'000, 'x') + "y\n", kb).empty());

    KnownFault huge;
    huge.id = "huge";
    huge.pattern = std::string(recipe::k_max_fault_pattern + 1, 'a');
    auto too_long = make_fault(huge);
    REQUIRE_FALSE(too_long);
    CHECK(too_long.error().message == "known fault 'huge': regular expression of 1001 characters (at most 1000)");

    KnownFault backref;
    backref.id = "backref";
    backref.pattern = "(a)\\1";
    CHECK_FALSE(make_fault(backref));
}
