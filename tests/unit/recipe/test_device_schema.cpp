// [device] ptx, the {device.*} placeholders and the cuda_arch verify clause.
#include <catch2/catch.hpp>

#include "recipe/recipe.hpp"
#include "recipe_text.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

using testing::k_head;
using testing::problems;

TEST_CASE("[device] ptx is a boolean, false by default") {
    auto r = steps::parse_recipe(k_head + "[device]\nfallback_arch = \"9.0\"\nptx = true\n", "r.toml");
    REQUIRE(r);
    CHECK(r->device_ptx);
    auto plain = steps::parse_recipe(k_head, "r.toml");
    REQUIRE(plain);
    CHECK_FALSE(plain->device_ptx);
    CHECK(problems(k_head + "[device]\nptx = \"yes\"\n") == "r.toml:7:7: 'device.ptx' must be a boolean, not a string");
}

TEST_CASE("{device.*} placeholders are known, a misspelt one gets a suggestion") {
    auto r = steps::parse_recipe(k_head +
                                     "[[step]]\nid = \"b\"\nkind = \"run\"\n"
                                     "argv = [\"{device.arch}\", \"{device.nvte_archs}\", "
                                     "\"{device.cmake_archs}\"]\n"
                                     "env = { TORCH_CUDA_ARCH_LIST = \"{device.torch_arch_list}\" }\n",
                                 "r.toml");
    CHECK(r);
    CHECK(problems(k_head + "[[step]]\nid = \"b\"\nkind = \"run\"\nargv = [\"{device.arhc}\"]\n") ==
          "r.toml:9:9: unknown placeholder '{device.arhc}' (did you mean '{device.arch}'?)");
}

TEST_CASE("a cuda_arch verify clause names a module or a path") {
    auto r = steps::parse_recipe(k_head +
                                     "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                                     "verify = [{ cuda_arch = \"{device.arch}\", module = \"te\" },\n"
                                     "          { cuda_arch = \"9.0\", path = \"lib/x.so\" }]\n",
                                 "r.toml");
    REQUIRE(r);
    const auto& v = r->steps.at(0).verify;
    REQUIRE(v.size() == 2);
    CHECK(v[0].kind == VerifyClause::Kind::cuda_arch);
    CHECK(v[0].target.value == "{device.arch}");
    REQUIRE(v[0].library);
    CHECK(v[0].library->value == "te");
    CHECK(v[0].library_is_module);
    CHECK(v[1].library->value == "lib/x.so");
    CHECK_FALSE(v[1].library_is_module);
}

TEST_CASE("golden: cuda_arch clause errors") {
    const std::string step = "[[step]]\nid = \"c\"\nkind = \"check\"\n";
    CHECK(problems(k_head + step + "verify = [{ cuda_arch = \"9.0\" }]\n") ==
          "r.toml:9:11: a 'cuda_arch' verify clause needs 'module' or 'path' (the library to "
          "inspect)");
    CHECK(problems(k_head + step + "verify = [{ cuda_arch = \"9.0\", module = \"a\", path = \"b\" }]\n") ==
          "r.toml:9:11: a 'cuda_arch' verify clause takes 'module' or 'path', not both");
    CHECK(problems(k_head + step + "verify = [{ cuda_arch = \"9.0\", modle = \"a\" }]\n") ==
          "r.toml:9:32: unknown key 'modle' in verify clause (did you mean 'module'?)");
    CHECK(problems(k_head + step + "verify = [{ cuda_arch = \"{device.ach}\", module = \"a\" }]\n") ==
          "r.toml:9:25: unknown placeholder '{device.ach}' (did you mean '{device.arch}'?)");
}

TEST_CASE("a pybind11 step reads its keys and needs source and module") {
    auto r = steps::parse_recipe(k_head +
                                     "[[step]]\nid = \"h\"\nkind = \"pybind11\"\n"
                                     "source = \"src/helpers.cpp\"\nmodule = \"helpers_cpp\"\n"
                                     "output_dir = \"out\"\ncxx = \"g++-12\"\n"
                                     "extra_args = [\"-DX=1\"]\npybind11_include = \"/usr/include\"\n",
                                 "r.toml");
    REQUIRE(r);
    const auto& s = r->steps.at(0);
    CHECK(s.kind == "pybind11");
    // The values themselves are the kind's (steps/kind_pybind11.cpp); each is kept, with its
    // place, for the placeholder check.
    std::vector<std::string> values;
    for (const auto& t : s.texts) values.push_back(t.value);
    CHECK(values ==
          std::vector<std::string>{"src/helpers.cpp", "helpers_cpp", "out", "g++-12", "-DX=1", "/usr/include"});

    CHECK(problems(k_head + "[[step]]\nid = \"h\"\nkind = \"pybind11\"\n") ==
          "r.toml:6:1: step 'h' (kind pybind11) is missing required key 'source'\n"
          "r.toml:6:1: step 'h' (kind pybind11) is missing required key 'module'");
    CHECK(problems(k_head + "[[step]]\nid = \"h\"\nkind = \"run\"\nargv = [\"x\"]\nsource = \"a\"\n") ==
          "r.toml:10:1: key 'source' is not valid for a step of kind 'run'");
}
