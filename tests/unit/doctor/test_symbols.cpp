// doctor's symbol checks read the library that will load (README pitfall P10): an absolute
// --library is that file, and the recipe's `elf_symbol` verify clauses are checked too.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "exec/process.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
namespace fs = std::filesystem;

namespace {

fs::path site_of(const fs::path& venv) { return venv / "lib" / "python3.11" / "site-packages"; }

/// A shared library defining `symbol`, built with the host's cc; empty without one.
fs::path build_so(const fs::path& out, const std::string& symbol) {
    auto env = exec::current_environment();
    auto cc = exec::find_program("cc", env["PATH"]);
    if (cc.empty()) return {};
    fs::create_directories(out.parent_path());
    auto src = out.parent_path() / (out.filename().string() + ".c");
    std::ofstream(src) << "int " << symbol << "(void) { return 1; }\n";
    exec::ProcessSpec spec;
    spec.argv = {cc.string(), "-shared", "-fPIC", "-o", out.string(), src.string()};
    spec.env = env;
    spec.capture = true;
    auto ran = exec::run_process(spec);
    REQUIRE(ran);
    INFO(ran->output);
    REQUIRE(ran->ok());
    return out;
}

}  // namespace

TEST_CASE("an absolute --library is that file, even named like a system library", "[doctor][symbols]") {
    core::TempDir tmp("doctor-sym");
    fs::path venv = tmp.path() / "v";
    fs::create_directories(site_of(venv));
    std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\n";
    auto lib = build_so(tmp.path() / "libc.so.6", "only_in_the_fake");
    if (lib.empty()) return;  // no cc: the integration test covers it where CI installs one
    DoctorOptions options;
    options.venv = venv;
    options.symbols = {{"only_in_the_fake", lib.string(), "", ""}};
    auto found = check_symbols(options);
    REQUIRE(found.size() == 1);
    CHECK(found[0].severity == recipe::Severity::info);
    CHECK(found[0].evidence.at(0) == "checked: " + lib.string() + " (from the path given)");
}

TEST_CASE("the recipe's elf_symbol clauses are checked, a repeated built-in once", "[doctor][symbols]") {
    core::TempDir tmp("doctor-sym");
    fs::path venv = tmp.path() / "v";
    fs::create_directories(site_of(venv));
    std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\n";
    auto lib = build_so(site_of(venv) / "nvidia" / "cublas" / "lib" / "libcublasLt.so.13", "cublasLtMatmul");
    if (lib.empty()) return;
    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"cublas\"\nkind = \"install\"\npackages = [\"nvidia-cublas>=13.4.1.1\"]\n"
        "verify = [{ elf_symbol = \"cublasLtGroupedMatrixLayoutInit_internal\", library = "
        "\"nvidia/**/libcublasLt.so.13\" },\n"
        "  { elf_symbol = \"cublasLtMatmul\", library = \"nvidia/**/libcublasLt.so.13\" }]\n",
        "t.toml");
    REQUIRE(recipe);
    DoctorOptions options;
    options.venv = venv;
    options.recipe = &*recipe;
    CheckSummary summary;
    auto found = check_symbols(options, &summary);
    REQUIRE(found.size() == 2);  // the built-in grouped-GEMM check is the recipe's first clause
    CHECK(found[0].severity == recipe::Severity::error);
    CHECK(found[0].message == lib.string() +
                                  " does not define cublasLtGroupedMatrixLayoutInit_internal "
                                  "(undefined symbol at import)");
    CHECK(found[0].fix.rfind("upgrade nvidia-cublas", 0) == 0);
    CHECK(found[1].severity == recipe::Severity::info);
    CHECK(found[1].message == "libcublasLt.so.13 defines cublasLtMatmul");
    CHECK(summary.line == "symbols: 1 of 2 symbols defined");
}
