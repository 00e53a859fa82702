// [network] timeout/retries change how an installer fetches, not what it installs: they are not
// in the step keys (scheme bootstrap-step-v3), while the child still gets them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct World {
    core::TempDir dir{"bs-plan-net"};
    fs::path bin = dir.path() / "bin";
    World() {
        fs::create_directories(bin);
        fs::create_directories(dir.path() / "project");
        fs::create_directories(dir.path() / "pkg");
        std::ofstream(dir.path() / "pkg" / "pyproject.toml") << "[project]\nname = \"p\"\n";
        for (const char* tool : {"uv", "python3.11"}) {
            std::ofstream(bin / tool) << "#!/bin/sh\n";
            fs::permissions(bin / tool, fs::perms::owner_all);
        }
    }
    engine::Facts facts() const {
        engine::Facts f;
        f.env = {
            {"PATH", bin.string()}, {"HOME", dir.path().string()}, {"BOOTSTRAP_HOME", (dir.path() / "home").string()}};
        f.cpus = 4;
        f.python = pyenv::InterpreterFacts{};
        f.python->version = "3.11.7";
        f.python->ext_suffix = ".cpython-311-x86_64-linux-gnu.so";
        return f;
    }
    recipe::Recipe recipe(const std::string& network, const std::string& installer) const {
        std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
                           "\"\npython = \"3.11\"\ninstaller = \"" + installer + "\"\n" + network + R"(
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "torch"
kind = "install"
packages = ["torch==2.11.0"]
[[step]]
id = "sync"
kind = "sync"
project = ")" + (dir.path() / "project").string() +
                           R"("
args = ["--inexact"]
[[step]]
id = "pkg"
kind = "build"
source = { path = ")" + (dir.path() / "pkg").string() +
                           R"(" }
abi_packages = []
)";
        auto r = steps::parse_recipe(text, "t.toml");
        REQUIRE(r);
        return *r;
    }
};

bool has(const std::vector<std::string>& v, const std::string& word) {
    return std::find(v.begin(), v.end(), word) != v.end();
}

}  // namespace

TEST_CASE("[network] timeout and retries are not in install, sync and build step keys") {
    const std::string installer = GENERATE(std::string("uv"), std::string("pip"));
    CAPTURE(installer);
    World w;
    auto defaults = w.recipe("", installer);
    auto slow = w.recipe("[network]\ntimeout = 7\nretries = 1\n", installer);
    auto a = engine::make_plan(defaults, {}, w.facts());
    auto b = engine::make_plan(slow, {}, w.facts());
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(a->steps.size() == 4);
    for (size_t i = 1; i < a->steps.size(); ++i) {
        CAPTURE(a->steps[i].id);
        REQUIRE(a->steps[i].key.size() == 64);
        CHECK(a->steps[i].key == b->steps[i].key);
        CHECK(a->steps[i].key_explain.find("scheme: bootstrap-step-v4\n") != std::string::npos);
        CHECK(a->steps[i].key_explain.find("UV_HTTP_TIMEOUT") == std::string::npos);
    }
    // The installer still gets them: only the key leaves them out.
    const auto& install = b->steps[1];
    if (installer == "uv") {
        CHECK(install.env_set.at("UV_HTTP_TIMEOUT") == "7");
        CHECK(install.env_set.at("UV_HTTP_RETRIES") == "1");
        CHECK(b->steps[2].env_set.at("UV_HTTP_TIMEOUT") == "7");
    } else {
        CHECK(has(install.argv, "7"));
        CHECK(install.key_explain.find("--timeout, <[network]>") != std::string::npos);
    }

    // What the step installs still is in the key.
    auto other = w.recipe("", installer);
    other.steps[1].packages[0].value = "torch==2.10.0";
    auto c = engine::make_plan(other, {}, w.facts());
    REQUIRE(c);
    CHECK(c->steps[1].key != a->steps[1].key);
}
