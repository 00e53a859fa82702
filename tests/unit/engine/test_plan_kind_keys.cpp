// Each kind reads its own TOML keys (steps/kind_<name>.cpp); these tests check that every key
// reaches what the kind plans (argv, payload), through recipe parsing and expansion.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "plan_world.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct KeysWorld : test::PlanWorld {
    KeysWorld() : PlanWorld("bs-kind-keys", "[vars]\nrev = \"0123456789abcdef0123456789abcdef01234567\"\n") {}
};

bool has(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
    return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
}

}  // namespace

TEST_CASE("install keys: indexes, find-links (one string is a list) and flags reach the argv") {
    KeysWorld w;
    auto plan = w.plan(R"(
[[step]]
id = "a"
kind = "install"
packages = ["torch==2.11.0", "numpy"]
index_url = "http://127.0.0.1:1/simple"
extra_index_urls = "http://127.0.0.1:2/simple"
find_links = ["/wheels"]
upgrade = true
no_deps = true
pre = true
allow_conflicts = ["torch"]
[[step]]
id = "b"
kind = "install"
packages = ["x"]
reinstall = true
)");
    if (!plan) FAIL(plan.error().message);
    const auto& a = plan->steps[0];
    CHECK(has(a.argv, {"--index-url", "http://127.0.0.1:1/simple"}));
    CHECK(has(a.argv, {"--extra-index-url", "http://127.0.0.1:2/simple"}));
    CHECK(has(a.argv, {"--find-links", "/wheels"}));
    // uv upgrades just the named packages, as pip's --upgrade does (not their dependencies).
    CHECK(has(a.argv, {"--upgrade-package", "torch"}));
    CHECK(has(a.argv, {"--upgrade-package", "numpy"}));
    CHECK_FALSE(has(a.argv, {"--upgrade"}));
    CHECK(has(a.argv, {"--no-deps"}));
    CHECK(has(a.argv, {"--prerelease", "allow"}));
    CHECK_FALSE(has(a.argv, {"--reinstall"}));
    REQUIRE(a.install());
    CHECK(a.install()->upgrade);
    CHECK(a.install()->pre);
    CHECK(a.install()->requirements.size() == 2);
    CHECK(w.recipe.steps[1].allow_conflicts == std::vector<std::string>{"torch"});
    const auto& b = plan->steps[1];
    CHECK(has(b.argv, {"--reinstall"}));
    CHECK_FALSE(has(b.argv, {"--upgrade"}));
    CHECK_FALSE(has(b.argv, {"--no-deps"}));
}

TEST_CASE("run keys: argv, cwd, creates and unless reach the plan") {
    KeysWorld w;
    auto plan = w.plan(R"(
[[step]]
id = "r"
kind = "run"
argv = ["make", "-C", "x"]
cwd = "/srv"
creates = "/srv/done"
unless = ["test", "-e", "/srv/ok"]
)");
    if (!plan) FAIL(plan.error().message);
    const auto& r = plan->steps[0];
    CHECK(r.argv.back() == "x");
    CHECK(r.cwd == "/srv");
    REQUIRE(r.run());
    CHECK(r.run()->creates == "/srv/done");
    CHECK(r.run()->unless == std::vector<std::string>{"test", "-e", "/srv/ok"});
}

TEST_CASE("sync keys: the project and extra args reach uv sync") {
    KeysWorld w;
    const auto proj = (w.dir.path() / "proj").string();
    const std::string step =
        "[[step]]\nid = \"s\"\nkind = \"sync\"\nproject = \"" + proj + "\"\nargs = [\"--inexact\"]\n";
    // A project directory that does not exist is found when the plan is made, at its line.
    auto missing = w.plan(step);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::invalid_recipe);
    CHECK(missing.error().message ==
          (w.dir.path() / "t.toml").string() + ":14:11: step 's': project " + proj + " does not exist");
    fs::create_directories(proj);
    auto plan = w.plan(step);
    if (!plan) FAIL(plan.error().message);
    CHECK(has(plan->steps[0].argv, {"--inexact"}));
    CHECK(std::find(plan->steps[0].argv.begin(), plan->steps[0].argv.end(), proj) != plan->steps[0].argv.end());
    // Optional: a note, and the step fails (for good) when it runs.
    auto optional = w.plan("[[step]]\nid = \"s\"\nkind = \"sync\"\nproject = \"" + proj + "-gone\"\noptional = true\n");
    if (!optional) FAIL(optional.error().message);
    CHECK(optional->steps[0].note ==
          "project " + proj + "-gone does not exist: this optional step will fail and be skipped");
    // An earlier run step may create it: a note.
    auto created = w.plan(
        "[[step]]\nid = \"clone\"\nkind = \"run\"\nargv = [\"true\"]\n"
        "[[step]]\nid = \"s\"\nkind = \"sync\"\nproject = \"" +
        proj + "-later\"\n");
    if (!created) FAIL(created.error().message);
    CHECK(created->steps[1].note ==
          "project " + proj + "-later does not exist yet (an earlier run step may create it)");
}

TEST_CASE("pybind11 keys: source, module, output_dir, cxx, extra_args and pybind11_include") {
    KeysWorld w;
    fs::create_directories(w.dir.path() / "src");
    std::ofstream(w.dir.path() / "src" / "helpers.cpp") << "// helpers\n";
    auto plan = w.plan(R"(
[[step]]
id = "h"
kind = "pybind11"
source = ")" + (w.dir.path() / "src" / "helpers.cpp").string() +
                       R"("
module = "helpers_cpp"
output_dir = "/out"
cxx = "g++-12"
extra_args = ["-DX=1"]
pybind11_include = "/usr/include/pb"
)");
    if (!plan) FAIL(plan.error().message);
    const auto& h = plan->steps[0];
    REQUIRE_FALSE(h.argv.empty());
    CHECK(h.argv.front() == "g++-12");
    CHECK(has(h.argv, {"-I/usr/include/pb", "-DX=1", (w.dir.path() / "src" / "helpers.cpp").string(), "-o"}));
    REQUIRE(h.pybind11());
    CHECK(h.pybind11()->output.rfind("/out/helpers_cpp", 0) == 0);
    CHECK(h.pybind11()->includes.empty());
}

TEST_CASE("a build's source directory that does not exist is found when the plan is made") {
    KeysWorld w;
    const auto src = (w.dir.path() / "no-src").string();
    auto plan = w.plan("[[step]]\nid = \"ext\"\nkind = \"build\"\nsource = { path = \"" + src + "\" }\n");
    REQUIRE_FALSE(plan);
    CHECK(plan.error().message ==
          (w.dir.path() / "t.toml").string() + ":14:19: step 'ext': source directory " + src + " does not exist");
}

TEST_CASE("build keys: git, archive and directory sources with their options") {
    KeysWorld w;
    fs::create_directories(w.dir.path() / "src");
    auto plan = w.plan(R"(
[[step]]
id = "apex"
kind = "build"
source = { git = "https://github.com/NVIDIA/apex.git", rev = "{vars.rev}", submodules = true }
no_build_isolation = true
config_settings = { "--build-option" = "--cpp_ext" }
[[step]]
id = "tar"
kind = "build"
source = { url = "https://x/a-1.0.tar.gz", sha256 = ")" +
                       std::string(64, 'A') + R"(", subdirectory = "python" }
abi_packages = []
[[step]]
id = "local"
kind = "build"
source = { path = ")" + (w.dir.path() / "src").string() +
                       R"(" }
)");
    if (!plan) FAIL(plan.error().message);
    const auto* apex = plan->steps[0].build();
    REQUIRE(apex);
    CHECK(apex->source_kind == steps::BuildSource::Kind::git);
    CHECK(apex->location == "https://github.com/NVIDIA/apex.git");
    CHECK(apex->rev == "0123456789abcdef0123456789abcdef01234567");
    CHECK(apex->submodules);
    CHECK(apex->request.no_build_isolation);
    REQUIRE(apex->request.config_settings.size() == 1);
    CHECK(apex->request.config_settings[0].first == "--build-option");
    CHECK(apex->request.config_settings[0].second == "--cpp_ext");
    CHECK(apex->abi_versions == std::vector<std::string>{"torch not installed"});  // the default
    const auto* tar = plan->steps[1].build();
    REQUIRE(tar);
    CHECK(tar->source_kind == steps::BuildSource::Kind::url);
    CHECK(tar->sha256 == std::string(64, 'a'));
    CHECK(tar->subdirectory == "python");
    CHECK(tar->abi_versions.empty());
    CHECK_FALSE(tar->request.no_build_isolation);
    const auto* local = plan->steps[2].build();
    REQUIRE(local);
    CHECK(local->source_kind == steps::BuildSource::Kind::path);
    CHECK(local->source_identity.rfind("tree ", 0) == 0);
}

TEST_CASE("a build step's wheel install keeps earlier deliberate overrides, as install steps do") {
    KeysWorld w;
    fs::create_directories(w.dir.path() / "src");
    const std::string build = R"(
[[step]]
id = "ext"
kind = "build"
source = { git = "https://github.com/NVIDIA/apex.git", rev = "{vars.rev}" }
)";
    auto plain = w.plan(build);
    if (!plain) FAIL(plain.error().message);
    REQUIRE(plain->steps[0].build());
    CHECK(plain->steps[0].build()->overrides.empty());
    CHECK_FALSE(plain->steps[0].build()->overrides_file);

    auto kept = w.plan(R"(
[[step]]
id = "cublas"
kind = "install"
packages = ["nvidia-cublas>=13.4.1.1"]
upgrade = true
allow_conflicts = ["torch"]
)" + build);
    if (!kept) FAIL(kept.error().message);
    const auto& ext = kept->steps[1];
    REQUIRE(ext.build());
    CHECK(ext.build()->overrides == std::vector<std::pair<std::string, std::string>>{{"cublas", "nvidia-cublas"}});
    REQUIRE(ext.build()->overrides_file);
    CHECK(*ext.build()->overrides_file == w.dir.path() / "venv" / ".bootstrap" / "overrides" / "ext.txt");
}

TEST_CASE("origins: a build step's wheel install and a sync step's uv.lock name their indexes") {
    KeysWorld w;
    fs::create_directories(w.dir.path() / "src");
    fs::create_directories(w.dir.path() / "proj");
    std::ofstream(w.dir.path() / "proj" / "uv.lock")
        << "version = 1\n[[package]]\nname = \"a\"\nsource = { registry = \"https://u:pw@mirror/simple\" }\n"
           "[[package]]\nname = \"b\"\nsource = { registry = \"https://pypi.org/simple\" }\n"
           "[[package]]\nname = \"c\"\nsource = { registry = \"https://pypi.org/simple\" }\n"
           "[[package]]\nname = \"m\"\nsource = { editable = \".\" }\n";
    auto plan = w.plan(R"(
[env]
set = { UV_INDEX_URL = "https://site-mirror/simple" }
[[step]]
id = "local"
kind = "build"
source = { path = ")" + (w.dir.path() / "src").string() +
                       R"(" }
[[step]]
id = "s"
kind = "sync"
project = ")" + (w.dir.path() / "proj").string() +
                       R"("
)");
    if (!plan) FAIL(plan.error().message);
    CHECK(plan->steps[0].index_urls() == std::vector<std::string>{"https://site-mirror/simple"});
    // The registry most packages come from first; credentials never recorded.
    CHECK(plan->steps[1].index_urls() ==
          std::vector<std::string>{"https://pypi.org/simple", "https://u:***@mirror/simple"});
    fs::remove(w.dir.path() / "proj" / "uv.lock");
    CHECK(plan->steps[1].index_urls().empty());  // read when asked: no lock yet, none
}
