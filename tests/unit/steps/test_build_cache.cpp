// The build cache: which inputs change the key (each one must), publishing by rename, refusing a
// damaged entry, and the source-tree digest that stands for a directory source.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "steps/build_cache.hpp"
#include "steps/build_source.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

steps::BuildInputs base_inputs() {
    steps::BuildInputs in;
    in.source = "git 0123456789abcdef0123456789abcdef01234567";
    in.source_from = "https://github.com/NVIDIA/apex.git";
    in.python = "cpython 3.12.3";
    in.ext_suffix = ".cpython-312-x86_64-linux-gnu.so";
    in.platform = "linux-x86_64 glibc 2.36";
    in.torch = "2.11.0+cu130 cuda 13.0 cxx11_abi 1";
    in.abi_packages = {"torch 2.11.0+cu130"};
    in.nvcc = "13.0";
    in.compiler = "c++ (Debian 12.2.0-14) 12.2.0";
    in.libstdcxx = "GLIBCXX_3.4.30";
    in.arch_list = "9.0";
    in.env = {"APEX_CPP_EXT=1", "APEX_CUDA_EXT=1", "TORCH_CUDA_ARCH_LIST=9.0"};
    in.frontend = "uv build";
    in.no_build_isolation = true;
    return in;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("every build input changes the key, the explanation names each") {
    const auto base = steps::make_build_key(base_inputs());
    CHECK(base.digest.size() == 64);
    CHECK(steps::make_build_key(base_inputs()).digest == base.digest);  // deterministic
    for (
        const char* field :
        {"source: git 0123456789abcdef0123456789abcdef01234567\n# source from: https://github.com/NVIDIA/apex.git (not "
         "part of the key)\n",
         "python: cpython 3.12.3", "torch: 2.11.0+cu130 cuda 13.0 cxx11_abi 1", "nvcc: 13.0",
         "libstdc++: GLIBCXX_3.4.30", "arch_list: 9.0",
         "env: [APEX_CPP_EXT=1, APEX_CUDA_EXT=1, TORCH_CUDA_ARCH_LIST=9.0]", "no_build_isolation: true"})
        CHECK(base.explain.find(field) != std::string::npos);

    using Change = std::function<void(steps::BuildInputs&)>;
    const std::vector<std::pair<const char*, Change>> changes{
        {"source", [](auto& in) { in.source = "sha256 " + std::string(64, 'a'); }},
        {"subdirectory", [](auto& in) { in.subdirectory = "python"; }},
        {"python", [](auto& in) { in.python = "cpython 3.12.4"; }},
        {"ext_suffix", [](auto& in) { in.ext_suffix = ".cpython-311-x86_64-linux-gnu.so"; }},
        {"platform", [](auto& in) { in.platform = "linux-aarch64 glibc 2.36"; }},
        {"torch", [](auto& in) { in.torch = "2.11.0+cu130 cuda 13.0 cxx11_abi 0"; }},
        {"abi_packages", [](auto& in) { in.abi_packages = {"torch 2.10.0+cu130"}; }},
        {"nvcc", [](auto& in) { in.nvcc = "13.1"; }},
        {"compiler", [](auto& in) { in.compiler = "c++ (Debian 13.1.0) 13.1.0"; }},
        {"libstdc++", [](auto& in) { in.libstdcxx = "GLIBCXX_3.4.32"; }},
        {"arch_list", [](auto& in) { in.arch_list = "9.0+PTX"; }},
        {"env", [](auto& in) { in.env.push_back("NVCC_APPEND_FLAGS=-lineinfo"); }},
        {"frontend", [](auto& in) { in.frontend = "pip wheel"; }},
        {"no_build_isolation", [](auto& in) { in.no_build_isolation = false; }},
        {"config_settings", [](auto& in) { in.config_settings = {"--build-option=--cpp_ext"}; }},
    };
    std::set<std::string> seen{base.digest};
    for (const auto& [name, change] : changes) {
        auto in = base_inputs();
        change(in);
        INFO(name);
        CHECK(seen.insert(steps::make_build_key(in).digest).second);
    }
}

TEST_CASE("parallelism settings are not build inputs") {
    for (const char* name : {"MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL", "NVCC_THREADS", "APEX_PARALLEL_BUILD"})
        CHECK(steps::is_parallelism_variable(name));
    CHECK_FALSE(steps::is_parallelism_variable("TORCH_CUDA_ARCH_LIST"));
    CHECK_FALSE(steps::is_parallelism_variable("APEX_CUDA_EXT"));
}

TEST_CASE("publish renames a staging dir into place, find verifies the wheel") {
    core::TempDir home("bs-build-cache");
    steps::BuildCache cache(home.path() / "builds");
    const std::string key(64, 'c');
    CHECK_FALSE(cache.find(key));

    auto staging = cache.staging(key);
    REQUIRE(staging);
    write(*staging / "demo-1.0-cp312-cp312-linux_x86_64.whl", "wheel bytes");
    auto entry = cache.publish(key, *staging, "scheme: bootstrap-build-v2\n", 12.5);
    REQUIRE(entry);
    CHECK_FALSE(fs::exists(*staging));
    CHECK(entry->dir == home.path() / "builds" / key);
    CHECK(entry->sha256 == core::sha256_hex("wheel bytes"));
    CHECK(core::read_file(entry->dir / "inputs.txt").value() == "scheme: bootstrap-build-v2\n");

    auto found = cache.find(key);
    REQUIRE(found);
    CHECK(found->wheel == entry->wheel);
    CHECK(found->build_seconds == Approx(12.5));

    write(found->wheel, "damaged");  // a corrupted wheel is never installed
    CHECK_FALSE(cache.find(key));
}

TEST_CASE("publish refuses a build that made no wheel or several, and leaves nothing") {
    core::TempDir home("bs-build-cache");
    steps::BuildCache cache(home.path() / "builds");
    const std::string key(64, 'd');
    auto staging = cache.staging(key);
    REQUIRE(staging);
    auto none = cache.publish(key, *staging, "", 1);
    REQUIRE_FALSE(none);
    CHECK(none.error().message == "the build produced 0 wheels instead of one");
    CHECK_FALSE(fs::exists(*staging));
    CHECK_FALSE(fs::exists(home.path() / "builds" / key));

    staging = cache.staging(key);
    REQUIRE(staging);
    write(*staging / "a-1.0-py3-none-any.whl", "a");
    write(*staging / "b-1.0-py3-none-any.whl", "b");
    CHECK_FALSE(cache.publish(key, *staging, "", 1));
    CHECK_FALSE(fs::exists(home.path() / "builds" / key));
}

TEST_CASE("the key's lock is exclusive and names its holder") {
    core::TempDir home("bs-build-cache");
    steps::BuildCache cache(home.path() / "builds");
    auto held = cache.lock("k", 1, {});
    REQUIRE(held);
    // flock locks belong to open file descriptions: a second acquire in this process waits too.
    long seen = -1;
    auto second = cache.lock("k", 0.2, [&](long pid) { seen = pid; });
    REQUIRE_FALSE(second);
    CHECK(second.error().code == ErrorCode::lock_timeout);
    CHECK(seen == ::getpid());
}

TEST_CASE("a dead builder's staging dir and source copies are removed, a live one's are kept") {
    core::TempDir home("bs-build-cache");
    steps::BuildCache cache(home.path() / "builds");
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    const long dead = child, live = ::getppid();
    const std::string key(64, 'a'), other(64, 'b');
    auto root = cache.root();
    std::vector<fs::path> dead_ones{root / fmt::format(".tmp-{}-{}", key, dead),
                                    root / fmt::format(".src-{}-{}", key, dead),
                                    root / fmt::format("..src-{}-{}.tmp-{}", key, dead, dead)};
    std::vector<fs::path> kept{root / fmt::format(".tmp-{}-{}", key, live), root / fmt::format(".src-{}-{}", key, live),
                               root / fmt::format(".src-{}-{}", other, dead),  // another key's lock
                               root / key, root / (key + ".lock")};
    for (const auto& p : dead_ones) write(p / "setup.py", "x");
    for (const auto& p : kept) write(p / "f", "x");
    CHECK(cache.source_copy(key) == root / fmt::format(".src-{}-{}", key, ::getpid()));
    auto staging = cache.staging(key);
    REQUIRE(staging);
    CHECK(*staging == root / fmt::format(".tmp-{}-{}", key, ::getpid()));

    auto removed = cache.remove_leftovers(key);
    std::sort(removed.begin(), removed.end());
    std::sort(dead_ones.begin(), dead_ones.end());
    CHECK(removed == dead_ones);
    for (const auto& p : dead_ones) CHECK_FALSE(fs::exists(p));
    for (const auto& p : kept) CHECK(fs::exists(p));
    CHECK(fs::exists(*staging));  // our own
}

TEST_CASE("tree digest: content, names and the executable bit count, build outputs do not") {
    core::TempDir dir("bs-tree");
    core::TempDir cache("bs-tree-cache");
    const auto& src = dir.path();
    write(src / "pyproject.toml", "[project]\nname = 'x'\n");
    write(src / "csrc" / "a.cpp", "int a();\n");
    auto first = steps::tree_digest(src, cache.path());
    REQUIRE(first);
    CHECK(first->size() == 64);
    CHECK(steps::tree_digest(src, cache.path()).value() == *first);  // stamps cached

    // What builds and VCSs write is not the source.
    write(src / "build" / "temp" / "a.o", "obj");
    write(src / "dist" / "x-1.0.whl", "w");
    write(src / ".git" / "HEAD", "ref: refs/heads/main\n");
    write(src / "x.egg-info" / "PKG-INFO", "Name: x\n");
    write(src / "csrc" / "__pycache__" / "m.pyc", "c");
    CHECK(steps::tree_digest(src, cache.path()).value() == *first);

    write(src / "csrc" / "a.cpp", "int a(); // changed\n");
    auto changed = steps::tree_digest(src, cache.path());
    CHECK(changed.value() != *first);
    write(src / "csrc" / "a.cpp", "int a();\n");
    CHECK(steps::tree_digest(src, cache.path()).value() == *first);  // content, not mtime

    fs::permissions(src / "csrc" / "a.cpp", fs::perms::owner_exec, fs::perm_options::add);
    CHECK(steps::tree_digest(src, cache.path()).value() != *first);
    fs::permissions(src / "csrc" / "a.cpp", fs::perms::owner_exec, fs::perm_options::remove);

    fs::rename(src / "csrc" / "a.cpp", src / "csrc" / "b.cpp");
    CHECK(steps::tree_digest(src, cache.path()).value() != *first);

    CHECK(steps::tree_digest(src / "nope", cache.path()).value() == "missing");
}

TEST_CASE("tree digest cache: versioned JSON, an old or damaged file is a miss, rewritten") {
    core::TempDir dir("bs-tree");
    core::TempDir cache("bs-tree-cache");
    write(dir.path() / "a.py", "x = 1\n");
    auto first = steps::tree_digest(dir.path(), cache.path());
    REQUIRE(first);
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cache.path())) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    const fs::path file = files[0];
    CHECK(file.extension() == ".json");
    std::string text = core::read_file(file).value();
    CHECK(text.find("\"version\": 1") != std::string::npos);
    CHECK(text.find("\"digest\": \"" + *first + "\"") != std::string::npos);

    // The cache is what answers while the stamp holds: a planted digest comes back.
    const std::string planted(64, 'a');
    std::string forged = text;
    forged.replace(forged.find(*first), first->size(), planted);
    write(file, forged);
    CHECK(steps::tree_digest(dir.path(), cache.path()).value() == planted);

    for (const std::string& old : {std::string("STAMP ") + *first + "\n", std::string("{\"version\": 1"),
                                   std::string("{\"version\": 99, \"stamp\": 1}")}) {
        write(file, old);
        CHECK(steps::tree_digest(dir.path(), cache.path()).value() == *first);
        CHECK(core::read_file(file).value() == text);  // rewritten
    }
}
