// The cuda_arch verify clause: a module is located by the venv's python (a fake here), a path is
// read directly; a library without the arch's code fails listing what it carries. (Real fatbins:
// tests/integration/test_device_build.py compiles them with nvcc.)
#include <catch2/catch.hpp>

#include "steps/executor.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

steps::ResolvedStep cuda_check(std::string library, bool is_module) {
    steps::ResolvedStep step;
    step.id = "cuda";
    step.kind = "check";
    step.verify.push_back({recipe::VerifyClause::Kind::cuda_arch, "9.0", {}, std::move(library), is_module, {}});
    return step;
}

/// A libc-linked ELF of the host: it carries no CUDA code.
const fs::path k_plain_elf = "/bin/sh";

}  // namespace

TEST_CASE("cuda_arch on a path: a library without CUDA code fails, saying so") {
    auto step = cuda_check(k_plain_elf.string(), false);
    steps::StepContext ctx;
    ctx.venv = "/nonexistent-venv";
    ctx.run = [](const exec::ProcessSpec&) -> Result<exec::ProcessResult> {
        FAIL("a path clause runs nothing");
        return exec::ProcessResult{};
    };
    auto r = steps::verify(step, ctx);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::step_failed);
    CHECK(r.error().message == "step 'cuda': verify failed: " + k_plain_elf.string() +
                                   " has no CUDA code for compute capability 9.0: it carries no "
                                   "CUDA code (usable there: SASS sm_90, or PTX for an arch <= 9.0)");
    CHECK(step.verify[0].describe() == "cuda_arch 9.0 in " + k_plain_elf.string());
}

TEST_CASE("cuda_arch on a module: its origin comes from find_spec in the venv's python") {
    auto step = cuda_check("tinyext", true);
    steps::StepContext ctx;
    ctx.venv = "/v";
    std::vector<std::string> seen;
    ctx.run = [&](const exec::ProcessSpec& spec) -> Result<exec::ProcessResult> {
        seen = spec.argv;
        exec::ProcessResult r;
        r.exit_code = 0;
        r.output = "bootstrap-verify-origin: " + k_plain_elf.string() + "\n";
        return r;
    };
    auto r = steps::verify(step, ctx);
    REQUIRE_FALSE(r);
    REQUIRE(seen.size() == 4);
    CHECK(seen[0] == "/v/bin/python");
    CHECK(seen[3] == "tinyext");
    CHECK(r.error().message.starts_with("step 'cuda': verify failed: module tinyext (" + k_plain_elf.string() +
                                        ") has no CUDA code"));
    CHECK(step.verify[0].describe() == "cuda_arch 9.0 in module tinyext");

    // A module the venv does not have is named as such.
    ctx.run = [](const exec::ProcessSpec&) -> Result<exec::ProcessResult> {
        exec::ProcessResult r;
        r.exit_code = 3;
        r.output = "bootstrap-verify: module tinyext has no file in this venv\n";
        return r;
    };
    auto missing = steps::verify(step, ctx);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message == "step 'cuda': verify failed: module tinyext has no file in this venv");
}

TEST_CASE("an unreadable library fails the verify naming it") {
    auto step = cuda_check("/nonexistent/lib.so", false);
    steps::StepContext ctx;
    auto r = steps::verify(step, ctx);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.starts_with("step 'cuda': verify failed: "));
    CHECK(r.error().message.find("/nonexistent/lib.so") != std::string::npos);
}
