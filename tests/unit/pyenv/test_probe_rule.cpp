// The import-probe rule (what is imported first) and the probe server, against real files:
// extensions built with the host's cc, modules run by the host's python3.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "../cc.hpp"
#include "../skip.hpp"
#include "core/fs.hpp"
#include "exec/process.hpp"
#include "pyenv/import_probe.hpp"

namespace fs = std::filesystem;
using bootstrap::core::TempDir;
using bootstrap::core::write_file_atomic;
using namespace bootstrap::pyenv;

using bs_test::cc;

namespace {

/// site/NAME.cpython-311-x86_64-linux-gnu.so, linked against site/torch/lib/libc10.so when
/// `needs_c10` (not a loadable Python module: the rule only reads its DT_NEEDED).
fs::path build_extension(const fs::path& site, const std::string& name, bool needs_c10) {
    fs::create_directories(site / "torch" / "lib");
    REQUIRE(write_file_atomic(site / "c10.c", "int c10_answer(void) { return 42; }\n"));
    REQUIRE(write_file_atomic(site / "ext.c", needs_c10 ? "extern int c10_answer(void);\n"
                                                          "int ext(void) { return c10_answer(); }\n"
                                                        : "int ext(void) { return 1; }\n"));
    auto lib = site / "torch" / "lib" / "libc10.so";
    if (!cc({"-shared", "-fPIC", "-o", lib.string(), (site / "c10.c").string()})) return {};
    auto out = site / (name + ".cpython-311-x86_64-linux-gnu.so");
    std::vector<std::string> args{"-shared", "-fPIC", "-o", out.string(), (site / "ext.c").string()};
    if (needs_c10) {
        args.push_back("-L" + (site / "torch" / "lib").string());
        args.push_back("-lc10");
    }
    REQUIRE(cc(args));
    return out;
}

}  // namespace

TEST_CASE("probe_preload: torch first for an extension that needs libc10", "[import_probe]") {
    TempDir dir("proberule");
    auto site = dir.path() / "site";
    auto so = build_extension(site, "fused_weight_gradient_mlp_cuda", true);
    if (so.empty()) BS_SKIP("no C compiler (cc) on PATH");
    build_extension(site / "plain", "plain_ext", false);

    auto rule = probe_preload("fused_weight_gradient_mlp_cuda", {site});
    CHECK(rule.modules == std::vector<std::string>{"torch"});
    CHECK(rule.reason == "fused_weight_gradient_mlp_cuda.cpython-311-x86_64-linux-gnu.so needs libc10.so");

    // No libc10/libtorch in DT_NEEDED, a Python module, an unknown one: nothing first.
    CHECK(probe_preload("plain_ext", {site / "plain"}).modules.empty());
    REQUIRE(write_file_atomic(site / "pure.py", "X = 1\n"));
    CHECK(probe_preload("pure", {site}).modules.empty());
    CHECK(probe_preload("nowhere", {site}).modules.empty());
    // torch itself never waits for torch.
    CHECK(probe_preload("torch", {site}).modules.empty());
    // The recipe's list comes first and is kept; torch is not added twice.
    auto declared = probe_preload("plain_ext", {site / "plain"}, {"numpy", "torch"});
    CHECK(declared.modules == std::vector<std::string>{"numpy", "torch"});
    CHECK(declared.reason == "the recipe asks for it");
    CHECK(probe_preload("fused_weight_gradient_mlp_cuda", {site}, {"numpy"}).modules ==
          std::vector<std::string>{"torch", "numpy"});
}

TEST_CASE("find_extension_module follows the interpreter's order", "[import_probe]") {
    TempDir dir("proberule");
    auto a = dir.path() / "a", b = dir.path() / "b";
    fs::create_directories(a / "pkg" / "sub");
    fs::create_directories(b);
    REQUIRE(write_file_atomic(a / "pkg" / "__init__.py", ""));
    REQUIRE(write_file_atomic(a / "pkg" / "_C.cpython-311-x86_64-linux-gnu.so", "x"));
    REQUIRE(write_file_atomic(a / "shadow.py", ""));
    REQUIRE(write_file_atomic(b / "shadow.so", "x"));
    REQUIRE(write_file_atomic(b / "amp_C.so", "x"));
    REQUIRE(write_file_atomic(b / "amp_Cx.so", "x"));  // another module's file
    CHECK(find_extension_module("pkg._C", {a, b}) == a / "pkg" / "_C.cpython-311-x86_64-linux-gnu.so");
    CHECK(find_extension_module("shadow", {a, b}).empty());  // a.py comes first on the path
    CHECK(find_extension_module("amp_C", {a, b}) == b / "amp_C.so");
    CHECK(find_extension_module("pkg", {a, b}).empty());
    CHECK(find_extension_module("pkg.sub", {a, b}).empty());
}

TEST_CASE("module_search_dirs adds the directories of .pth files", "[import_probe]") {
    TempDir dir("proberule");
    auto site = dir.path() / "site", editable = dir.path() / "src";
    fs::create_directories(site);
    fs::create_directories(editable);
    REQUIRE(write_file_atomic(site / "a.pth", "# comment\nimport os\n" + editable.string() + "\n/does/not/exist\n"));
    CHECK(module_search_dirs(site) == std::vector<fs::path>{site, editable});
    CHECK(module_search_dirs({}).empty());
}

TEST_CASE("parse_import_probe reads where the root cause was raised and whom it blames", "[import_probe]") {
    auto f = parse_import_probe(
        "bootstrap-verify: import megatron.core failed: ImportError: cannot import name "
        "'__version__' from 'nvidia_resiliency_ext' (/v/site/nvidia_resiliency_ext/__init__.py)\n"
        "bootstrap-verify: root cause at: /v/site/megatron/core/utils.py:12\n");
    CHECK(f.root_cause_at == "/v/site/megatron/core/utils.py:12");
    CHECK(f.blamed_module == "nvidia_resiliency_ext");
    CHECK(f.summary.find("root cause at") == std::string::npos);
    CHECK(parse_import_probe("bootstrap-verify: import a failed: AttributeError: module 'b.c' has "
                             "no attribute 'x'\n")
              .blamed_module == "b.c");
    CHECK(parse_import_probe("bootstrap-verify: import a failed: ValueError: x\n").blamed_module.empty());
}

namespace {

fs::path host_python() {
    auto env = bootstrap::exec::current_environment();
    return bootstrap::exec::find_program("python3", env["PATH"]);
}

}  // namespace

TEST_CASE("run_probe_server isolates each import and shares the preload", "[import_probe]") {
    auto python = host_python();
    if (python.empty()) BS_SKIP("no python3 on PATH");
    TempDir dir("probeserver");
    auto site = dir.path();
    REQUIRE(write_file_atomic(site / "heavy.py", "import os\nPID = os.getpid()\nCOUNT = [0]\n"));
    REQUIRE(
        write_file_atomic(site / "fine.py", "import heavy\nheavy.COUNT[0] += 1\nassert heavy.COUNT[0] == 1\nX = 1\n"));
    REQUIRE(write_file_atomic(site / "crash.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"));
    REQUIRE(write_file_atomic(site / "quits.py", "import sys\nsys.exit(5)\n"));
    REQUIRE(write_file_atomic(site / "hangs.py", "import time\ntime.sleep(60)\n"));
    REQUIRE(
        write_file_atomic(site / "shared.py", "import heavy, os\nassert heavy.PID != os.getpid(), 'not preloaded'\n"));
    auto env = bootstrap::exec::current_environment();
    env["PYTHONPATH"] = site.string();
    std::vector<ProbeRequest> requests{{"fine", "X"}, {"crash", ""},  {"quits", ""}, {"hangs", ""},
                                       {"fine", "Y"}, {"shared", ""}, {"fine", ""},  {"bad\tname", ""}};
    auto started = std::chrono::steady_clock::now();
    auto served = run_probe_server(python, requests, env, {"heavy"}, 4, std::chrono::seconds(2));
    REQUIRE(served);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
    CHECK(served->preloaded == std::vector<std::string>{"heavy"});
    const auto& r = served->results;
    REQUIRE(r.size() == requests.size());
    INFO(r[0].output);
    CHECK(r[0].ok());  // each child starts from the server's state, not the last child's
    CHECK(r[1].signal == 11);
    CHECK(r[2].exit_code == 3);  // SystemExit is the probe's to report
    CHECK(parse_import_probe(r[2].output).error == "SystemExit: 5");
    CHECK(r[3].timed_out);
    CHECK(r[4].exit_code == 4);
    CHECK(parse_import_probe(r[4].output).missing_attribute);
    CHECK(r[5].ok());  // heavy came from the server, imported before the fork
    CHECK(r[6].ok());
    CHECK(r[7].exit_code == 2);
}

TEST_CASE("run_probe_server starts again without a preload that kills it", "[import_probe]") {
    auto python = host_python();
    if (python.empty()) BS_SKIP("no python3 on PATH");
    TempDir dir("probeserver");
    REQUIRE(write_file_atomic(dir.path() / "deadly.py", "import os\nos.abort()\n"));
    REQUIRE(write_file_atomic(dir.path() / "fine.py", "X = 1\n"));
    auto env = bootstrap::exec::current_environment();
    env["PYTHONPATH"] = dir.path().string();
    auto served =
        run_probe_server(python, {{"fine", ""}, {"deadly", ""}}, env, {"deadly"}, 2, std::chrono::seconds(10));
    REQUIRE(served);
    CHECK(served->preloaded.empty());
    CHECK(served->results[0].ok());
    CHECK(served->results[1].signal == 6);
}

TEST_CASE("import_probe_spec passes the preloads and describe_probe hides the script", "[import_probe]") {
    auto spec = import_probe_spec("/v/bin/python", "amp_C", "", {}, {"torch"});
    REQUIRE(spec.argv.size() == 6);
    CHECK(spec.argv[3] == "amp_C");
    CHECK(spec.argv[5] == "torch");
    CHECK(import_probe_spec("/v/bin/python", "x", "", {}, {}).argv.size() == 5);
    CHECK(describe_probe("/v/bin/python", "amp_C", "", {"torch"}) ==
          "/v/bin/python -c <import probe>: import amp_C after import torch");
}

TEST_CASE("run_probe_server gives up on a preload that hangs", "[import_probe]") {
    auto python = host_python();
    if (python.empty()) BS_SKIP("no python3 on PATH");
    TempDir dir("probeserver");
    REQUIRE(write_file_atomic(dir.path() / "stuck.py", "import time\ntime.sleep(60)\n"));
    REQUIRE(write_file_atomic(dir.path() / "fine.py", "X = 1\n"));
    auto env = bootstrap::exec::current_environment();
    env["PYTHONPATH"] = dir.path().string();
    auto started = std::chrono::steady_clock::now();
    auto served = run_probe_server(python, {{"fine", "X"}}, env, {"stuck"}, 2, std::chrono::seconds(1));
    REQUIRE(served);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(15));
    CHECK(served->preloaded.empty());
    CHECK(served->results[0].ok());
}
