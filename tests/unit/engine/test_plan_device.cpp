// {device.*} placeholders in a plan: probed lazily through the stand-in libcuda (the driver
// probe dlopens $BOOTSTRAP_LIBCUDA), or given with --arch / --no-device.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "pyenv/interpreter.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// The stand-in libcuda reads FAKE_CUDA_DEVICES with getenv at each call.
struct FakeDevices {
    explicit FakeDevices(const char* devices) { ::setenv("FAKE_CUDA_DEVICES", devices, 1); }
    ~FakeDevices() { ::unsetenv("FAKE_CUDA_DEVICES"); }
};

struct World {
    core::TempDir dir{"bs-plan-device"};
    fs::path bin = dir.path() / "bin";
    World() {
        fs::create_directories(bin);
        std::ofstream(bin / "uv") << "#!/bin/sh\n";
        fs::permissions(bin / "uv", fs::perms::owner_all);
    }
    /// `libcuda`: the library the driver probe loads (a missing path: no driver at all).
    engine::Facts facts(const std::string& libcuda = BS_FAKE_LIBCUDA) const {
        engine::Facts f;
        f.env = {{"PATH", bin.string()},
                 {"HOME", "/root"},
                 {"BOOTSTRAP_LIBCUDA", libcuda},
                 {"BOOTSTRAP_LIBNVML", (dir.path() / "no-libnvml.so").string()}};
        return f;
    }
    recipe::Recipe recipe(const std::string& rest) const {
        std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
                           "\"\npython = \"3.11\"\n" + rest;
        auto r = steps::parse_recipe(text, "t.toml");
        REQUIRE(r);
        return *r;
    }
};

const std::string k_build_step = R"(
[[step]]
id = "build"
kind = "run"
argv = ["make", "ARCH={device.arch}", "NVTE={device.nvte_archs}", "CMAKE={device.cmake_archs}"]
env = { TORCH_CUDA_ARCH_LIST = "{device.torch_arch_list}" }
)";

bool has_note(const engine::Plan& plan, const std::string& part) {
    for (const auto& n : plan.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("a recipe without {device.*} probes nothing") {
    World w;
    FakeDevices devices("9.0");
    auto r = w.recipe(
        "[device]\nprobes = [\"driver\"]\n[[step]]\nid = \"a\"\nkind = \"run\"\n"
        "argv = [\"true\"]\n");
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE(plan);
    CHECK(plan->device_origin().empty());
    CHECK(plan->notes.empty());
}

TEST_CASE("{device.*} come from the detected GPU") {
    World w;
    FakeDevices devices("9.0;9.0");
    auto r = w.recipe("[device]\nprobes = [\"driver\"]\n" + k_build_step);
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE(plan);
    const auto& s = plan->steps.at(0);
    CHECK(s.env_set.at("TORCH_CUDA_ARCH_LIST") == "9.0");
    CHECK(s.argv == std::vector<std::string>{"make", "ARCH=9.0", "NVTE=90", "CMAKE=90"});
    CHECK(plan->device_origin() == "9.0 (probe 'driver')");
    CHECK(s.key.size() == 64);
}

TEST_CASE("an --arch probes nothing, quietly, and the arch is in the key") {
    World w;
    FakeDevices devices("9.0");
    auto r = w.recipe("[device]\nprobes = [\"driver\"]\n" + k_build_step);
    engine::PlanOptions opts;
    opts.arch = "8.0";
    auto given = engine::make_plan(r, opts, w.facts());
    REQUIRE(given);
    CHECK(given->steps[0].env_set.at("TORCH_CUDA_ARCH_LIST") == "8.0");
    // Nothing to confirm or override: `plan` says "cuda archs: 8.0 (--arch 8.0)", no warning.
    CHECK(given->notes.empty());
    CHECK(given->notices.empty());
    CHECK(given->device_origin() == "8.0 (--arch 8.0)");
    // The driver would have said 9.0 on an H200: nothing asked it.
    CHECK(given->device_facts ==
          std::map<std::string, std::string>{{"cuda_archs", "8.0"}, {"cuda_archs_from", "--arch 8.0"}});
    auto detected = engine::make_plan(r, {}, w.facts());
    REQUIRE(detected);
    CHECK(detected->device_facts.at("gpus") == "Fake GPU sm_90 (9.0)");
    CHECK(detected->steps[0].key != given->steps[0].key);
}

TEST_CASE("an --arch without a GPU builds for it") {
    World w;
    auto r = w.recipe(k_build_step);
    engine::PlanOptions opts;
    opts.arch = "9.0";
    auto plan = engine::make_plan(r, opts, w.facts((w.dir.path() / "no-libcuda.so").string()));
    REQUIRE(plan);
    CHECK(plan->steps[0].env_set.at("TORCH_CUDA_ARCH_LIST") == "9.0");
    CHECK(plan->device_origin() == "9.0 (--arch 9.0)");
}

TEST_CASE("no GPU and no option: the step fails at plan time naming --arch and --no-device") {
    World w;
    FakeDevices devices("");
    auto r = w.recipe("[device]\nprobes = [\"driver\"]\n" + k_build_step);
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::not_found);
    CHECK(plan.error().message.starts_with("t.toml:"));
    CHECK(plan.error().message.find("no CUDA arch to build for") != std::string::npos);
    CHECK(plan.error().detail.find("--arch") != std::string::npos);
    CHECK(plan.error().detail.find("--no-device") != std::string::npos);
}

TEST_CASE("a --no-device plan uses fallback_arch (with ptx), and needs one") {
    World w;
    auto r = w.recipe("[device]\nfallback_arch = \"9.0\"\nptx = true\n" + k_build_step);
    engine::PlanOptions opts;
    opts.no_device = true;
    auto plan = engine::make_plan(r, opts, w.facts());
    REQUIRE(plan);
    CHECK(plan->steps[0].env_set.at("TORCH_CUDA_ARCH_LIST") == "9.0+PTX");
    CHECK(has_note(*plan, "--no-device: building for 9.0"));
    CHECK(plan->device_origin() == "9.0+PTX ([device] fallback_arch)");

    auto bare = w.recipe(k_build_step);
    auto missing = engine::make_plan(bare, opts, w.facts());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::usage);
    CHECK(missing.error().message.find("fallback_arch") != std::string::npos);
}

TEST_CASE("{device.*} in [vars] resolves in steps, the venv path alone probes nothing") {
    World w;
    auto r = w.recipe(
        "[vars]\nlist = \"{device.torch_arch_list}\"\n"
        "[device]\nfallback_arch = \"8.9\"\n"
        "[[step]]\nid = \"b\"\nkind = \"run\"\nargv = [\"echo\", \"{vars.list}\"]\n");
    engine::PlanOptions opts;
    opts.no_device = true;
    auto venv = engine::resolve_venv_path(r, opts, w.facts());
    REQUIRE(venv);
    auto plan = engine::make_plan(r, opts, w.facts());
    REQUIRE(plan);
    CHECK(plan->steps[0].argv == std::vector<std::string>{"echo", "8.9"});
}

TEST_CASE("{python.site_packages} is the venv's purelib, known once the venv exists") {
    World w;
    auto r = w.recipe(
        "[[step]]\nid = \"venv\"\nkind = \"venv\"\n\n[[step]]\nid = \"e\"\nkind = \"run\"\n"
        "argv = [\"echo\", \"{python.site_packages}/include\"]\n");
    auto early = engine::make_plan(r, {}, w.facts());
    REQUIRE(early);
    CHECK_FALSE(early->steps[1].complete);
    auto facts = w.facts();
    facts.python = pyenv::InterpreterFacts{};
    facts.python->purelib = "/v/lib/python3.11/site-packages";
    auto plan = engine::make_plan(r, {}, facts);
    REQUIRE(plan);
    CHECK(plan->steps[1].argv == std::vector<std::string>{"echo", "/v/lib/python3.11/site-packages/include"});
}

TEST_CASE("a pybind11 step compiles with the venv's headers and is keyed by source and compiler") {
    World w;
    fs::create_directories(w.dir.path() / "src");
    auto source = w.dir.path() / "src" / "helpers.cpp";
    REQUIRE(core::write_file_atomic(source, "int x;\n"));
    std::ofstream(w.bin / "c++") << "#!/bin/sh\n";
    fs::permissions(w.bin / "c++", fs::perms::owner_all);
    auto r =
        w.recipe("[[step]]\nid = \"venv\"\nkind = \"venv\"\n\n[[step]]\nid = \"h\"\nkind = \"pybind11\"\nsource = \"" +
                 source.string() + "\"\nmodule = \"helpers_cpp\"\nextra_args = [\"-DX\"]\n");

    // Before the venv exists the include dir and EXT_SUFFIX are unknown: no key yet.
    auto early = engine::make_plan(r, {}, w.facts());
    REQUIRE(early);
    CHECK_FALSE(early->steps[1].complete);

    auto facts = w.facts();
    facts.python = pyenv::InterpreterFacts{};
    facts.python->include_dir = "/py/include/python3.11";
    facts.python->ext_suffix = ".cpython-311-x86_64-linux-gnu.so";
    auto plan = engine::make_plan(r, {}, facts);
    REQUIRE(plan);
    const auto& s = plan->steps[1];
    std::string output = (source.parent_path() / "helpers_cpp.cpython-311-x86_64-linux-gnu.so").string();
    CHECK(s.argv == std::vector<std::string>{(w.bin / "c++").string(), "-O3", "-shared", "-std=c++17", "-fPIC",
                                             "-I/py/include/python3.11", "-DX", source.string(), "-o", output});
    REQUIRE(s.pybind11());
    CHECK(s.pybind11()->output == output);
    CHECK(s.pybind11()->includes_at == 6);
    CHECK(s.pybind11()->includes.back() == "--includes");
    REQUIRE(s.verify.size() == 1);
    CHECK(s.verify[0].describe() == "import helpers_cpp (from " + source.parent_path().string() + ")");
    CHECK(s.key_explain.find("source.sha256: ") != std::string::npos);

    // A changed source, compiler or EXT_SUFFIX changes the key.
    REQUIRE(core::write_file_atomic(source, "int y;\n"));
    auto edited = engine::make_plan(r, {}, facts);
    REQUIRE(edited);
    CHECK(edited->steps[1].key != s.key);
    std::ofstream(w.bin / "c++", std::ios::app) << "# another compiler\n";
    auto recompiled = engine::make_plan(r, {}, facts);
    REQUIRE(recompiled);
    CHECK(recompiled->steps[1].key != edited->steps[1].key);
    facts.python->ext_suffix = ".cpython-312-x86_64-linux-gnu.so";
    auto other_python = engine::make_plan(r, {}, facts);
    REQUIRE(other_python);
    CHECK(other_python->steps[1].key != recompiled->steps[1].key);
}

TEST_CASE("a step the selection leaves out asks no device, also through [vars]") {
    World w;
    // No driver at all: a device value that is asked for cannot be answered.
    auto r = w.recipe(
        "[vars]\narch = \"{device.arch}\"\n[device]\nprobes = [\"driver\"]\n"
        "[[step]]\nid = \"a\"\nkind = \"run\"\nargv = [\"true\"]\n"
        "[[step]]\nid = \"b\"\nkind = \"run\"\nargv = [\"echo\", \"{vars.arch}\"]\n" +
        k_build_step);
    const auto facts = w.facts((w.dir.path() / "no-libcuda.so").string());
    auto all = engine::make_plan(r, {}, facts);
    REQUIRE_FALSE(all);
    CHECK(all.error().message.find("no CUDA arch to build for") != std::string::npos);

    for (auto selection : {engine::StepSelection{{}, {"a"}, {}}, engine::StepSelection{{}, {}, {"b", "build"}}}) {
        engine::PlanOptions opts;
        opts.selection = selection;
        auto plan = engine::make_plan(r, opts, facts);
        REQUIRE(plan);
        CHECK(plan->selected == std::vector<bool>{true, false, false});
        CHECK(plan->device_facts.empty());
        CHECK(plan->steps[0].complete);
        CHECK_FALSE(plan->steps[1].complete);  // its value waits for a device nobody asked
        CHECK_FALSE(plan->steps[2].complete);
    }
    // `--from b` selects b (through the variable) and build: asked, and not answerable.
    engine::PlanOptions from;
    from.selection.from = "b";
    CHECK_FALSE(engine::make_plan(r, from, facts));
    // With --arch the same steps are planned completely, the variable too.
    from.arch = "9.0";
    auto given = engine::make_plan(r, from, facts);
    REQUIRE(given);
    CHECK(given->steps[1].argv == std::vector<std::string>{"echo", "9.0"});
}

TEST_CASE("a selection naming no step of the recipe is a usage error before anything is probed") {
    World w;
    auto r = w.recipe(k_build_step);
    engine::PlanOptions opts;
    opts.selection.skip = {"biuld"};
    auto plan = engine::make_plan(r, opts, w.facts((w.dir.path() / "no-libcuda.so").string()));
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::usage);
    CHECK(plan.error().message == "--skip biuld: the recipe has no step 'biuld' (did you mean 'build'?)");
}
