// The verify clause registry: each clause is found by its name, the recipe parser reads each
// with its own keys, and a file clause runs (exists / does not exist) through the registry.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "steps/recipe_kinds.hpp"
#include "steps/verify_clause.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

const std::string k_head = "schema = 1\nname = \"t\"\n[venv]\npath = \"/tmp/v\"\npython = \"3.11\"\n";

Result<recipe::Recipe> check_step(const std::string& verify) {
    return steps::parse_recipe(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\nverify = [" + verify + "]\n",
                               "r.toml");
}

}  // namespace

TEST_CASE("the clause registry lists the built-in clauses first, in the order they are tried") {
    std::vector<std::string> names;
    for (const auto* c : steps::clauses()) names.emplace_back(c->name);
    REQUIRE(names.size() >= 4);
    CHECK(std::vector<std::string>(names.begin(), names.begin() + 4) ==
          std::vector<std::string>{"import", "file", "cuda_arch", "elf_symbol"});
    const auto& table = steps::recipe_clauses();
    REQUIRE(table.size() == names.size());
    for (size_t i = 0; i < table.size(); ++i) CHECK(table[i].name == names[i]);
    for (const auto& name : names) {
        const auto* c = steps::find_clause(name);
        REQUIRE(c != nullptr);
        CHECK(&steps::clause_of(name) == c);
        CHECK(c->parse != nullptr);
        CHECK(c->expand != nullptr);
        CHECK(c->describe != nullptr);
        CHECK(c->run != nullptr);
    }
    CHECK(steps::find_clause("command") == nullptr);
}

TEST_CASE("each parsed clause names its clause and says what its target is") {
    auto r = check_step(R"({ import = "torch", attr = "cuda", preload = ["numpy"] },
        { file = "/x" },
        { cuda_arch = "9.0", module = "te" },
        { elf_symbol = "cublasLtX", library = "nvidia/**/libcublasLt.so.13" })");
    REQUIRE(r);
    const auto& v = r->steps.at(0).verify;
    REQUIRE(v.size() == 4);
    CHECK(v[0].kind == "import");
    REQUIRE(v[0].imported_module());
    CHECK(v[0].imported_module()->value == "torch");
    CHECK(v[0].required_symbol() == nullptr);
    CHECK(v[0].preload.size() == 1);
    CHECK(v[1].kind == "file");
    CHECK(v[1].imported_module() == nullptr);
    CHECK(v[2].kind == "cuda_arch");
    CHECK(v[2].imported_module() == nullptr);
    CHECK(v[3].kind == "elf_symbol");
    REQUIRE(v[3].required_symbol());
    CHECK(v[3].required_symbol()->value == "cublasLtX");
    // Only the clauses that ask the venv's interpreter need it when the plan is made.
    CHECK(steps::clauses_need_venv(r->steps.at(0)));
    auto file_only = check_step(R"({ file = "/x" }, { cuda_arch = "9.0", path = "lib/x.so" })");
    REQUIRE(file_only);
    CHECK_FALSE(steps::clauses_need_venv(file_only->steps.at(0)));
}

TEST_CASE("a table naming no registered clause lists every registered one") {
    auto r = check_step(R"({ attr = "x" })");
    REQUIRE_FALSE(r);
    std::string names;
    const auto& all = steps::clauses();
    for (size_t i = 0; i < all.size(); ++i)
        names += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + ("'" + std::string(all[i]->name) + "'");
    CHECK(r.error().message == "r.toml:9:11: a verify clause needs " + names);
}

TEST_CASE("describe comes from the clause and a file clause runs through the registry") {
    core::TempDir dir{"bs-verify-clauses"};
    const fs::path there = dir.path() / "there";
    std::ofstream(there) << "x";
    steps::ResolvedStep step;
    step.id = "c";
    step.kind = "check";
    step.verify.push_back({recipe::VerifyClause::Kind::file, there.string(), {}, {}, false, {}});
    step.verify.push_back({recipe::VerifyClause::Kind::elf_symbol, "sym", {}, "libx.so", false, {}});
    CHECK(step.verify[0].describe() == "file " + there.string());
    CHECK(step.verify[1].describe() == "elf_symbol sym in libx.so");
    CHECK(steps::clauses_promised_files(step) == std::vector<std::string>{there.string()});

    steps::ResolvedStep missing;
    missing.id = "c";
    missing.kind = "check";
    missing.verify.push_back({recipe::VerifyClause::Kind::file, (dir.path() / "gone").string(), {}, {}, false, {}});
    steps::StepContext ctx;
    auto failed = steps::verify(missing, ctx);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message == "step 'c': verify failed: " + (dir.path() / "gone").string() + " does not exist");
    step.verify.pop_back();
    CHECK(steps::verify(step, ctx));
}
