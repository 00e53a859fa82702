#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "../skip.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "device/toolchain.hpp"
#include "device_fixtures.hpp"
#include "exec/environment.hpp"

using bootstrap::ErrorCode;
using bootstrap::core::TempDir;
using bootstrap::test::child_env;
using bootstrap::test::fake_torch_venv;
using bootstrap::test::write_script;
using namespace bootstrap::device;

TEST_CASE("find_nvcc: CUDA_HOME, then PATH", "[device][toolchain]") {
    TempDir home("bs-cuda-home");
    write_script(home.path() / "bin" / "nvcc", "#!/bin/sh\nexit 0\n");
    TempDir other("bs-cuda-path");
    write_script(other.path() / "nvcc", "#!/bin/sh\nexit 0\n");
    CHECK(find_nvcc(child_env({{"CUDA_HOME", home.path().string()}, {"PATH", other.path().string()}})) ==
          home.path() / "bin" / "nvcc");
    CHECK(find_nvcc(child_env({{"PATH", other.path().string()}})) == other.path() / "nvcc");
}

TEST_CASE("a stand-in nvcc of another CUDA release fails the torch check", "[device][toolchain]") {
    TempDir dir("bs-fake-nvcc");
    write_script(dir.path() / "nvcc",
                 "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                 "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n");
    auto release = nvcc_release(dir.path() / "nvcc", child_env());
    REQUIRE(release);
    CHECK(*release == "12.8");
    auto check = check_nvcc_matches_torch(*release, "13.0");
    REQUIRE_FALSE(check);
    CHECK_THAT(check.error().message, Catch::Contains("nvcc is CUDA 12.8"));
    CHECK_THAT(check.error().message, Catch::Contains("torch was built with CUDA 13.0"));

    write_script(dir.path() / "broken", "#!/bin/sh\necho 'libnvvm missing' >&2\nexit 1\n");
    auto broken = nvcc_release(dir.path() / "broken", child_env());
    REQUIRE_FALSE(broken);
    CHECK(broken.error().code == ErrorCode::process);
    CHECK_THAT(broken.error().message, Catch::Contains("exit code 1"));
    CHECK_THAT(broken.error().detail, Catch::Contains("libnvvm missing"));
}

TEST_CASE("the real nvcc: release and --list-gpu-arch", "[device][toolchain][nvcc]") {
    auto env = bootstrap::exec::current_environment();
    auto nvcc = find_nvcc(env);
    if (nvcc.empty()) BS_SKIP("no nvcc (CUDA_HOME, PATH, /usr/local/cuda/bin)");
    auto release = nvcc_release(nvcc, env);
    REQUIRE(release);
    CHECK(std::regex_match(*release, std::regex(R"(\d+\.\d+)")));
    auto archs = nvcc_gpu_archs(nvcc, env);
    REQUIRE(archs);
    auto hopper = parse_torch_arch_list("9.0;9.0a+PTX");
    REQUIRE(hopper);
    CHECK(check_archs_supported_by_nvcc(*hopper, *archs));
    auto kepler = parse_torch_arch_list("3.5");
    REQUIRE(kepler);
    auto rejected = check_archs_supported_by_nvcc(*kepler, *archs);
    REQUIRE_FALSE(rejected);  // no CUDA 12+ nvcc compiles for Kepler
    CHECK_THAT(rejected.error().message, Catch::Contains("9.0"));
}

TEST_CASE("torch's extension builder judges an arch list", "[device][toolchain]") {
    std::string why;
    const auto& venv = fake_torch_venv(&why);
    if (!venv) BS_SKIP(why);
    auto python = *venv / "bin" / "python";
    auto flags = torch_arch_flags_for(python, "9.0+PTX", child_env());
    REQUIRE(flags);
    CHECK(bootstrap::core::join(*flags, " ") ==
          "-gencode=arch=compute_90,code=compute_90 -gencode=arch=compute_90,code=sm_90");
    auto hopper = torch_arch_flags_for(python, "Hopper", child_env());
    REQUIRE(hopper);
    CHECK(*hopper == *flags);

    auto comma = torch_arch_flags_for(python, "8.9,9.0", child_env());
    REQUIRE_FALSE(comma);
    CHECK(comma.error().code == ErrorCode::usage);
    CHECK_THAT(comma.error().message,
               Catch::Contains("rejects TORCH_CUDA_ARCH_LIST '8.9,9.0': ValueError: Unknown CUDA "
                               "arch (8.9,9.0)"));

    auto no_torch = torch_arch_flags_for(python, "9.0", child_env({{"FAKE_TORCH_IMPORT_ERROR", "boom"}}));
    REQUIRE_FALSE(no_torch);
    CHECK(no_torch.error().code == ErrorCode::process);
    CHECK_THAT(no_torch.error().message, Catch::Contains("ImportError: boom"));

    // torch's warnings share the pipe with the answer; they are not flags.
    auto warned = torch_arch_flags_for(python, "9.0+PTX", child_env({{"FAKE_TORCH_WARN", "1"}}));
    REQUIRE(warned);
    CHECK(*warned == *flags);
    auto warned_rejected = torch_arch_flags_for(python, "8.9,9.0", child_env({{"FAKE_TORCH_WARN", "1"}}));
    REQUIRE_FALSE(warned_rejected);
    CHECK_THAT(warned_rejected.error().message,
               Catch::EndsWith("ValueError: Unknown CUDA arch (8.9,9.0) or GPU not supported"));
}
