// PEP 751 pylock.toml: bootstrap's own lock survives a round trip (what JSON keeps, and what
// only the pylock has); nothing secret is written; another tool's pylock reads as a foreign
// lock; a lockfile's format is told by its name, else its first character.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/fs.hpp"
#include "lockfile/pylock.hpp"
#include "manifest/lockfile.hpp"

namespace fs = std::filesystem;
using namespace bootstrap;
using manifest::Lockfile;
using manifest::OriginKind;

namespace {

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');
const std::string k_sha_c(64, 'c');

/// Every kind of package a lock of a real venv holds.
Lockfile sample() {
    Lockfile lock;
    lock.recipe_name = "h200.te";
    lock.recipe_digest = std::string(64, 'd');
    lock.python_version = "3.11.7";
    lock.platform = "linux-x86_64";
    lock.environments = {"sys_platform == 'linux' and platform_machine == 'x86_64'"};
    manifest::Origin index;
    index.kind = OriginKind::index;
    index.step = "torch";
    index.index_urls = {"https://download.pytorch.org/whl/cu130", "https://pypi.org/simple"};
    lock.packages["demo-core"] = {"demo-core",
                                  "1.0.0",
                                  "demo_core-1.0.0-py3-none-any.whl",
                                  k_sha_a,
                                  index,
                                  "https://files.example/demo_core-1.0.0-py3-none-any.whl",
                                  "https://pypi.org/simple"};
    manifest::Origin built;
    built.kind = OriginKind::local;
    built.step = "apex";
    built.artifact_sha256 = k_sha_b;
    built.url = "file:///tmp/apex-0.1-cp311-cp311-linux_x86_64.whl";
    lock.packages["apex"] = {"apex", "0.1", "apex-0.1-cp311-cp311-linux_x86_64.whl", k_sha_b, built};
    lock.packages["apex"].path = "/home/u/.cache/bootstrap/artifacts/sha256/bb/apex-0.1-cp311-cp311-linux_x86_64.whl";
    manifest::Origin editable;
    editable.kind = OriginKind::editable;
    editable.step = "megatron";
    editable.url = "file:///src/Megatron%20LM";
    lock.packages["megatron-core"] = {"megatron-core", "0.15.0", "", "", editable};
    lock.packages["pip"] = {"pip", "24.0", "", "", {}};
    lock.steps["torch"] = {true, false, "", {"demo-core"}};
    lock.steps["apex"] = {true, false, "", {"apex", "demo-core"}};
    lock.steps["megatron"] = {true, false, "", {"megatron-core"}};
    lock.steps["venv"] = {true, false, "", {}};
    lock.steps["nvrx"] = {false, true, "optional step failed on 2026-12-01: no solution", {}};
    lock.steps["with space"] = {false, false, "not run", {}};
    return lock;
}

Lockfile read(const std::string& text, const fs::path& file = "/locks/pylock.toml") {
    auto lock = lockfile::parse_pylock(text, file);
    INFO((lock ? "" : lock.error().message + "\n" + lock.error().detail));
    REQUIRE(lock.has_value());
    return *lock;
}

}  // namespace

TEST_CASE("pylock: bootstrap's own lock survives a round trip") {
    const auto text = lockfile::to_pylock(sample());
    INFO(text);
    auto back = read(text);
    CHECK(back.foreign_tool.empty());
    CHECK(manifest::to_json(back) == manifest::to_json(sample()));
    // What only the pylock has.
    CHECK(back.packages.at("apex").path == sample().packages.at("apex").path);
    CHECK(back.environments == sample().environments);
    CHECK(back.requires_python == "==3.11.*");
}

TEST_CASE("pylock: the PEP's keys, a source tree without a version, seeded packages only in the tool table") {
    const auto text = lockfile::to_pylock(sample());
    INFO(text);
    CHECK(text.find("lock-version = \"1.0\"\n") != std::string::npos);
    CHECK(text.find("created-by = \"bootstrap\"\n") != std::string::npos);
    CHECK(text.find("requires-python = \"==3.11.*\"\n") != std::string::npos);
    CHECK(text.find("environments = [\"sys_platform == 'linux' and platform_machine == 'x86_64'\"]\n") !=
          std::string::npos);
    CHECK(text.find("[[packages]]\nname = \"demo-core\"\nversion = \"1.0.0\"\nindex = \"https://pypi.org/simple\"\n"
                    "wheels = [\n    { name = \"demo_core-1.0.0-py3-none-any.whl\", url = "
                    "\"https://files.example/demo_core-1.0.0-py3-none-any.whl\", hashes = { sha256 = \"" +
                    k_sha_a + "\" } },\n]\n") != std::string::npos);
    // A build's wheel: by its path in the artifact store.
    CHECK(text.find("path = \"/home/u/.cache/bootstrap/artifacts/sha256/bb/apex-0.1-cp311-cp311-linux_x86_64.whl\"") !=
          std::string::npos);
    // An editable project: a directory, no version (PEP 751: a source tree has none).
    CHECK(text.find("[[packages]]\nname = \"megatron-core\"\ndirectory = { path = \"/src/Megatron LM\", editable = "
                    "true }\n\n[packages.tool.bootstrap]\nversion = \"0.15.0\"\n") != std::string::npos);
    CHECK(text.find("name = \"pip\"") != std::string::npos);
    CHECK(text.find("[[tool.bootstrap.version-only]]\nname = \"pip\"\nversion = \"24.0\"\n") != std::string::npos);
    CHECK(text.find("[tool.bootstrap.steps.\"with space\"]\ncovered = false\nwhy = \"not run\"\n") !=
          std::string::npos);
    CHECK(lockfile::pylock_path_in("/l", "h200.te") == fs::path("/l/pylock.h200-te.toml"));
    CHECK(lockfile::pylock_path_in("/l", "../up/x") == fs::path("/l/pylock.---up-x.toml"));  // stays in /l
}

TEST_CASE("pylock: no credential is written, in PEP keys or bootstrap's") {
    auto lock = sample();
    auto& p = lock.packages.at("demo-core");
    p.index = "https://user:s3cr3t-pass@pypi.corp/simple";
    p.url = "https://user:s3cr3t-pass@pypi.corp/files/demo_core-1.0.0-py3-none-any.whl";
    p.origin.index_urls = {"https://tok3n-value@pypi.corp/simple"};
    p.origin.url = "https://user:s3cr3t-pass@host/x.whl";
    lock.steps["nvrx"].why = "failed: GET https://user:s3cr3t-pass@pypi.corp/simple/nvrx/ 500";
    const auto text = lockfile::to_pylock(lock);
    INFO(text);
    CHECK(text.find("s3cr3t-pass") == std::string::npos);
    CHECK(text.find("tok3n-value") == std::string::npos);
    CHECK(text.find("index = \"https://pypi.corp/simple\"") != std::string::npos);
    CHECK(text.find("url = \"https://pypi.corp/files/demo_core-1.0.0-py3-none-any.whl\"") != std::string::npos);
    CHECK(text.find("index-urls = [\"https://***@pypi.corp/simple\"]") != std::string::npos);
}

TEST_CASE("pylock: another tool's lock reads as foreign: index origins, every wheel's hash, paths from its dir") {
    auto lock = read(R"(# uv pip compile
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "Demo_Core"
version = "2.0.0"
index = "https://pypi.org/simple"
wheels = [{ url = "http://127.0.0.1:8000/files/demo_core-2.0.0-py3-none-any.whl", hashes = { sha256 = ")" +
                     std::string(64, 'A') + R"(" } },
          { name = "demo_core-2.0.0-cp311-cp311-manylinux_2_17_x86_64.whl", url = "https://x/y", hashes = { sha256 = ")" +
                     k_sha_b + R"(", md5 = "x" } }]

[[packages]]
name = "local-pkg"
version = "0.1"
marker = "sys_platform == 'linux'"
wheels = [{ path = "wheels/local_pkg-0.1-py3-none-any.whl", hashes = { sha256 = ")" +
                     k_sha_c + R"(" } }]

[[packages]]
name = "myproject"
directory = { path = ".", editable = true }

[tool.uv]
whatever = 1
)");
    CHECK(lock.foreign_tool == "uv");
    CHECK(lock.steps.empty());
    CHECK(lock.requires_python == ">=3.11");
    const auto& core = lock.packages.at("demo-core");
    CHECK(core.version == "2.0.0");
    CHECK(core.wheel == "demo_core-2.0.0-py3-none-any.whl");
    CHECK(core.sha256 == std::string(64, 'a'));
    CHECK(core.more_sha256 == std::vector<std::string>{k_sha_b});
    CHECK(core.origin.kind == OriginKind::index);
    CHECK(core.origin.index_urls == std::vector<std::string>{"https://pypi.org/simple"});
    CHECK(core.origin.step.empty());
    const auto& local = lock.packages.at("local-pkg");
    CHECK(local.path == "/locks/wheels/local_pkg-0.1-py3-none-any.whl");
    CHECK(local.origin.kind == OriginKind::local);
    CHECK(local.marker == "sys_platform == 'linux'");
    const auto& project = lock.packages.at("myproject");
    CHECK(project.version.empty());
    CHECK(project.sha256.empty());
    CHECK(project.origin.kind == OriginKind::editable);
    CHECK(project.origin.url == "file:///locks");
}

TEST_CASE("pylock: a lockfile's format is told by its name, else by its first character") {
    core::TempDir tmp("bs-pylock");
    const auto pylock_text = lockfile::to_pylock(sample());
    const auto json_text = manifest::to_json(sample());
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"pylock.toml", pylock_text}, {"lock.json", json_text}, {"lock", json_text}, {"lock.txt", pylock_text}}) {
        INFO(name);
        REQUIRE(core::write_file_atomic(tmp.path() / name, text));
        auto lock = lockfile::load_any_lockfile(tmp.path() / name);
        INFO((lock ? "" : lock.error().message));
        REQUIRE(lock.has_value());
        CHECK(lock->file == tmp.path() / name);
        CHECK(manifest::to_json(*lock) == json_text);
    }
    CHECK(lockfile::is_pylock_name("x/pylock.demo.toml"));
    CHECK_FALSE(lockfile::is_pylock_name("x/demo.lock.json"));
}

TEST_CASE("pylock: the recipe's meaning survives a round trip under [tool.bootstrap.recipe-inputs]") {
    auto lock = sample();
    lock.recipe_inputs = {{"steps", {"venv", "torch"}, true}, {"venv.python", {"3.11"}, false}, {"env.set", {}, true}};
    lock.steps.at("torch").inputs = {{"kind", {"install"}, false}, {"packages", {"torch==2.11.0"}, true}};
    lock.steps.at("with space").inputs = {{"kind", {"run"}, false}, {"argv", {"true"}, true}};
    const auto text = lockfile::to_pylock(lock);
    INFO(text);
    CHECK(text.find("[tool.bootstrap.recipe-inputs.recipe]\nsteps = [\"venv\", \"torch\"]\n\"venv.python\" = "
                    "\"3.11\"\n\"env.set\" = []\n") != std::string::npos);
    CHECK(
        text.find("[tool.bootstrap.recipe-inputs.steps.torch]\nkind = \"install\"\npackages = [\"torch==2.11.0\"]\n") !=
        std::string::npos);
    auto back = read(text);
    // TOML keeps a table's keys in no order: the inputs come back sorted by field.
    auto sorted = [](std::vector<core::KeyInput> inputs) {
        std::sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.field < b.field; });
        return inputs;
    };
    CHECK(back.recipe_inputs == sorted(lock.recipe_inputs));
    CHECK(back.steps.at("torch").inputs == sorted(lock.steps.at("torch").inputs));
    CHECK(back.steps.at("with space").inputs == sorted(lock.steps.at("with space").inputs));
    CHECK(back.steps.at("venv").inputs.empty());

    auto bad = lockfile::parse_pylock(text + "\n[tool.bootstrap.recipe-inputs.steps.nope]\nkind = 3\n", "/l/p.toml");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("tool.bootstrap.recipe-inputs: step nope: must be a table of a step "
                                   "[tool.bootstrap.steps] has") != std::string::npos);
}
