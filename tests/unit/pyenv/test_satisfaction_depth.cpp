// is_satisfied on hostile installed sets: dependency chains deeper than any stack, and
// Requires-Dist markers built to exhaust the marker parser.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "core/fs.hpp"
#include "pyenv/dist_info.hpp"

namespace fs = std::filesystem;
using bootstrap::core::TempDir;
using bootstrap::pyenv::is_satisfied;
using bootstrap::pyenv::MarkerEnv;
using bootstrap::pyenv::Requirement;

namespace {

/// A minimal `*.dist-info` (plain writes: 20,000 of them must be quick).
void write_dist(const fs::path& site, const std::string& name, const std::vector<std::string>& requires_dist) {
    fs::path dir = site / (name + "-1.0.dist-info");
    fs::create_directories(dir);
    std::ofstream metadata(dir / "METADATA");
    metadata << "Metadata-Version: 2.1\nName: " << name << "\nVersion: 1.0\n";
    for (const auto& r : requires_dist) metadata << "Requires-Dist: " << r << "\n";
    std::ofstream(dir / "RECORD") << name << "/__init__.py,,\n";
}

Requirement req(const std::string& text) {
    auto parsed = Requirement::parse(text);
    REQUIRE(parsed);
    return *parsed;
}

}  // namespace

TEST_CASE("is_satisfied walks a 20,000-deep dependency chain without recursion") {
    // d0 requires d1, ..., d19999 requires d20000. The recursive walk segfaulted on it.
    constexpr int k_depth = 20'000;
    TempDir tmp("bs-chain");
    for (int i = 0; i < k_depth; ++i)
        write_dist(tmp.path(), "d" + std::to_string(i), {"d" + std::to_string(i + 1) + ">=1"});
    auto installed = bootstrap::pyenv::scan_site_packages(tmp.path());
    REQUIRE(installed);
    REQUIRE(installed->size() == k_depth);
    MarkerEnv env{{"python_version", "3.12"}, {"extra", ""}};

    std::string why;
    CHECK_FALSE(is_satisfied(req("d0"), *installed, env, false, &why));
    CHECK(why == "d20000 is not installed (required by d19999 1.0)");
    CHECK(env.at("extra").empty());  // the walk restored what it changed

    write_dist(tmp.path(), "d" + std::to_string(k_depth), {"d0"});  // closes a cycle
    installed = bootstrap::pyenv::scan_site_packages(tmp.path());
    REQUIRE(installed);
    CHECK(is_satisfied(req("d0"), *installed, env, false, &why));
    CHECK(is_satisfied(req("d12345"), *installed, env, false, &why));

    // Deep in the chain, the recipe's allow_conflicts still applies to its pair only.
    write_dist(tmp.path(), "d" + std::to_string(k_depth), {"d0>=2"});
    installed = bootstrap::pyenv::scan_site_packages(tmp.path());
    REQUIRE(installed);
    CHECK_FALSE(is_satisfied(req("d1"), *installed, env, false, &why));
    CHECK(why == "d0 1.0 does not satisfy d0>=2 (required by d20000 1.0)");
    CHECK(is_satisfied(req("d1"), *installed, env, false, &why, {{"d20000", "d0"}}));
}

TEST_CASE("a Requires-Dist marker nested or long beyond the parser's bounds is a reason") {
    TempDir tmp("bs-marker");
    std::string deep = std::string(100'000, '(') + "os_name == 'x'" + std::string(100'000, ')');
    std::string nested = std::string(1'000, '(') + "os_name == 'x'" + std::string(1'000, ')');
    std::string chain;
    for (int i = 0; i < 100'000; ++i) chain += (i ? " and " : "") + std::string("os_name == 'x'");
    write_dist(tmp.path(), "deep", {"dep ; " + deep});
    write_dist(tmp.path(), "nested", {"dep ; " + nested});
    write_dist(tmp.path(), "chain", {"dep ; " + chain});
    write_dist(tmp.path(), "dep", {});
    auto installed = bootstrap::pyenv::scan_site_packages(tmp.path());
    REQUIRE(installed);
    MarkerEnv env{{"os_name", "posix"}};
    std::string why;

    CHECK_FALSE(is_satisfied(req("deep"), *installed, env, false, &why));
    CHECK(why.find("bad Requires-Dist in ") == 0);
    CHECK(why.find("marker of 200014 characters (the limit is 16384) at column 7") != std::string::npos);
    CHECK(why.size() < 1000);  // the requirement is quoted clipped

    CHECK_FALSE(is_satisfied(req("nested"), *installed, env, false, &why));
    CHECK(why.find("parentheses nested more than 32 deep (the limit is 32) at column 39") != std::string::npos);

    CHECK_FALSE(is_satisfied(req("chain"), *installed, env, false, &why));
    CHECK(why.find("the limit is 16384") != std::string::npos);
}

TEST_CASE("installed_closure: markers, extras, cycles, names not installed") {
    TempDir tmp("bs-closure");
    write_dist(tmp.path(), "torch",
               {"typing-extensions>=4", "cuda-toolkit[cublas]==13.0; sys_platform == \"linux\"",
                "setuptools; python_version >= \"3.12\"", "triton; extra == \"compile\""});
    write_dist(tmp.path(), "typing_extensions", {});
    write_dist(tmp.path(), "cuda-toolkit", {"nvidia-cublas; extra == \"cublas\"", "nvidia-nvrtc; extra == \"nvrtc\""});
    write_dist(tmp.path(), "nvidia-cublas", {"torch"});  // a cycle back to the top
    write_dist(tmp.path(), "nvidia-nvrtc", {});
    write_dist(tmp.path(), "triton", {});
    write_dist(tmp.path(), "unrelated", {});
    auto installed = bootstrap::pyenv::scan_site_packages(tmp.path());
    REQUIRE(installed);
    MarkerEnv linux{{"python_version", "3.11"}, {"sys_platform", "linux"}};
    auto closure = bootstrap::pyenv::installed_closure({req("torch")}, *installed, linux);
    REQUIRE(closure);
    // setuptools: its marker is false here (and it is not installed); triton: an extra not asked
    // for; nvidia-nvrtc: cuda-toolkit's other extra.
    CHECK(*closure == std::vector<std::string>{"cuda-toolkit", "nvidia-cublas", "torch", "typing-extensions"});
    closure = bootstrap::pyenv::installed_closure({req("torch[compile]"), req("nothere")}, *installed,
                                                  MarkerEnv{{"python_version", "3.11"}, {"sys_platform", "darwin"}});
    REQUIRE(closure);
    CHECK(*closure == std::vector<std::string>{"torch", "triton", "typing-extensions"});
    CHECK(linux.count("extra") == 0);  // the caller's environment is left as it was
}
