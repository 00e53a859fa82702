// doctor's two scopes: a plain venv is checked through what it holds, a training venv (or any
// venv with --recipe) through Megatron's defaults; no interpreter needed to plan the imports.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;

namespace {

namespace fs = std::filesystem;

fs::path site_of(const fs::path& venv) { return venv / "lib" / "python3.11" / "site-packages"; }

void dist(const fs::path& venv, const std::string& name, const std::string& version, const std::string& record,
          const std::string& top_level = {}) {
    fs::path info = site_of(venv) / (name + "-" + version + ".dist-info");
    fs::create_directories(info);
    std::ofstream(info / "METADATA") << "Metadata-Version: 2.1\nName: " << name << "\nVersion: " << version << "\n\n";
    std::ofstream(info / "RECORD") << record;
    if (!top_level.empty()) std::ofstream(info / "top_level.txt") << top_level;
}

std::vector<std::string> modules(const std::vector<ImportCheck>& checks) {
    std::vector<std::string> out;
    for (const auto& c : checks) out.push_back(c.module);
    return out;
}

const ImportCheck* find(const std::vector<ImportCheck>& checks, const std::string& module) {
    auto it = std::find_if(checks.begin(), checks.end(), [&](const ImportCheck& c) { return c.module == module; });
    return it == checks.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a plain venv's imports are the top-level modules of what is installed", "[doctor][scope]") {
    core::TempDir tmp("doctor-scope");
    fs::path venv = tmp.path() / "v";
    dist(venv, "click", "8.1.7", "click/__init__.py,,\nclick/core.py,,\nclick-8.1.7.dist-info/RECORD,,\n");
    dist(venv, "six", "1.16.0", "six.py,,\n__pycache__/six.cpython-311.pyc,,\n");
    // top_level.txt wins; private modules, `.libs` directories and scripts are left out.
    dist(venv, "setuptools", "70.0", "../../../bin/x,,\n", "_distutils_hack\npkg_resources\nsetuptools\n");
    dist(venv, "numpy", "2.0.0", "numpy/__init__.py,,\nnumpy.libs/libx.so,,\n");
    DoctorOptions options;
    options.venv = venv;
    options.extra_modules = {"json"};

    CHECK_FALSE(training_scope(options));
    auto planned = planned_imports(options);
    CHECK(modules(planned) == std::vector<std::string>{"json", "click", "numpy", "pkg_resources", "setuptools", "six"});
    REQUIRE(find(planned, "click") != nullptr);
    CHECK(find(planned, "click")->source == "installed: click 8.1.7");
    CHECK_FALSE(find(planned, "click")->required);
    CHECK(find(planned, "json")->required);  // --import: a failure is an error
    CHECK(find(planned, "torch") == nullptr);
}

TEST_CASE("the training stack or a recipe keeps Megatron's default imports", "[doctor][scope]") {
    const std::vector<std::string> defaults{"torch", "transformer_engine", "amp_C", "fused_weight_gradient_mlp_cuda",
                                            "megatron.core"};
    core::TempDir tmp("doctor-scope");
    fs::path venv = tmp.path() / "v";
    dist(venv, "click", "8.1.7", "click/__init__.py,,\n");
    DoctorOptions options;
    options.venv = venv;

    SECTION("a recipe") {
        auto recipe = steps::parse_recipe(
            "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
            "[[step]]\nid = \"core\"\nkind = \"install\"\npackages = [\"click\"]\n"
            "verify = [{ import = \"click\", attr = \"echo\" }]\n",
            "t.toml");
        REQUIRE(recipe);
        options.recipe = &*recipe;
        CHECK(training_scope(options));
        auto planned = planned_imports(options);
        std::vector<std::string> expected{"click"};
        expected.insert(expected.end(), defaults.begin(), defaults.end());
        CHECK(modules(planned) == expected);
        CHECK(planned.front().attr == "echo");
        CHECK(planned.front().required);
    }
    for (const char* stack : {"torch", "transformer_engine_cu12", "megatron_core", "apex"}) {
        SECTION(std::string("a venv with ") + stack) {
            dist(venv, stack, "1.0", "x/__init__.py,,\n");
            CHECK(training_scope(options));
            CHECK(modules(planned_imports(options)) == defaults);
        }
    }
}

TEST_CASE("the summaries say what passed", "[doctor][scope]") {
    core::TempDir tmp("doctor-scope");
    fs::path venv = tmp.path() / "v";
    fs::create_directories(venv);
    std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\n";
    DoctorOptions options;
    options.venv = venv;

    CheckSummary summary;
    auto findings = check_cuda_code(options, &summary);
    CHECK(summary.group == "cuda code");
    CHECK(summary.line == "cuda code: not checked (no --arch)");

    // No built-in symbol check outside the training scope unless the venv has its library.
    auto symbols = check_symbols(options, &summary);
    CHECK(symbols.empty());
    CHECK(summary.line == "symbols: none checked");
    dist(venv, "demo-cublaslt", "13.1", "nvidia/cublas/lib/libcublasLt.so.13,,\n");
    fs::create_directories(site_of(venv) / "nvidia" / "cublas" / "lib");
    std::ofstream(site_of(venv) / "nvidia" / "cublas" / "lib" / "libcublasLt.so.13") << "not elf";
    symbols = check_symbols(options, &summary);
    REQUIRE(symbols.size() == 1);
    CHECK(symbols[0].severity == recipe::Severity::error);  // unreadable ELF
    CHECK(summary.line == "symbols: 0 of 1 symbol defined");

    auto packages = check_packages(options, &summary);
    CHECK(summary.line == "packages: no broken install, known-bad package, build tool or variable");
    options.environment = {{"UV_PROJECT_ENVIRONMENT", "/elsewhere"}};
    packages = check_packages(options, &summary);
    CHECK(summary.line == "packages: 1 problem");
}
