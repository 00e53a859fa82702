// Verify clauses in the plan: a version specifier is checked (PEP 440) where it was written and
// goes into the step key in canonical form.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct World {
    core::TempDir dir{"bs-plan-verify"};
    fs::path bin = dir.path() / "bin";
    World() {
        fs::create_directories(bin);
        std::ofstream(bin / "uv") << "#!/bin/sh\n";
        fs::permissions(bin / "uv", fs::perms::owner_all);
    }
    engine::Facts facts() const {
        engine::Facts f;
        f.env = {{"PATH", bin.string()}, {"HOME", "/root"}};
        f.cpus = 4;
        return f;
    }
    Result<engine::Plan> plan(const std::string& verify) const {
        std::string text =
            "schema = 1\nname = \"t\"\n[vars]\nmin = \"2.1\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
            "\"\npython = \"3.11\"\n[[step]]\nid = \"venv\"\nkind = \"venv\"\n[[step]]\nid = \"c\"\nkind = \"check\"\nverify = [" +
            verify + "]\n";
        auto r = steps::parse_recipe(text, "t.toml");
        REQUIRE(r);
        return engine::make_plan(*r, {}, facts());
    }
};

}  // namespace

TEST_CASE("a verify clause's version is a PEP 440 specifier, reported where it was written") {
    World w;
    auto bad = w.plan(R"({ import = "torch", version = ">=2.x" })");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::invalid_recipe);
    CHECK(bad.error().message ==
          "t.toml:14:41: invalid version specifier '>=2.x' in verify clause 'import torch': "
          "'2.x' is not a valid version");
    auto no_op = w.plan(R"({ import = "torch", version = "2.1" })");
    REQUIRE_FALSE(no_op);
    CHECK(
        no_op.error().message.starts_with("t.toml:14:41: invalid version specifier '2.1' in verify "
                                          "clause 'import torch': expected a comparison operator"));
}

TEST_CASE("a verify clause's version is in the step key, canonical and expanded") {
    World w;
    auto plain = w.plan(R"({ import = "torch" })");
    auto spaced = w.plan(R"({ import = "torch", version = "<3, >={vars.min}" })");
    auto canonical = w.plan(R"({ import = "torch", version = ">=2.1,<3" })");
    auto other = w.plan(R"({ import = "torch", version = ">=2.2,<3" })");
    REQUIRE(plain);
    REQUIRE(spaced);
    REQUIRE(canonical);
    REQUIRE(other);
    CHECK(spaced->steps[1].verify[0].version == "<3,>=2.1");
    CHECK(spaced->steps[1].verify[0].describe() == "import torch version <3,>=2.1");
    CHECK(spaced->steps[1].key_explain.find("verify: [import torch version <3,>=2.1]") != std::string::npos);
    CHECK(spaced->steps[1].key == canonical->steps[1].key);
    CHECK(spaced->steps[1].key != plain->steps[1].key);
    CHECK(spaced->steps[1].key != other->steps[1].key);
    CHECK(plain->steps[1].verify[0].describe() == "import torch");
}

TEST_CASE("an elf_symbol clause keeps its library glob for run time and is in the step key") {
    World w;
    auto glob = w.plan(R"({ elf_symbol = "cublasLtX", library = "nvidia/**/libcublasLt.so.13" })");
    auto other = w.plan(R"({ elf_symbol = "cublasLtY", library = "nvidia/**/libcublasLt.so.13" })");
    auto absolute = w.plan(R"({ elf_symbol = "cublasLtX", library = "/opt/lib/libcublasLt.so.13" })");
    REQUIRE(glob);
    REQUIRE(other);
    REQUIRE(absolute);
    const auto& v = glob->steps[1].verify[0];
    CHECK(v.kind == recipe::VerifyClause::Kind::elf_symbol);
    CHECK(v.target == "cublasLtX");
    // Not made a path under the venv (as a cuda_arch `path` is): the venv's site-packages first,
    // then the system, is decided when the clause runs.
    CHECK(v.library == "nvidia/**/libcublasLt.so.13");
    CHECK(v.describe() == "elf_symbol cublasLtX in nvidia/**/libcublasLt.so.13");
    CHECK(absolute->steps[1].verify[0].library == "/opt/lib/libcublasLt.so.13");
    CHECK(glob->steps[1].key_explain.find("verify: [elf_symbol cublasLtX in nvidia/**/libcublasLt.so.13]") !=
          std::string::npos);
    CHECK(glob->steps[1].key != other->steps[1].key);
    CHECK(glob->steps[1].key != absolute->steps[1].key);
}

TEST_CASE("a verify clause's preload reaches the resolved clause and the step key") {
    World w;
    auto plain = w.plan(R"({ import = "amp_C" })");
    auto preload = w.plan(R"({ import = "amp_C", preload = ["torch", "transformer_engine"] })");
    REQUIRE(plain);
    REQUIRE(preload);
    const auto& v = preload->steps[1].verify[0];
    CHECK(v.preload == std::vector<std::string>{"torch", "transformer_engine"});
    CHECK(v.describe() == "import amp_C after torch,transformer_engine");
    CHECK(preload->steps[1].key != plain->steps[1].key);
    // A clause without one keeps its description (and so its key) as before.
    CHECK(plain->steps[1].verify[0].describe() == "import amp_C");
}

TEST_CASE("a verify clause's preload is checked where it was written") {
    auto parse = [](const std::string& verify) {
        return steps::parse_recipe(
            "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n[[step]]\nid = "
            "\"c\"\nkind = \"check\"\nverify = [" +
                verify + "]\n",
            "t.toml");
    };
    REQUIRE(parse(R"({ import = "x", preload = ["torch"] })"));
    auto on_file = parse(R"({ file = "/x", preload = ["torch"] })");
    REQUIRE_FALSE(on_file);
    CHECK(on_file.error().message.find("t.toml:9:") != std::string::npos);
    CHECK(on_file.error().message.find("'preload' is valid only with 'import' in a verify clause") !=
          std::string::npos);
    auto empty = parse(R"({ import = "x", preload = [] })");
    REQUIRE_FALSE(empty);
    CHECK(empty.error().message.find("'verify[0].preload' must not be empty") != std::string::npos);
    auto spaced = parse(R"({ import = "x", preload = ["torch, te"] })");
    REQUIRE_FALSE(spaced);
    CHECK(spaced.error().message.find("'verify[0].preload' names modules such as \"torch\", not "
                                      "'torch, te'") != std::string::npos);
}
