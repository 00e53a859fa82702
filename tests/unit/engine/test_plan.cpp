#include <catch2/catch.hpp>

#include <fstream>

#include <sys/stat.h>

#include "core/fs.hpp"
#include "engine/plan.hpp"
#include "recipe/recipe.hpp"
#include "steps/kind.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// A world with a fake `uv` on PATH (never run: planning only resolves and stats it).
struct World {
    core::TempDir dir{"bs-plan"};
    fs::path bin = dir.path() / "bin";
    World() {
        fs::create_directories(bin);
        std::ofstream(bin / "uv") << "#!/bin/sh\n";
        fs::permissions(bin / "uv", fs::perms::owner_all);
        std::ofstream(bin / "python3.11") << "#!/bin/sh\n";
        fs::permissions(bin / "python3.11", fs::perms::owner_all);
    }
    engine::Facts facts(exec::EnvMap extra = {}) const {
        engine::Facts f;
        f.env = {{"PATH", bin.string()}, {"HOME", "/root"}};
        for (auto& [k, v] : extra) f.env[k] = v;
        f.cpus = 4;
        return f;
    }
    recipe::Recipe recipe(const std::string& steps, const std::string& installer = "uv") const {
        std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"" + (dir.path() / "venv").string() +
                           "\"\npython = \"3.11\"\ninstaller = \"" + installer + "\"\n" + steps;
        auto r = steps::parse_recipe(text, "t.toml");
        REQUIRE(r);
        return *r;
    }
};

const std::string k_steps = R"(
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "torch"
kind = "install"
packages = ["torch==2.11.0+cu130"]
index_url = "http://127.0.0.1:1/simple"
[[step]]
id = "stamp"
kind = "run"
argv = ["touch", "{venv.path}/x{python.ext_suffix}"]
)";

}  // namespace

TEST_CASE("plan expands argv, env and keys, and changes nothing on disk") {
    World w;
    auto r = w.recipe(k_steps);
    engine::PlanOptions opts;
    opts.dry_run = true;
    auto plan = engine::make_plan(r, opts, w.facts());
    REQUIRE(plan);
    REQUIRE(plan->steps.size() == 3);
    const auto& torch = plan->steps[1];
    CHECK(torch.argv == std::vector<std::string>{(w.bin / "uv").string(), "pip", "install", "--python",
                                                 (w.dir.path() / "venv/bin/python").string(), "--index-url",
                                                 "http://127.0.0.1:1/simple", "torch==2.11.0+cu130"});
    CHECK(torch.cwd == "/");
    CHECK(torch.env_set.at("UV_HTTP_TIMEOUT") == "30");
    CHECK(torch.key.size() == 64);
    // {python.ext_suffix} is only known once the venv exists: no key yet, value shown as such.
    const auto& stamp = plan->steps[2];
    CHECK_FALSE(stamp.complete);
    CHECK(stamp.key.empty());
    CHECK(stamp.argv[1].find("<python.ext_suffix: known after the venv exists>") != std::string::npos);
    CHECK_FALSE(fs::exists(w.dir.path() / "venv"));
}

TEST_CASE("step keys are stable, not chained, and ignore volatile variables") {
    World w;
    auto r = w.recipe(k_steps);
    auto a = engine::make_plan(r, {}, w.facts());
    auto b = engine::make_plan(r, {}, w.facts({{"TERM", "xterm"}, {"LANG", "C.UTF-8"}}));
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->steps[1].key == b->steps[1].key);

    // An inherited variable the child can see (UV_INDEX_STRATEGY) changes the key.
    auto c = engine::make_plan(r, {}, w.facts({{"UV_INDEX_STRATEGY", "unsafe-best-match"}}));
    REQUIRE(c);
    CHECK(c->steps[1].key != a->steps[1].key);

    // Changing the venv step changes its own key, not those of later steps (no chain).
    auto r2 = w.recipe(
        std::string(k_steps).replace(k_steps.find("kind = \"venv\""), 13, "kind = \"venv\"\nenv = { X = \"1\" }"));
    auto d = engine::make_plan(r2, {}, w.facts());
    REQUIRE(d);
    CHECK(d->steps[0].key != a->steps[0].key);
    CHECK(d->steps[1].key == a->steps[1].key);
}

TEST_CASE("an edit to one step's verify list changes only its key") {
    World w;
    const std::string steps = std::string(k_steps) + R"(
[[step]]
id = "apex"
kind = "install"
packages = ["apex"]
[[step]]
id = "helpers"
kind = "run"
argv = ["make", "-C", "/src/helpers"]
)";
    auto a = engine::make_plan(w.recipe(steps), {}, w.facts());
    auto edited = steps;
    edited.replace(edited.find("packages = [\"apex\"]"), 19, "packages = [\"apex\"]\nverify = [{ import = \"apex\" }]");
    auto b = engine::make_plan(w.recipe(edited), {}, w.facts());
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(a->steps.size() == 5);
    CHECK(a->steps[3].key != b->steps[3].key);
    for (size_t i : {0, 1, 4}) CHECK(a->steps[i].key == b->steps[i].key);
    // A step whose key is known only once the venv exists leaves later keys known.
    CHECK(a->steps[2].key.empty());
    CHECK(a->steps[3].key.size() == 64);
    CHECK(a->steps[4].key.size() == 64);
}

TEST_CASE("install steps after a deliberate override keep it (uv --override, pip --constraint)") {
    const std::string steps = std::string(k_steps) + R"(
[[step]]
id = "cublas"
kind = "install"
packages = ["nvidia-cublas>=13.4.1.1"]
upgrade = true
allow_conflicts = ["torch"]
[[step]]
id = "nvrx"
kind = "install"
packages = ["nvidia-resiliency-ext"]
[[step]]
id = "again"
kind = "install"
packages = ["nvidia-cublas>=13.1.0.3"]
)";
    World w;
    for (const std::string installer : {"uv", "pip"}) {
        auto plan = engine::make_plan(w.recipe(steps, installer), {}, w.facts());
        REQUIRE(plan);
        const fs::path file = w.dir.path() / "venv/.bootstrap/overrides/nvrx.txt";
        const auto& nvrx = plan->steps[4];
        const std::string flag = installer == "uv" ? "--override" : "--constraint";
        auto at = std::find(nvrx.argv.begin(), nvrx.argv.end(), flag);
        REQUIRE(at != nvrx.argv.end());
        CHECK(*(at + 1) == file.string());
        REQUIRE(nvrx.install() != nullptr);
        CHECK(nvrx.install()->overrides ==
              std::vector<std::pair<std::string, std::string>>{{"cublas", "nvidia-cublas"}});
        CHECK(nvrx.key_explain.find("overrides: [cublas: nvidia-cublas]\n") != std::string::npos);
        // The override step itself, and a step naming the package itself: nothing to keep.
        for (size_t i : {3, 5}) {
            CHECK(std::find(plan->steps[i].argv.begin(), plan->steps[i].argv.end(), flag) == plan->steps[i].argv.end());
            CHECK(plan->steps[i].install()->overrides.empty());
        }
        // Before it: with uv, torch keeps the later step's installed choice when it runs again
        // (no churn); pip cannot override a pin, so nothing there.
        const auto& torch = plan->steps[1];
        CHECK(torch.install()->overrides.empty());
        if (installer == "uv") {
            CHECK(torch.install()->later_overrides ==
                  std::vector<steps::LaterOverride>{{"cublas", "nvidia-cublas", "nvidia-cublas>=13.4.1.1"}});
            CHECK(std::find(torch.argv.begin(), torch.argv.end(), flag) != torch.argv.end());
            CHECK(torch.key_explain.find("later overrides: [cublas: nvidia-cublas>=13.4.1.1]\n") != std::string::npos);
        } else {
            CHECK(torch.install()->later_overrides.empty());
            CHECK(std::find(torch.argv.begin(), torch.argv.end(), flag) == torch.argv.end());
        }
    }
}

TEST_CASE("key explain lists every input in order") {
    World w;
    auto r = w.recipe(k_steps);
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE(plan);
    std::string explain = plan->steps[1].key_explain;
    std::string uv = (w.bin / "uv").string();
    for (const char* field :
         {"scheme: bootstrap-step-v4\n", "id: torch\n", "kind: install\n", "argv: [", "cwd: /\n",
          "env.set: [UV_NO_PROGRESS=1]\n", "env.unset: []\n", "env.inherited: []\n", "installer: uv ", "verify: []\n"})
        CHECK(explain.find(field) != std::string::npos);
    CHECK(explain.find("HOME=") == std::string::npos);
    CHECK(explain.find("previous") == std::string::npos);  // keys are not chained
}

TEST_CASE("an unset environment variable without default names it") {
    World w;
    auto r = w.recipe(R"(
[[step]]
id = "x"
kind = "run"
argv = ["echo", "{env.MEGATRON_DIR}"]
)");
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::invalid_recipe);
    CHECK(plan.error().message.find("environment variable MEGATRON_DIR is not set") != std::string::npos);
    CHECK(plan.error().message.find("t.toml:") == 0);
}

TEST_CASE("uv missing: run fails with how to get it, plan shows it by name") {
    World w;
    fs::remove(w.bin / "uv");
    auto r = w.recipe(k_steps);
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().message == "the recipe's installer is uv, but uv is not on PATH");
    CHECK(plan.error().detail.find("pip install uv") != std::string::npos);
    engine::PlanOptions dry;
    dry.dry_run = true;
    auto shown = engine::make_plan(r, dry, w.facts());
    REQUIRE(shown);
    CHECK(shown->steps[1].argv[0] == "uv");
}

TEST_CASE("pip backend: venv module and python -m pip with timeout and retries") {
    World w;
    auto r = w.recipe(k_steps, "pip");
    auto plan = engine::make_plan(r, {}, w.facts());
    REQUIRE(plan);
    CHECK(plan->steps[0].argv ==
          std::vector<std::string>{(w.bin / "python3.11").string(), "-m", "venv", (w.dir.path() / "venv").string()});
    const auto& argv = plan->steps[1].argv;
    REQUIRE(argv.size() >= 8);
    CHECK(argv[0] == (w.dir.path() / "venv/bin/python").string());
    CHECK(std::vector<std::string>(argv.begin() + 1, argv.begin() + 8) ==
          std::vector<std::string>{"-m", "pip", "install", "--timeout", "30", "--retries", "3"});
}

TEST_CASE("a venv path with a control character is refused with where it came from") {
    World w;
    engine::PlanOptions opts;
    opts.venv = w.dir.path() / "a\nb";
    auto plan = engine::make_plan(w.recipe(k_steps), opts, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::usage);
    CHECK(plan.error().message == "--venv: the venv path '" + w.dir.path().string() +
                                      "/a\nb' contains a control character (a newline at byte " +
                                      std::to_string(w.dir.path().string().size() + 2) +
                                      "); choose a path without one");

    std::string text = "schema = 1\nname = \"t\"\n[venv]\npath = \"v\\tx\"\npython = \"3.11\"\n" + k_steps;
    auto r = steps::parse_recipe(text, (w.dir.path() / "t.toml").string());
    REQUIRE(r);
    auto from_recipe = engine::make_plan(*r, {}, w.facts());
    REQUIRE_FALSE(from_recipe);
    CHECK(from_recipe.error().code == ErrorCode::invalid_recipe);
    CHECK_THAT(from_recipe.error().message, Catch::Contains("t.toml:4:"));
    CHECK_THAT(from_recipe.error().message, Catch::Contains("[venv] path"));
    CHECK_THAT(from_recipe.error().message, Catch::Contains("(0x09 at byte"));
}

TEST_CASE("an existing directory that is not a venv is kept unless --recreate") {
    World w;
    const fs::path dir = w.dir.path() / "venv";
    // Empty, or holding only bootstrap's state: made into a venv.
    fs::create_directories(dir / ".bootstrap" / "logs");
    auto plan = engine::make_plan(w.recipe(k_steps), {}, w.facts());
    REQUIRE(plan);
    CHECK_FALSE(plan->steps[0].as<steps::VenvSpec>()->recreate);

    std::ofstream(dir / "train.py") << "print('mine')\n";
    fs::create_directories(dir / "data");
    plan = engine::make_plan(w.recipe(k_steps), {}, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::usage);
    CHECK_THAT(plan.error().message,
               Catch::EndsWith(dir.string() + " exists and is not a venv (no pyvenv.cfg), but it is "
                                              "not empty: it holds data, train.py"));
    CHECK_THAT(plan.error().detail, Catch::Contains("--recreate"));
    CHECK(fs::exists(dir / "train.py"));  // planning changes nothing

    engine::PlanOptions recreate;
    recreate.recreate = true;
    plan = engine::make_plan(w.recipe(k_steps), recreate, w.facts());
    REQUIRE(plan);
    CHECK(plan->steps[0].as<steps::VenvSpec>()->recreate);
    CHECK_FALSE(plan->steps[0].kept);
}

TEST_CASE("a step kind no registry entry names is a plan error at its line, never a default kind") {
    World w;
    auto r = w.recipe(k_steps);
    r.steps[2].kind = "nope";  // only a recipe built in code can hold one: the parser refuses it
    engine::PlanOptions opts;
    opts.dry_run = true;
    auto plan = engine::make_plan(r, opts, w.facts());
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::invalid_recipe);
    CHECK(plan.error().message.find("step 'stamp': no step kind is named 'nope'") != std::string::npos);
    CHECK(steps::find_kind("nope") == nullptr);
    CHECK(steps::find_kind("install") == &steps::kind_of("install"));
}
