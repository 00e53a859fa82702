#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

/// Where the step holds a value `value` that may hold placeholders ("" when it has none).
std::string text_loc(const Step& step, const std::string& value) {
    for (const auto& t : step.texts)
        if (t.value == value) return t.loc.str();
    return "";
}

// A recipe shaped like recipes/h200-te214.toml, with the step kinds this version supports.
// Line numbers matter: the location checks below count them.
constexpr const char* k_full_recipe = R"(schema = 1
name = "h200-te214"
summary = "Megatron-LM + TE 2.14 + mHC on H200, torch 2.11 cu130, Python 3.12"

[vars]
megatron = "{env.MEGATRON_DIR}"
checkout = "{vars.megatron}/src"
cache = "{env.XDG_CACHE_HOME:-/tmp/cache}/bootstrap"

[venv]
path = "{vars.megatron}/.venv-megatron"
python = "3.12"
installer = "uv"                 # or "pip"

[network]
timeout = 600
retries = 5
attempts = 3

[env]
set = { PIP_NO_INPUT = "1", CC = "gcc-12" }
unset = ["UV_PROJECT_ENVIRONMENT", "MCORE_DPA_USE_SDPA"]

[device]
probes = ["torch", "driver", "nvidia-smi"]
fallback_arch = "9.0"

[[step]]
id = "venv"
kind = "venv"

[[step]]
id = "torch"
kind = "install"
packages = ["torch==2.11.0+cu130"]
index_url = "https://download.pytorch.org/whl/cu130"
extra_index_urls = ["https://pypi.nvidia.com"]
verify = [{ import = "torch", attr = "cuda" }]

[[step]]
id = "cublas"
kind = "install"
packages = ["nvidia-cublas>=13.4.1.1", "nvidia-cuda-runtime"]
upgrade = true
no_deps = true
allow_conflicts = ["torch"]
find_links = "{vars.cache}/wheels"
timeout = 1800
attempts = 2

[[step]]
id = "megatron"
kind = "sync"
project = "{vars.checkout}"
args = ["--no-dev"]
env = { MAX_JOBS = "{host.cpus}" }

[[step]]
id = "mhc"
kind = "run"
argv = ["python", "setup.py", "build_ext", "--inplace"]
cwd = "{vars.checkout}/mhc"
creates = "{vars.checkout}/mhc/mhc{python.ext_suffix}"
unless = ["test", "-e", "{venv.path}/done"]
env_unset = ["CFLAGS"]
optional = true
timeout = 90.5

[[step]]
id = "smoke"
kind = "check"
verify = [
    { import = "transformer_engine.pytorch" },
    { file = "{venv.path}/bin/python{python.version}" },
]
)";

Recipe parse_ok(std::string_view text) {
    auto r = steps::parse_recipe(text, "full.toml");
    INFO((r ? std::string() : r.error().detail));
    REQUIRE(r);
    return *r;
}

}  // namespace

TEST_CASE("a full recipe parses into its structs") {
    Recipe r = parse_ok(k_full_recipe);
    CHECK(r.file == "full.toml");
    CHECK(r.schema == 1);
    CHECK(r.name == "h200-te214");
    CHECK(r.summary == "Megatron-LM + TE 2.14 + mHC on H200, torch 2.11 cu130, Python 3.12");
    CHECK(r.source_digest == core::sha256_hex(k_full_recipe));

    CHECK(r.venv.path.value == "{vars.megatron}/.venv-megatron");
    CHECK(r.venv.path.loc.str() == "full.toml:11:8");
    CHECK(r.venv.python == "3.12");
    CHECK(r.venv.installer == InstallerKind::uv);
    CHECK(r.venv.loc.line == 10);

    CHECK(r.network.timeout == 600);
    CHECK(r.network.retries == 5);
    CHECK(r.network.attempts == 3);

    REQUIRE(r.env_set.size() == 2);
    CHECK(r.env_set.at("CC").value == "gcc-12");
    CHECK(r.env_set.at("PIP_NO_INPUT").value == "1");
    CHECK(r.env_unset == std::vector<std::string>{"UV_PROJECT_ENVIRONMENT", "MCORE_DPA_USE_SDPA"});
    CHECK(r.device_probes == std::vector<std::string>{"torch", "driver", "nvidia-smi"});
    CHECK(r.device_fallback_arch == "9.0");

    REQUIRE(r.steps.size() == 6);
    CHECK(r.steps[0].id == "venv");
    CHECK(r.steps[0].kind == "venv");
    CHECK(r.steps[0].loc.str() == "full.toml:28:1");
}

TEST_CASE("vars keep file order, not toml++'s sorted order") {
    Recipe r = parse_ok(k_full_recipe);
    REQUIRE(r.vars.size() == 3);
    CHECK(r.vars[0].first == "megatron");
    CHECK(r.vars[1].first == "checkout");
    CHECK(r.vars[2].first == "cache");
    CHECK(r.vars[0].second.value == "{env.MEGATRON_DIR}");
    CHECK(r.vars[1].second.loc.str() == "full.toml:7:12");
    CHECK(r.vars[2].second.value == "{env.XDG_CACHE_HOME:-/tmp/cache}/bootstrap");
}

TEST_CASE("install steps carry packages, indexes and flags") {
    Recipe r = parse_ok(k_full_recipe);
    const Step& torch = r.steps[1];
    CHECK(torch.kind == "install");
    CHECK(torch.loc.line == 32);
    REQUIRE(torch.packages.size() == 1);
    CHECK(torch.packages[0].value == "torch==2.11.0+cu130");
    CHECK(torch.packages[0].loc.str() == "full.toml:35:13");
    // The kind's own keys are its (steps/kind_install.cpp: test_plan_kind_keys.cpp checks
    // them through the plan); every value that may hold placeholders is kept for the check.
    CHECK(text_loc(torch, "https://download.pytorch.org/whl/cu130") == "full.toml:36:13");
    CHECK(text_loc(torch, "https://pypi.nvidia.com") == "full.toml:37:21");
    CHECK_FALSE(torch.timeout);
    CHECK_FALSE(torch.attempts);
    REQUIRE(torch.verify.size() == 1);
    CHECK(torch.verify[0].kind == VerifyClause::Kind::import_module);
    CHECK(torch.verify[0].target.value == "torch");
    REQUIRE(torch.verify[0].attr);
    CHECK(torch.verify[0].attr->value == "cuda");
    CHECK(torch.verify[0].loc.str() == "full.toml:38:11");

    const Step& cublas = r.steps[2];
    CHECK(cublas.packages.size() == 2);
    CHECK(cublas.allow_conflicts == std::vector<std::string>{"torch"});
    CHECK_FALSE(text_loc(cublas, "{vars.cache}/wheels").empty());
    CHECK(cublas.timeout == 1800.0);
    CHECK(cublas.attempts == 2);
}

TEST_CASE("sync, run and check steps carry their keys") {
    Recipe r = parse_ok(k_full_recipe);
    const Step& sync = r.steps[3];
    CHECK(sync.kind == "sync");
    CHECK_FALSE(text_loc(sync, "{vars.checkout}").empty());
    REQUIRE(sync.env.count("MAX_JOBS") == 1);
    CHECK(sync.env.at("MAX_JOBS").value == "{host.cpus}");

    const Step& run = r.steps[4];
    CHECK(run.kind == "run");
    CHECK_FALSE(text_loc(run, "--inplace").empty());
    CHECK_FALSE(text_loc(run, "{vars.checkout}/mhc").empty());
    CHECK_FALSE(text_loc(run, "{venv.path}/done").empty());
    CHECK(run.env_unset == std::vector<std::string>{"CFLAGS"});
    CHECK(run.optional);
    CHECK(run.timeout == 90.5);

    const Step& check = r.steps[5];
    CHECK(check.kind == "check");
    REQUIRE(check.verify.size() == 2);
    CHECK(check.verify[0].target.value == "transformer_engine.pytorch");
    CHECK_FALSE(check.verify[0].attr);
    CHECK(check.verify[1].kind == VerifyClause::Kind::file);
    CHECK(check.verify[1].target.value == "{venv.path}/bin/python{python.version}");
}

TEST_CASE("defaults apply when optional sections are absent") {
    Recipe r = parse_ok(
        "schema = 1\nname = \"min\"\n[venv]\npath = \"/v\"\npython = \"3.11\"\n"
        "installer = \"pip\"\n");
    CHECK(r.venv.installer == InstallerKind::pip);
    CHECK(r.network.timeout == 30);
    CHECK(r.network.retries == 3);
    CHECK(r.network.attempts == 1);
    CHECK(r.steps.empty());
    CHECK(r.vars.empty());
    CHECK_FALSE(r.device_fallback_arch);
}

TEST_CASE("load_recipe reads a file, records its absolute path and digest") {
    core::TempDir dir("recipe-test");
    auto file = dir.path() / "r.toml";
    REQUIRE(core::write_file_atomic(file, k_full_recipe));
    auto r = steps::load_recipe(file);
    REQUIRE(r);
    CHECK(r->file == file);
    CHECK(r->file.is_absolute());
    CHECK(r->source_digest == core::sha256_hex(k_full_recipe));
    CHECK(r->steps.size() == 6);
}

TEST_CASE("load_recipe names the path, a missing file or a directory is a usage error") {
    core::TempDir dir("recipe-test");
    auto file = dir.path() / "bad.toml";
    REQUIRE(core::write_file_atomic(file, "schema = 1\nname = \"x\"\n"));
    auto r = steps::load_recipe(file);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_recipe);
    CHECK(r.error().message == file.string() + ":1:1: missing required table [venv]");

    auto missing = steps::load_recipe(dir.path() / "nope.toml");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::usage);
    CHECK(missing.error().message == (dir.path() / "nope.toml").string() + ": no such recipe file");

    auto directory = steps::load_recipe(dir.path());
    REQUIRE_FALSE(directory);
    CHECK(directory.error().code == ErrorCode::usage);
    CHECK(directory.error().message == dir.path().string() + ": is a directory, not a recipe file");
}

TEST_CASE("to_string names installers as the recipe spells them") {
    CHECK(std::string(to_string(InstallerKind::pip)) == "pip");
    CHECK(SourceLoc{"a.toml", 3, 7}.str() == "a.toml:3:7");
    CHECK(SourceLoc{"a.toml", 0, 0}.str() == "a.toml");
}
