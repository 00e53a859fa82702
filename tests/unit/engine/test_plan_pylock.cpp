// An install step with `pylock` (steps/kind_install.cpp): the lock is read when the plan is
// made, its pins are the step's requirements, its content is in the step key.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "plan_world.hpp"
#include "steps/kind.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

const std::string k_a(64, 'a');

struct PylockWorld : test::PlanWorld {
    PylockWorld() : PlanWorld("bs-plan-pylock") {}
};

const std::string k_step =
    "[[step]]\nid = \"pinned\"\nkind = \"install\"\npylock = \"pylock.toml\"\n"
    "index_url = \"http://127.0.0.1:1/simple\"\n";

std::string package(const std::string& name, const std::string& version, const std::string& marker = "") {
    const std::string file = name + "-" + version + "-py3-none-any.whl";  // names without '-'
    return "[[packages]]\nname = \"" + name + "\"\nversion = \"" + version + "\"\n" +
           (marker.empty() ? "" : "marker = \"" + marker + "\"\n") + "wheels = [{ url = \"http://127.0.0.1:1/f/" +
           file + "\", hashes = { sha256 = \"" + k_a + "\" } }]\n";
}

const std::string k_head = "lock-version = \"1.0\"\ncreated-by = \"uv\"\n";

bool has(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
    return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
}

}  // namespace

TEST_CASE("pylock step: its pins are its requirements, markers kept, and the command installs them hashed") {
    PylockWorld w;
    w.write("pylock.toml", k_head + package("core", "2.0.0") + package("winonly", "1.0", "sys_platform == 'win32'"));
    auto plan = w.plan(k_step);
    if (!plan) FAIL(plan.error().message);
    const auto& step = plan->steps.at(0);
    CHECK(step.complete);
    CHECK_FALSE(step.key.empty());  // known without the venv: markers are judged by the installer
    const auto* spec = step.install();
    REQUIRE(spec != nullptr);
    REQUIRE(spec->requirements.size() == 2);
    CHECK(spec->requirements[0].str() == "core==2.0.0");
    CHECK(spec->requirements[1].normalized_name == "winonly");
    CHECK(spec->requirements[1].marker.has_value());
    CHECK(steps::owned_of(step).requirements == &spec->requirements);
    REQUIRE(spec->pylock);
    CHECK(spec->pylock->path == (w.dir.path() / "pylock.toml").string());
    CHECK(spec->pylock->text == "core==2.0.0 --hash=sha256:" + k_a + "\nwinonly==1.0 ; sys_platform == \"win32\" " +
                                    "--hash=sha256:" + k_a + "\n");
    const auto file = (w.dir.path() / "venv" / ".bootstrap" / "pylock" / "pinned.txt").string();
    CHECK(has(step.argv, {"-r", file, "--require-hashes"}));
    CHECK(std::count(step.argv.begin(), step.argv.end(), "--no-deps") == 1);
    CHECK(has(step.argv, {"--index-url", "http://127.0.0.1:1/simple"}));
    // The lock is a local input (an image's context carries it).
    REQUIRE(step.local_inputs.size() == 1);
    CHECK(step.local_inputs[0].path == spec->pylock->path);
    CHECK_FALSE(step.local_inputs[0].directory);
}

TEST_CASE("pylock step: the key follows the lock's content") {
    PylockWorld w;
    w.write("pylock.toml", k_head + package("core", "2.0.0"));
    auto first = w.plan(k_step);
    REQUIRE(first);
    auto again = w.plan(k_step);
    REQUIRE(again);
    CHECK(again->steps[0].key == first->steps[0].key);
    CHECK(first->steps[0].key_explain.find("pylock") != std::string::npos);

    w.write("pylock.toml", k_head + package("core", "1.1.0"));
    auto changed = w.plan(k_step);
    REQUIRE(changed);
    CHECK(changed->steps[0].key != first->steps[0].key);
    CHECK(changed->steps[0].install()->requirements[0].str() == "core==1.1.0");
}

TEST_CASE("pylock step: problems of the lock are the reader's, prefixed by the step") {
    PylockWorld w;
    const auto path = (w.dir.path() / "pylock.toml").string();
    w.write("pylock.toml", k_head + "[[packages]]\nname = \"core\"\nversion = \"2.0.0\"\n");
    auto plan = w.plan(k_step);
    REQUIRE_FALSE(plan);
    CHECK(plan.error().code == ErrorCode::invalid_recipe);
    CHECK(plan.error().message == "step 'pinned': not a valid pylock.toml: " + path +
                                      ":3:1: package core: no 'wheels', 'sdist' nor 'directory'");

    w.write("pylock.toml", k_head + "[[packages]]\nname = \"mine\"\ndirectory = { path = \".\" }\n");
    plan = w.plan(k_step);
    REQUIRE_FALSE(plan);
    CHECK(plan.error().message.rfind("step 'pinned': " + path + ":3:1: package mine is a source tree", 0) == 0);

    fs::remove(path);
    plan = w.plan(k_step);
    REQUIRE_FALSE(plan);
    CHECK(plan.error().message ==
          (w.dir.path() / "t.toml").string() + ":12:10: step 'pinned': pylock " + path + " does not exist");
}

TEST_CASE("pylock step: a lock an earlier run step writes is read once it is there") {
    PylockWorld w;
    auto plan = w.plan("[[step]]\nid = \"fetch\"\nkind = \"run\"\nargv = [\"true\"]\n" + k_step);
    if (!plan) FAIL(plan.error().message);
    const auto& step = plan->steps.at(1);
    CHECK_FALSE(step.complete);
    CHECK(step.key.empty());
    CHECK(step.note.find("does not exist yet (an earlier run step may create it)") != std::string::npos);
    REQUIRE(step.install()->pylock);
    CHECK(step.install()->pylock->sha256.empty());
}
