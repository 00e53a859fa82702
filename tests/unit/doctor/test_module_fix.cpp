// Which step a doctor fix re-runs for a module that does not import: a step whose verify
// clauses import that very module (the step producing what it needs), else the owner of the
// distribution that provides it, else the step verifying its top-level package; never a
// distribution named after the module (`fused-weight-gradient-mlp-cuda` does not exist). Every
// command names the venv examined (`--venv`), quoted for a shell.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/dist_info.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
namespace fs = std::filesystem;

namespace {

const char* k_recipe =
    "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
    "[[step]]\nid = \"torch\"\nkind = \"install\"\npackages = [\"torch\"]\n"
    "[[step]]\nid = \"apex\"\nkind = \"run\"\nargv = [\"true\"]\n"
    "verify = [{ import = \"amp_C\" }, { import = \"fused_weight_gradient_mlp_cuda\" }]\n"
    "[[step]]\nid = \"final\"\nkind = \"check\"\nverify = [{ import = \"amp_C\" }]\n";

// The reference recipe's TransformerEngine steps: te-core installs the package (its
// transformer_engine/pytorch/ included), te-torch builds the extension that package imports.
const char* k_te_recipe =
    "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
    "[[step]]\nid = \"te-core\"\nkind = \"install\"\npackages = [\"transformer_engine\"]\n"
    "verify = [{ import = \"transformer_engine.common\" }]\n"
    "[[step]]\nid = \"te-torch\"\nkind = \"run\"\nargv = [\"true\"]\n"
    "verify = [{ import = \"transformer_engine.pytorch\" }]\n";

/// site-packages of `venv` with one distribution whose RECORD lists `files`.
std::map<std::string, pyenv::Distribution> one_dist(const fs::path& venv, const std::string& name,
                                                    const std::string& version, const std::vector<std::string>& files) {
    auto site = venv / "lib" / "python3.11" / "site-packages";
    auto info = site / fmt::format("{}-{}.dist-info", name, version);
    fs::create_directories(info);
    std::ofstream(info / "METADATA") << fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version);
    std::ofstream record(info / "RECORD");
    for (const auto& f : files) record << f << ",,\n";
    record << info.filename().string() << "/METADATA,,\n";
    record.close();
    auto dists = pyenv::scan_site_packages(site);
    REQUIRE(dists);
    return *dists;
}

}  // namespace

TEST_CASE("module_fix re-runs the step that provides a module", "[doctor][imports]") {
    core::TempDir dir("modfix");
    auto recipe = steps::parse_recipe(k_recipe, "r.toml");
    REQUIRE(recipe);
    DoctorOptions options;
    options.venv = dir.path() / "venv";
    options.recipe = &*recipe;
    const std::string venv = options.venv.string();
    std::map<std::string, pyenv::Distribution> none;

    // apex's extensions: no distribution provides them here; the build step that verifies them
    // does (not the check step that only looks).
    CHECK(detail::module_fix(options, "fused_weight_gradient_mlp_cuda", none) ==
          "re-run step 'apex' (bootstrap run r.toml --venv " + venv + " --only apex --force)");
    CHECK(detail::module_fix(options, "amp_C", none) ==
          "re-run step 'apex' (bootstrap run r.toml --venv " + venv + " --only apex --force)");

    // Without a recipe step: say so, and name no made-up distribution.
    auto unknown = detail::module_fix(options, "fused_dense_cuda", none);
    CHECK(unknown.find("no installed distribution provides fused_dense_cuda") == 0);
    CHECK(unknown.find("--reinstall") == std::string::npos);
    CHECK(unknown.find("fused-dense-cuda") == std::string::npos);

    // A distribution that provides it (by its RECORD), owned by a step per the journal: a
    // module no step verifies is fixed by re-running that owner.
    auto dists = one_dist(options.venv, "apex", "0.1",
                          {"amp_C.cpython-311-x86_64-linux-gnu.so", "apex_C.cpython-311-x86_64-linux-gnu.so"});
    options.owners["apex"] = "torch";
    CHECK(detail::module_fix(options, "apex_C", dists) ==
          "re-run step 'torch' (bootstrap run r.toml --venv " + venv +
              " --only torch --force); it provides apex_C through apex 0.1");
    // The step whose verify clauses import the module wins over the owner.
    CHECK(detail::module_fix(options, "amp_C", dists) ==
          "re-run step 'apex' (bootstrap run r.toml --venv " + venv + " --only apex --force)");
    // No owner, no recipe: reinstall the distribution that really provides it.
    options.owners.clear();
    options.recipe = nullptr;
    CHECK(detail::module_fix(options, "amp_C", dists) ==
          fmt::format("uv pip install --python {} --reinstall apex", (options.venv / "bin" / "python").string()));
}

TEST_CASE(
    "transformer_engine.pytorch is fixed by the step that verifies it, not by the owner "
    "of transformer_engine",
    "[doctor][imports]") {
    core::TempDir dir("modfix");
    auto recipe = steps::parse_recipe(k_te_recipe, "/srv/h200 te.toml");
    REQUIRE(recipe);
    DoctorOptions options;
    options.venv = dir.path() / "my venv";
    options.recipe = &*recipe;
    auto dists = one_dist(options.venv, "transformer_engine", "2.14.1",
                          {"transformer_engine/__init__.py", "transformer_engine/common/__init__.py",
                           "transformer_engine/pytorch/__init__.py"});
    options.owners["transformer-engine"] = "te-core";
    const std::string venv = "'" + options.venv.string() + "'";
    CHECK(detail::module_fix(options, "transformer_engine.pytorch", dists) ==
          "re-run step 'te-torch' (bootstrap run '/srv/h200 te.toml' --venv " + venv + " --only te-torch --force)");
    // transformer_engine itself (a default check) is the package's: te-core.
    CHECK(detail::module_fix(options, "transformer_engine", dists) ==
          "re-run step 'te-core' (bootstrap run '/srv/h200 te.toml' --venv " + venv +
              " --only te-core --force); it provides transformer_engine through "
              "transformer_engine 2.14.1");
}

TEST_CASE(
    "fix commands name the venv, the recorded recipe and the owner's indexes, without "
    "credentials",
    "[doctor][fixes]") {
    DoctorOptions options;
    options.venv = "/opt/venv";
    CHECK(detail::run_command(options, "--only cublas") == "bootstrap run RECIPE --venv /opt/venv --only cublas");
    // An image: the recipe its run read, still there unchanged (the CLI checks its digest).
    options.recorded_recipe = "/etc/bootstrap/recipe.toml";
    CHECK(detail::run_command(options, "--recreate") ==
          "bootstrap run /etc/bootstrap/recipe.toml --venv /opt/venv --recreate");
    CHECK(detail::run_command(options, "") == "bootstrap run /etc/bootstrap/recipe.toml --venv /opt/venv");

    CHECK(detail::install_command(options, "nvidia-cublas", "nvidia-cublas==13.1.0.3") ==
          "uv pip install --python /opt/venv/bin/python nvidia-cublas==13.1.0.3");
    options.owners["nvidia-cublas"] = "cublas";
    options.step_indexes["cublas"] = {"https://***@repo.example/simple", "https://pypi.nvidia.com"};
    CHECK(detail::install_command(options, "nvidia-cublas", "nvidia-cublas>=13.4", detail::InstallMode::upgrade) ==
          "uv pip install --python /opt/venv/bin/python --index-url https://repo.example/simple "
          "--extra-index-url https://pypi.nvidia.com --upgrade 'nvidia-cublas>=13.4'");

    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\ninstaller = \"pip\"\n"
        "[[step]]\nid = \"cublas\"\nkind = \"install\"\npackages = [\"nvidia-cublas\"]\n",
        "r.toml");
    REQUIRE(recipe);
    options.recipe = &*recipe;
    CHECK(detail::reinstall_fix(options, "nvidia-cublas") ==
          "re-run step 'cublas' (bootstrap run r.toml --venv /opt/venv --only cublas --force) / "
          "/opt/venv/bin/python -m pip install --index-url https://repo.example/simple "
          "--extra-index-url https://pypi.nvidia.com --force-reinstall nvidia-cublas");
}

TEST_CASE("without a recipe the venv's recorded overrides are the declared ones", "[doctor][deps]") {
    DoctorOptions options;
    options.venv = "/opt/venv";
    CHECK(declared_overrides(options).empty());
    options.recorded_overrides = std::vector<DeclaredOverride>{{"cublas", "torch", "nvidia-cublas"}};
    auto recorded = declared_overrides(options);
    REQUIRE(recorded.size() == 1);
    CHECK(recorded[0].step == "cublas");
    CHECK(recorded[0].dependent == "torch");
    CHECK(recorded[0].dependency == "nvidia-cublas");

    // A recipe given decides: its own allow_conflicts, not the record.
    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"up\"\nkind = \"install\"\npackages = [\"Nvidia_CuBLAS>=13.4\"]\n"
        "allow_conflicts = [\"Demo_Torch\"]\n",
        "r.toml");
    REQUIRE(recipe);
    options.recipe = &*recipe;
    auto declared = declared_overrides(options);
    REQUIRE(declared.size() == 1);
    CHECK(declared[0].step == "up");
    CHECK(declared[0].dependent == "demo-torch");
    CHECK(declared[0].dependency == "nvidia-cublas");
}
