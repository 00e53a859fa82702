// Built-in known faults (data) and the line matcher. Every entry's text is an error met on the
// H200 nodes (README pitfalls P1-P24); tests/unit/doctor/test_knowledge.cpp matches real lines.

#include "doctor/knowledge.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::doctor {

namespace {

/// Lines longer than this are cut before matching: libstdc++'s regex recurses per character
/// and a progress-bar line of megabytes would overflow the stack.
constexpr size_t k_max_line = 4096;
constexpr size_t k_max_shown = 300;

/// One built-in entry; `near` (see KnownFault) is rarely needed.
KnownFault entry(std::string id, std::string pattern, std::vector<std::string> hints, std::string step,
                 std::string explain, std::string fix, std::string near = "") {
    KnownFault f;
    f.id = std::move(id);
    f.pattern = std::move(pattern);
    f.near = std::move(near);
    f.explain = std::move(explain);
    f.fix = std::move(fix);
    f.step = std::move(step);
    f.source = "built-in";
    f.hints = std::move(hints);
    return f;
}

std::vector<KnownFault> builtin_table() {
    return {
        entry("cublaslt-undefined-symbol", R"(undefined symbol: (cublasLt\w+)(, version libcublasLt\.so\.\d+)?)",
              {"undefined symbol: cublasLt"}, "cublas",
              "TransformerEngine calls a cuBLASLt symbol the loaded libcublasLt does not have. "
              "torch 2.11 pins nvidia-cublas==13.1.0.3, but TE 2.14.1 (built against cuBLAS >= "
              "13.3 headers) calls cublasLtGroupedMatrixLayoutInit_internal, which exists from "
              "cuBLAS 13.2 on (README pitfall P10).",
              "Upgrade cuBLAS past torch's pin, from a neutral directory: `cd /tmp && uv pip "
              "install --python VENV/bin/python --upgrade 'nvidia-cublas>=13.4.1.1' "
              "--extra-index-url https://pypi.nvidia.com` (the recipe's `cublas` step), then "
              "re-run the import."),
        entry("autotokenizer-not-defined", R"(name 'AutoTokenizer' is not defined)", {"AutoTokenizer"}, "transformers",
              "transformers failed to import and the error was swallowed: Megatron's "
              "huggingface_tokenizer.py wraps `from transformers import AutoTokenizer` in "
              "try/except, so the name is simply undefined later. In the seed transformers' "
              "dependency `regex` was missing (P11, P21).",
              "See the real error with `VENV/bin/python -c 'from transformers import "
              "AutoTokenizer'`, then reinstall transformers with its dependencies: `uv pip "
              "install --python VENV/bin/python --reinstall transformers` (the recipe's "
              "`transformers` step)."),
        entry("gradient-accumulation-fusion-no-apex",
              R"(gradient_accumulation_fusion set to True|fused_weight_gradient_mlp_cuda module is not found)",
              {"gradient_accumulation_fusion", "fused_weight_gradient_mlp_cuda"}, "",
              "Gradient-accumulation fusion is on by default in Megatron and needs apex's CUDA "
              "extension fused_weight_gradient_mlp_cuda, which does not import in this venv (P18).",
              "Add `--no-gradient-accumulation-fusion` to the training flags, or build apex with "
              "its CUDA extensions (APEX_CPP_EXT=1 APEX_CUDA_EXT=1, --no-build-isolation, "
              "TORCH_CUDA_ARCH_LIST=9.0) and drop the flag to get the fusion back."),
        entry("mhc-fine-grained-schedule-shape", R"(mat1 and mat2 shapes cannot be multiplied)",
              {"mat1 and mat2 shapes"}, "",
              "With mHC (--enable-hyper-connections, on main --enable-mhc-connections), "
              "--overlap-moe-expert-parallel-comm and --delay-wgrad-compute take the fine-grained "
              "1F1B schedule, which skips HyperConnectionModule.input_expand: attention receives "
              "the raw [s, b, C] hidden states instead of n*C (5120 = 4 streams x 1280 in the "
              "seed) (P16). Without mHC this is an ordinary model-shape mismatch.",
              "Remove --overlap-moe-expert-parallel-comm and --delay-wgrad-compute while mHC is "
              "on; `bootstrap lint CONFIG --recipe recipes/h200-te214.toml` checks this before "
              "launch."),
        entry("cuda-graph-captured-event", R"(cudaErrorCapturedEvent)", {"cudaErrorCapturedEvent"}, "",
              "Something synchronized inside CUDA-graph capture: the MoE token dispatcher "
              "(_maybe_dtoh_and_synchronize) calls .synchronize() on the capturing stream, so a "
              "graph scope that captures the MoE layer fails (P17).",
              "Narrow the CUDA-graph scope: with mHC only `--cuda-graph-scope moe_router` works "
              "(on newer Megatron: --cuda-graph-modules moe_router); without mHC "
              "`--cuda-graph-scope attn` captures attention only. The default (full layer) cannot "
              "be used with the MoE dispatcher."),
        entry(
            "uv-network-timeout",
            R"(Failed to download distribution due to network timeout|UV_HTTP_TIMEOUT \(current value|Caused by: operation timed out)",
            {"network timeout", "UV_HTTP_TIMEOUT", "operation timed out"}, "",
            "uv gave up on a stalled download: it waits UV_HTTP_TIMEOUT seconds per read (30 by "
            "default) and retries 3 times; pypi.nvidia.com, which serves the nvidia-* CUDA "
            "wheels, often stalls (P9).",
            "Raise the read timeout (UV_HTTP_TIMEOUT=600; in a recipe, [network] timeout = 600) "
            "and re-run: bootstrap retries the whole step ([network] attempts) and uv's cache "
            "keeps what was already downloaded."),
        entry("unknown-cuda-arch", R"(Unknown CUDA arch \(([^)]*)\))", {"Unknown CUDA arch"}, "",
              "torch's extension builder rejected an entry of TORCH_CUDA_ARCH_LIST: the accepted "
              "set depends on the torch version, and entries are separated by ';' or spaces "
              "(`9.0`, `9.0a`, `9.0+PTX`), never commas. In the seed the arch came from "
              "nvidia-smi, which said 8.9 on an H200 (P1, P15).",
              "Set TORCH_CUDA_ARCH_LIST to the device's real compute capability as torch reports "
              "it (`torch.cuda.get_device_capability(0)`: \"9.0\" on H100/H200), ';'-separated."),
        entry("arch-autodetect-no-gpu", R"(IndexError: list index out of range)", {"IndexError"}, "",
              "TORCH_CUDA_ARCH_LIST is unset and no GPU is visible, so torch.utils.cpp_extension "
              "found no architecture to build for and indexed an empty list (`arch_list[-1] += "
              "'+PTX'`).",
              "Always set TORCH_CUDA_ARCH_LIST explicitly when building a CUDA extension (\"9.0\" "
              "for H100/H200), also on machines that have a GPU.",
              R"(_get_cuda_arch_flags|arch_list\[-1\])"),
        entry("nvidia-smi-invalid-field", R"re(Field "([^"]+)" is not a valid field to query)re",
              {"is not a valid field to query"}, "",
              "This nvidia-smi is older than the queried field (compute_cap came with later "
              "drivers): the value is unknown, not an error. nvidia-smi is no reliable source of "
              "the compute capability anyway: it said 8.9 on an H200 in the seed (P1).",
              "Read the compute capability from the driver API or torch (`python -c 'import "
              "torch; print(torch.cuda.get_device_capability(0))'`) and use nvidia-smi only as a "
              "cross-check."),
        entry("uv-venv-no-pip", R"(No module named pip\b)", {"No module named pip"}, "pip",
              "uv creates venvs without pip, and apex's build options (--config-settings "
              "--build-option=...) are pip's (P13).",
              "Install pip into the venv (`uv pip install --python VENV/bin/python pip`, the "
              "recipe's `pip` step) or create it with `uv venv --seed`."),
        entry("uv-python-unavailable",
              R"((Failed to (download|install) .*cpython-\d+\.\d+|No interpreter found for Python \S+ in))",
              {"cpython-", "No interpreter found for Python"}, "venv",
              "The recipe's [venv] python is a version this machine does not have, so `uv venv "
              "--python X.Y` looked for a managed CPython and tried to download one from GitHub "
              "(python-build-standalone); on an air-gapped node that fails (a DNS error), and with "
              "UV_PYTHON_DOWNLOADS=never uv finds none at all.",
              "Install the Python asked for (python3.12 for the reference recipe: a distribution "
              "package, or a python-build-standalone build unpacked from your own copy) or set "
              "[venv] python to its path (`python = \"/opt/python3.12/bin/python3.12\"`); "
              "offline: UV_PYTHON_INSTALL_MIRROR pointed at a mirror of python-build-standalone's "
              "releases lets uv download it from there."),
        entry("python3-config-missing", R"(python3-config: (command )?not found)", {"python3-config"}, "",
              "Megatron's helpers Makefile calls python3-config, which uv venvs do not have (P14).",
              "Build helpers.cpp directly with g++ using the venv's EXT_SUFFIX and `python -m "
              "pybind11 --includes`, as the seed does."),
        entry("name-not-defined", R"(name '([A-Za-z_][A-Za-z0-9_]*)' is not defined)", {"is not defined"}, "",
              "A name that should come from an import is undefined: Megatron often writes `try: "
              "import X except ImportError`, which turns a missing dependency into this later "
              "NameError (P21).",
              "Import the module that defines the name on its own (`VENV/bin/python -c 'import "
              "<module>'`) to see the real exception, and install what it says is missing "
              "(common: regex, click, platformdirs, requests, urllib3, tokenizers, safetensors, "
              "tqdm, pybind11, ninja)."),
        entry("no-module-named", R"(No module named '([^']+)')", {"No module named"}, "",
              "A module is missing from the venv, or a native extension was not built (apex's "
              "fused_* modules, Megatron's helpers_cpp) (P21).",
              "Check in the venv itself with `VENV/bin/python -c 'import <module>'` and install "
              "the distribution that provides it (apex comes from NVIDIA/apex sources: the PyPI "
              "package named `apex` is unrelated)."),
    };
}

bool hinted(std::string_view line, const KnownFault& f) {
    if (f.hints.empty()) return true;
    return std::any_of(f.hints.begin(), f.hints.end(),
                       [&](const std::string& h) { return line.find(h) != std::string_view::npos; });
}

bool search(const std::regex& re, std::string_view line) {
    line = line.substr(0, k_max_line);
    return std::regex_search(line.begin(), line.end(), re);
}

}  // namespace

Result<KnownFault> make_fault(KnownFault fault) {
    for (const std::string* pattern : {&fault.pattern, &fault.near})
        if (pattern->size() > recipe::k_max_fault_pattern)
            return fail(ErrorCode::usage, fmt::format("known fault '{}': regular expression of {} characters (at "
                                                      "most {})",
                                                      fault.id, pattern->size(), recipe::k_max_fault_pattern));
    // nosubs: only whether a line matches is asked, and libstdc++'s matcher spends stack per
    // character on every capture group it is inside (20 nested groups overflowed it on a
    // 4,096-character line); without them it is ~320 bytes per character, 1.3 MiB at k_max_line.
    constexpr auto k_flags = std::regex::ECMAScript | std::regex::nosubs;
    try {
        fault.compiled = std::make_shared<const std::regex>(fault.pattern, k_flags);
        if (!fault.near.empty()) fault.compiled_near = std::make_shared<const std::regex>(fault.near, k_flags);
    } catch (const std::regex_error& e) {
        return fail(ErrorCode::usage,
                    fmt::format("known fault '{}': invalid regular expression ({})", fault.id, e.what()));
    }
    return fault;
}

const std::vector<KnownFault>& builtin_faults() {
    static const std::vector<KnownFault> faults = [] {
        std::vector<KnownFault> out;
        for (auto& f : builtin_table())
            if (auto made = make_fault(std::move(f))) out.push_back(std::move(*made));
        return out;
    }();
    return faults;
}

std::vector<KnownFault> knowledge_for(const recipe::Recipe& recipe) {
    std::vector<KnownFault> out;
    for (const auto& f : recipe.faults) {
        KnownFault k;
        k.id = f.id;
        k.pattern = f.match.value;
        k.explain = f.explain;
        k.fix = f.fix;
        k.step = f.step ? f.step->value : "";
        k.source = f.loc.str();
        auto made = make_fault(std::move(k));
        if (made) out.push_back(std::move(*made));  // the parser rejected bad regexes already
    }
    for (const auto& f : builtin_faults()) {
        bool replaced = std::any_of(out.begin(), out.end(), [&](const KnownFault& r) { return r.id == f.id; });
        if (!replaced) out.push_back(f);
    }
    return out;
}

std::vector<FaultMatch> match_log(std::string_view log, const std::vector<KnownFault>& faults) {
    std::vector<std::string> lines = core::split(log, '\n');
    std::map<size_t, FaultMatch> found;  // fault index -> its match
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        for (size_t f = 0; f < faults.size(); ++f) {
            const KnownFault& fault = faults[f];
            if (!fault.compiled || !hinted(line, fault) || !search(*fault.compiled, line)) continue;
            if (fault.compiled_near) {
                bool near = false;
                for (size_t back = 1; back <= k_near_lines && back <= i && !near; ++back)
                    near = search(*fault.compiled_near, lines[i - back]);
                if (!near) continue;
            }
            auto [it, fresh] = found.try_emplace(f);
            if (fresh) {
                std::string text(core::trim(line));
                if (text.size() > k_max_shown) text = text.substr(0, k_max_shown) + "...";
                it->second = {&fault, static_cast<int>(i + 1), std::move(text), 0};
            }
            ++it->second.count;
            break;  // the line is explained; later (more generic) entries do not see it
        }
    }
    std::vector<FaultMatch> out;
    for (auto& [index, match] : found) out.push_back(std::move(match));
    std::stable_sort(out.begin(), out.end(), [](const FaultMatch& a, const FaultMatch& b) { return a.line < b.line; });
    return out;
}

std::vector<FaultMatch> match_log(std::string_view log) { return match_log(log, builtin_faults()); }

std::string format_matches(const std::vector<FaultMatch>& matches, const std::string& log_name) {
    std::string out;
    for (const auto& m : matches) {
        out += fmt::format("known fault '{}' at {}:{}{}\n", m.fault->id, log_name, m.line,
                           m.count > 1 ? fmt::format(" (and {} more lines)", m.count - 1) : "");
        out += fmt::format("  | {}\n", m.text);
        out += fmt::format("  why: {}\n", m.fault->explain);
        out += fmt::format("  fix: {}\n", m.fault->fix);
        if (!m.fault->step.empty()) out += fmt::format("  step: {}\n", m.fault->step);
        if (m.fault->source != "built-in") out += fmt::format("  from: {}\n", m.fault->source);
    }
    return out;
}

}  // namespace bootstrap::doctor
