#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "../skip.hpp"
#include "core/fs.hpp"
#include "device/preflight.hpp"
#include "device_fixtures.hpp"

using bootstrap::core::TempDir;
using bootstrap::test::child_env;
using bootstrap::test::fake_torch_venv;
using bootstrap::test::write_script;
using namespace bootstrap::device;
using Outcome = CheckResult::Outcome;

namespace {

std::map<std::string, CheckResult> by_name(const std::vector<CheckResult>& checks) {
    std::map<std::string, CheckResult> out;
    for (const auto& c : checks) out[c.name] = c;
    return out;
}

ArchChoice given(const std::string& arch) {
    ArchRequest r;
    r.given = arch;
    auto c = choose_archs({}, "", r);
    REQUIRE(c);
    return *c;
}

// A CUDA_HOME whose nvcc says `release` and knows compute_80 and compute_90.
void fake_cuda_home(const TempDir& dir, const std::string& release) {
    write_script(dir.path() / "bin" / "nvcc",
                 "#!/bin/sh\ncase \"$1\" in\n"
                 "  --version) echo 'Cuda compilation tools, release " +
                     release + ", V" + release +
                     ".1' ;;\n"
                     "  --list-gpu-arch) printf 'compute_80\\ncompute_90\\n' ;;\n"
                     "  *) exit 1 ;;\nesac\n");
}

}  // namespace

TEST_CASE("pre-build checks with a stand-in torch and nvcc", "[device][preflight]") {
    std::string why;
    const auto& venv = fake_torch_venv(&why);
    if (!venv) BS_SKIP(why);
    auto python = *venv / "bin" / "python";
    TempDir cuda("bs-cuda");

    SECTION("all good: torch 13.0 with sm_90, nvcc 13.0, 9.0 accepted") {
        fake_cuda_home(cuda, "13.0");
        auto env = child_env({{"CUDA_HOME", cuda.path().string()}});
        auto torch = probe_torch(python, env);
        REQUIRE(torch.available);
        auto checks = by_name(build_checks(&torch, given("9.0"), python, env));
        REQUIRE(checks.size() == 4);
        for (const auto& [name, c] : checks) {
            INFO(name << ": " << c.message);
            CHECK(c.outcome == Outcome::ok);
        }
        CHECK_THAT(checks["torch arch list"].message, Catch::Contains("-gencode=arch=compute_90,code=sm_90"));
    }
    SECTION("nvcc of another release, torch without kernels, an arch nvcc lacks") {
        fake_cuda_home(cuda, "12.8");
        auto env = child_env({{"CUDA_HOME", cuda.path().string()}, {"FAKE_TORCH_ARCH_FLAGS", "sm_80 sm_86"}});
        auto torch = probe_torch(python, env);
        REQUIRE(torch.available);
        auto checks = by_name(build_checks(&torch, given("10.0"), python, env));
        CHECK(checks["torch kernels"].outcome == Outcome::failed);
        CHECK_THAT(checks["torch kernels"].message, Catch::Contains("sm_80 sm_86"));
        CHECK(checks["nvcc version"].outcome == Outcome::failed);
        CHECK_THAT(checks["nvcc version"].message, Catch::Contains("nvcc is CUDA 12.8"));
        CHECK_THAT(checks["nvcc version"].message, Catch::Contains("CUDA 13.0"));
        CHECK(checks["nvcc arches"].outcome == Outcome::failed);
        CHECK_THAT(checks["nvcc arches"].message, Catch::Contains("cannot compile for 10.0"));
        CHECK(checks["torch arch list"].outcome == Outcome::ok);  // torch 2.9+ knows 10.0
    }
    SECTION("no torch, no nvcc: skipped with the reason") {
        ProbeAnswer none;
        none.probe = "torch";
        none.unavailable_reason = "no venv given";
        auto env = child_env({{"PATH", "/nonexistent"}});
        auto checks = by_name(build_checks(&none, given("9.0"), {}, env));
        CHECK(checks["torch kernels"].outcome == Outcome::skipped);
        CHECK(checks["torch arch list"].outcome == Outcome::skipped);
        // Without torch there is nothing to compare nvcc with (and maybe no nvcc at all:
        // /usr/local/cuda/bin/nvcc is only the last fallback).
        CHECK(checks["nvcc version"].outcome == Outcome::skipped);
        CHECK_THAT(checks["torch kernels"].message, Catch::Contains("no venv given"));
    }
}
