// Which step a doctor fix re-runs for a module that does not import: the owner of the
// distribution that provides it, else the step whose verify clauses import it; never a
// distribution named after the module (`fused-weight-gradient-mlp-cuda` does not exist).
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

const char *k_recipe =
    "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
    "[[step]]\nid = \"torch\"\nkind = \"install\"\npackages = [\"torch\"]\n"
    "[[step]]\nid = \"apex\"\nkind = \"run\"\nargv = [\"true\"]\n"
    "verify = [{ import = \"amp_C\" }, { import = \"fused_weight_gradient_mlp_cuda\" }]\n"
    "[[step]]\nid = \"final\"\nkind = \"check\"\nverify = [{ import = \"amp_C\" }]\n";

}  // namespace

TEST_CASE("module_fix re-runs the step that provides a module", "[doctor][imports]") {
    core::TempDir dir("modfix");
    auto recipe = steps::parse_recipe(k_recipe, "r.toml");
    REQUIRE(recipe);
    DoctorOptions options;
    options.venv = dir.path() / "venv";
    options.recipe = &*recipe;
    std::map<std::string, pyenv::Distribution> none;

    // apex's extensions: no distribution provides them here; the build step that verifies them
    // does (not the check step that only looks).
    CHECK(detail::module_fix(options, "fused_weight_gradient_mlp_cuda", none) ==
          "re-run step 'apex' (bootstrap run r.toml --only apex)");
    CHECK(detail::module_fix(options, "amp_C", none) ==
          "re-run step 'apex' (bootstrap run r.toml --only apex)");

    // Without a recipe step: say so, and name no made-up distribution.
    auto unknown = detail::module_fix(options, "fused_dense_cuda", none);
    CHECK(unknown.find("no installed distribution provides fused_dense_cuda") == 0);
    CHECK(unknown.find("--reinstall") == std::string::npos);
    CHECK(unknown.find("fused-dense-cuda") == std::string::npos);

    // A distribution that provides it (by its RECORD), owned by a step per the journal.
    auto site = dir.path() / "venv" / "lib" / "python3.11" / "site-packages";
    auto info = site / "apex-0.1.dist-info";
    fs::create_directories(info);
    std::ofstream(info / "METADATA") << "Metadata-Version: 2.1\nName: apex\nVersion: 0.1\n";
    std::ofstream(info / "RECORD") << "amp_C.cpython-311-x86_64-linux-gnu.so,,\n"
                                      "apex-0.1.dist-info/METADATA,,\n";
    auto dists = pyenv::scan_site_packages(site);
    REQUIRE(dists);
    options.owners["apex"] = "apex-wheel";
    CHECK(detail::module_fix(options, "amp_C", *dists) ==
          "re-run step 'apex-wheel' (bootstrap run r.toml --only apex-wheel); it provides amp_C "
          "through apex 0.1");
    // No owner, no recipe: reinstall the distribution that really provides it.
    options.owners.clear();
    options.recipe = nullptr;
    CHECK(detail::module_fix(options, "amp_C", *dists) ==
          fmt::format("uv pip install --python {} --reinstall apex",
                      (options.venv / "bin" / "python").string()));
}
