#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>
#include <vector>

#include "../skip.hpp"
#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "device/probe.hpp"
#include "device_fixtures.hpp"

using bootstrap::ErrorCode;
using bootstrap::core::read_file;
using bootstrap::core::TempDir;
using bootstrap::test::child_env;
using bootstrap::test::fake_torch_venv;
using bootstrap::test::ScopedEnv;
using bootstrap::test::write_script;
using namespace bootstrap::device;

namespace {

std::vector<std::string> caps(const ProbeAnswer& a) {
    std::vector<std::string> out;
    for (const auto& g : a.gpus) out.push_back(g.arch().dotted());
    return out;
}

// A directory with a stand-in nvidia-smi that records its arguments and runs `body`.
struct FakeSmi {
    TempDir dir{"bs-fake-smi"};
    explicit FakeSmi(const std::string& body) {
        write_script(dir.path() / "bin" / "nvidia-smi",
                     "#!/bin/sh\necho \"$@\" > \"" + (dir.path() / "argv").string() + "\"\n" + body);
    }
    bootstrap::exec::EnvMap env() const {
        return child_env({{"PATH", (dir.path() / "bin").string() + ":/usr/bin:/bin"}});
    }
};

const char* k_h200_smi = "printf 'NVIDIA H200, 9.0, 580.65.06\\nNVIDIA H200, 9.0, 580.65.06\\n'\n";
const char* k_wrong_smi = "echo 'NVIDIA H200, 8.9, 580.65.06'\n";  // the seed's P1
const char* k_old_smi =
    "echo 'Field \"compute_cap\" is not a valid field to query.'\necho\n"
    "echo \"Please run 'nvidia-smi --help-query-gpu' for more info.\"\nexit 2\n";

}  // namespace

TEST_CASE("driver probe against a stand-in libcuda.so.1", "[device][probe]") {
    ScopedEnv no_error("FAKE_CUDA_INIT_ERROR", std::nullopt);
    SECTION("one 9.0 device") {
        ScopedEnv devices("FAKE_CUDA_DEVICES", "9.0");
        auto a = probe_driver(BS_FAKE_LIBCUDA);
        INFO(a.unavailable_reason);
        REQUIRE(a.available);
        CHECK(a.probe == "driver");
        CHECK(caps(a) == std::vector<std::string>{"9.0"});
        CHECK(a.gpus[0].name == "Fake GPU sm_90");
        CHECK(a.cuda_version == "13.0");
    }
    SECTION("a 9.0 and an 8.9 device") {
        ScopedEnv devices("FAKE_CUDA_DEVICES", "9.0;8.9");
        auto a = probe_driver(BS_FAKE_LIBCUDA);
        REQUIRE(a.available);
        CHECK(caps(a) == std::vector<std::string>{"9.0", "8.9"});
        CHECK(a.gpus[1].index == 1);
        std::vector<Arch> archs;
        for (const auto& g : a.gpus) archs.push_back(g.arch());
        auto derived = derive_archs(archs, false);
        CHECK(derived.arch == "9.0");
        CHECK(derived.torch_arch_list == "8.9;9.0");
        CHECK(derived.nvte_archs == "89;90");
    }
    SECTION("cuInit fails: unavailable with the CUresult") {
        ScopedEnv error("FAKE_CUDA_INIT_ERROR", "100");
        auto a = probe_driver(BS_FAKE_LIBCUDA);
        CHECK_FALSE(a.available);
        CHECK(a.gpus.empty());
        CHECK_THAT(a.unavailable_reason, Catch::Contains("cuInit failed"));
        CHECK_THAT(a.unavailable_reason, Catch::Contains("CUresult 100 (CUDA_ERROR_NO_DEVICE)"));
        CHECK(a.cuda_version == "13.0");  // cuDriverGetVersion works without init
    }
    SECTION("an unnamed CUresult is still shown by number") {
        ScopedEnv error("FAKE_CUDA_INIT_ERROR", "222");
        auto a = probe_driver(BS_FAKE_LIBCUDA);
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("CUresult 222"));
    }
    SECTION("no driver installed") {
        auto a = probe_driver("/nonexistent/libcuda.so.1");
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("cannot load /nonexistent/libcuda.so.1"));
    }
    SECTION("a library that is not libcuda") {
        auto a = probe_driver(BS_FAKE_LIBNVML);
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("has no symbol cuInit"));
    }
}

TEST_CASE("BOOTSTRAP_LIBCUDA / BOOTSTRAP_LIBNVML name the libraries", "[device][probe]") {
    CHECK(libcuda_path({}) == "libcuda.so.1");
    CHECK(libcuda_path({{"BOOTSTRAP_LIBCUDA", "/x/libcuda.so"}}) == "/x/libcuda.so");
    CHECK(libnvml_path({}) == "libnvidia-ml.so.1");
    CHECK(libnvml_path({{"BOOTSTRAP_LIBNVML", "/y/nvml.so"}}) == "/y/nvml.so");
}

TEST_CASE("NVML probe against a stand-in libnvidia-ml.so.1", "[device][probe]") {
    void* handle = dlopen(BS_FAKE_LIBNVML, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle);
    auto open_count = reinterpret_cast<int (*)()>(dlsym(handle, "fake_nvml_open_count"));
    REQUIRE(open_count);
    SECTION("two devices, the driver version, shutdown balanced") {
        ScopedEnv devices("FAKE_NVML_DEVICES", "9.0;9.0");
        ScopedEnv no_error("FAKE_NVML_INIT_ERROR", std::nullopt);
        auto a = probe_nvml(BS_FAKE_LIBNVML);
        INFO(a.unavailable_reason);
        REQUIRE(a.available);
        CHECK(caps(a) == std::vector<std::string>{"9.0", "9.0"});
        CHECK(a.driver_version == "580.65.06");
        CHECK(a.cuda_version == "13.0");
        CHECK(open_count() == 0);
    }
    SECTION("init fails") {
        ScopedEnv error("FAKE_NVML_INIT_ERROR", "9");
        auto a = probe_nvml(BS_FAKE_LIBNVML);
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("nvmlReturn 9 (Driver Not Loaded)"));
    }
    dlclose(handle);
}

TEST_CASE("nvidia-smi probe against stand-in scripts", "[device][probe]") {
    SECTION("valid CSV") {
        FakeSmi smi(k_h200_smi);
        auto a = probe_nvidia_smi(smi.env());
        INFO(a.unavailable_reason);
        REQUIRE(a.available);
        CHECK(caps(a) == std::vector<std::string>{"9.0", "9.0"});
        CHECK(a.gpus[1].name == "NVIDIA H200");
        CHECK(a.driver_version == "580.65.06");
        auto argv = read_file(smi.dir.path() / "argv");
        REQUIRE(argv);
        CHECK(bootstrap::core::trim(*argv) == "--query-gpu=name,compute_cap,driver_version --format=csv,noheader");
    }
    SECTION("\"not a valid field\" with exit 2 is unknown, not a failure") {
        FakeSmi smi(k_old_smi);
        auto a = probe_nvidia_smi(smi.env());
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("compute capability unknown"));
        CHECK_THAT(a.unavailable_reason, Catch::Contains("compute_cap field"));
    }
    SECTION("a bare exit 2 is unknown too") {
        FakeSmi smi("exit 2\n");
        auto a = probe_nvidia_smi(smi.env());
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("exit code 2"));
        CHECK_THAT(a.unavailable_reason, Catch::Contains("compute capability unknown"));
    }
    SECTION("another failure names its exit code and first line") {
        FakeSmi smi(
            "echo 'NVIDIA-SMI has failed because it could not communicate with the driver'\n"
            "exit 9\n");
        auto a = probe_nvidia_smi(smi.env());
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("exit code 9: NVIDIA-SMI has failed"));
    }
    SECTION("[N/A] compute capability") {
        FakeSmi smi("echo 'NVIDIA H200, [N/A], 580.65.06'\n");
        auto a = probe_nvidia_smi(smi.env());
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("'[N/A]'"));
    }
    SECTION("not installed") {
        TempDir empty("bs-no-smi");
        auto a = probe_nvidia_smi(child_env({{"PATH", empty.path().string()}}));
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("not found on PATH"));
    }
}

TEST_CASE("torch probe against a stand-in torch in a real venv", "[device][probe]") {
    std::string why;
    const auto& venv = fake_torch_venv(&why);
    if (!venv) BS_SKIP(why);
    auto python = *venv / "bin" / "python";
    SECTION("no GPU visible: versions and arch flags still answer") {
        auto a = probe_torch(python, child_env());
        INFO(a.unavailable_reason);
        REQUIRE(a.available);
        CHECK(a.torch_version == "2.11.0+cu130");
        CHECK(a.cuda_version == "13.0");
        CHECK(bootstrap::core::join(a.torch_arch_flags, " ") == "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120");
        CHECK(a.gpus.empty());
        CHECK_THAT(bootstrap::core::join(a.notes, "|"), Catch::Contains("is_available() is False"));
    }
    SECTION("two GPUs") {
        auto a = probe_torch(python, child_env({{"FAKE_TORCH_DEVICES", "9.0;8.9"}}));
        REQUIRE(a.available);
        CHECK(caps(a) == std::vector<std::string>{"9.0", "8.9"});
        CHECK(a.gpus[1].name == "Fake GPU sm_89");
    }
    SECTION("a CPU torch without _cuda_getArchFlags") {
        auto a = probe_torch(python, child_env({{"FAKE_TORCH_CUDA", ""}, {"FAKE_TORCH_NO_ARCH_FLAGS", "1"}}));
        REQUIRE(a.available);
        CHECK(a.cuda_version.empty());
        CHECK(a.torch_arch_flags.empty());
        auto notes = bootstrap::core::join(a.notes, "|");
        CHECK_THAT(notes, Catch::Contains("_cuda_getArchFlags() failed: AttributeError"));
        CHECK_THAT(notes, Catch::Contains("CPU-only"));
    }
    SECTION("torch does not import") {
        auto a = probe_torch(python, child_env({{"FAKE_TORCH_IMPORT_ERROR",
                                                 "libcudart.so.13: "
                                                 "cannot open"}}));
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("cannot import torch: ImportError: libcudart.so.13"));
    }
    SECTION("no interpreter") {
        auto a = probe_torch("/nonexistent/bin/python", child_env());
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("no interpreter at"));
    }
}

TEST_CASE("torch probe: what torch prints besides the answer is kept apart", "[device][probe]") {
    std::string why;
    const auto& venv = fake_torch_venv(&why);
    if (!venv) BS_SKIP(why);
    auto a =
        probe_torch(*venv / "bin" / "python", child_env({{"FAKE_TORCH_WARN", "1"}, {"FAKE_TORCH_DEVICES", "9.0"}}));
    INFO(a.unavailable_reason);
    REQUIRE(a.available);
    CHECK(caps(a) == std::vector<std::string>{"9.0"});
    CHECK(a.torch_version == "2.11.0+cu130");
    REQUIRE(a.warnings.size() == 2);
    CHECK_THAT(a.warnings[0], Catch::StartsWith("[W1201") && Catch::Contains("cudaGetDeviceCount"));
    CHECK(a.warnings[1] ==
          "FutureWarning: The pynvml package is deprecated. Please install "
          "nvidia-ml-py instead.");
    auto notes = bootstrap::core::join(a.notes, "|");
    CHECK_THAT(notes, Catch::Contains("torch printed 2 warnings while probed"));
    CHECK_THAT(notes, Catch::Contains("BOOTSTRAP_LOG=info"));
}

TEST_CASE("parse_torch_probe: warning lines and foreign lines are warnings", "[device][probe]") {
    auto a = parse_torch_probe(
        "/x/torch/cuda/__init__.py:129: UserWarning: CUDA init failed\n"
        "  return torch._C._cuda_getDeviceCount() > 0\n"
        "torch_version=2.11.0\ncuda_version=13.0\narch_flags=sm_90\n"
        "gpu=0|8|9|not a key of the script\n"
        "warning=FutureWarning: pynvml is deprecated\n"
        "warning=FutureWarning: pynvml is deprecated\n"
        "device=0|9|0|NVIDIA H200\n");
    REQUIRE(a.available);
    CHECK(caps(a) == std::vector<std::string>{"9.0"});
    CHECK(a.torch_arch_flags == std::vector<std::string>{"sm_90"});
    CHECK(a.warnings == std::vector<std::string>{"/x/torch/cuda/__init__.py:129: UserWarning: CUDA init failed",
                                                 "return torch._C._cuda_getDeviceCount() > 0",
                                                 "gpu=0|8|9|not a key of the script",
                                                 "FutureWarning: pynvml is deprecated"});
    CHECK_THAT(bootstrap::core::join(a.notes, "|"),
               Catch::Contains("torch printed 4 warnings while probed, kept out of this answer "
                               "(first: /x/torch/cuda/__init__.py:129: UserWarning"));
    auto quiet = parse_torch_probe("torch_version=2.11.0\n");
    CHECK(quiet.warnings.empty());
    CHECK(quiet.notes == std::vector<std::string>{"a CPU-only torch (torch.version.cuda is None)"});
}

TEST_CASE("parse_torch_probe keeps names with separators", "[device][probe]") {
    auto a = parse_torch_probe(
        "torch_version=2.11.0\ncuda_version=13.0\narch_flags=sm_90\n"
        "device_count=1\ndevice=0|9|0|NVIDIA H200 | NVL=x\n");
    REQUIRE(a.available);
    REQUIRE(a.gpus.size() == 1);
    CHECK(a.gpus[0].name == "NVIDIA H200 | NVL=x");
    CHECK_FALSE(parse_torch_probe("").available);
}

TEST_CASE("disagreements show both values", "[device][probe]") {
    auto answer = [](std::string probe, bool available, std::vector<GpuInfo> gpus) {
        ProbeAnswer a;
        a.probe = std::move(probe);
        a.available = available;
        a.gpus = std::move(gpus);
        return a;
    };
    auto driver = answer("driver", true, {{0, "NVIDIA H200", 9, 0}});
    auto smi = answer("nvidia-smi", true, {{0, "NVIDIA H200", 8, 9}});
    auto nvml = answer("nvml", true, {{0, "NVIDIA H200", 9, 0}});
    auto torch = answer("torch", false, {});
    auto warnings = disagreements({driver, smi, nvml, torch}, 0);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          "probes disagree: nvidia-smi reports 1 GPU: GPU 0 NVIDIA H200 8.9; "
          "driver (used) reports 1 GPU: GPU 0 NVIDIA H200 9.0");
    // A torch that sees no GPU while the driver does is worth a warning too.
    auto blind = answer("torch", true, {});
    auto blind_warnings = disagreements({driver, blind}, 0);
    REQUIRE(blind_warnings.size() == 1);
    CHECK_THAT(blind_warnings[0], Catch::Contains("torch reports no GPU"));
    // Same GPUs in another order (NVML counts by PCI bus, CUDA fastest first) is no disagreement.
    auto a = answer("driver", true, {{0, "A", 9, 0}, {1, "B", 8, 9}});
    auto b = answer("nvml", true, {{0, "B", 8, 9}, {1, "A", 9, 0}});
    CHECK(disagreements({a, b}, 0).empty());
}

TEST_CASE("detect: order decides, every other probe cross-checks", "[device][probe]") {
    ScopedEnv cuda_devices("FAKE_CUDA_DEVICES", "9.0");
    ScopedEnv cuda_ok("FAKE_CUDA_INIT_ERROR", std::nullopt);
    ScopedEnv nvml_devices("FAKE_NVML_DEVICES", "9.0");
    ScopedEnv nvml_ok("FAKE_NVML_INIT_ERROR", std::nullopt);
    FakeSmi smi(k_wrong_smi);
    auto env = smi.env();
    env["BOOTSTRAP_LIBCUDA"] = BS_FAKE_LIBCUDA;
    env["BOOTSTRAP_LIBNVML"] = BS_FAKE_LIBNVML;

    SECTION("driver first: nvidia-smi's 8.9 is a warning with both values") {
        auto report = detect({"driver", "nvidia-smi"}, {}, env);
        REQUIRE(report);
        REQUIRE(report->answers.size() == 4);  // the rest run as cross-checks
        CHECK(report->answers[0].probe == "driver");
        CHECK(report->answers[1].probe == "nvidia-smi");
        REQUIRE(report->chosen_answer());
        CHECK(report->chosen_answer()->probe == "driver");
        REQUIRE(report->archs().size() == 1);
        CHECK(report->archs()[0].dotted() == "9.0");
        REQUIRE(report->warnings.size() == 1);
        CHECK_THAT(report->warnings[0], Catch::Contains("nvidia-smi reports 1 GPU: GPU 0 NVIDIA "
                                                        "H200 8.9"));
        CHECK_THAT(report->warnings[0], Catch::Contains("driver (used) reports 1 GPU"));
        CHECK_THAT(report->warnings[0], Catch::Contains("9.0"));
        const auto* torch = report->find("torch");
        REQUIRE(torch);
        CHECK_FALSE(torch->available);
        CHECK_THAT(torch->unavailable_reason, Catch::Contains("no venv"));
    }
    SECTION("nvidia-smi first: its answer counts") {
        auto report = detect({"nvidia-smi", "driver"}, {}, env);
        REQUIRE(report);
        REQUIRE(report->chosen_answer());
        CHECK(report->chosen_answer()->probe == "nvidia-smi");
        CHECK(report->archs()[0].dotted() == "8.9");
        CHECK(report->warnings.size() == 2);  // driver and nvml both say 9.0
    }
    SECTION("a probe missing from the order never counts") {
        ScopedEnv no_device("FAKE_CUDA_INIT_ERROR", "100");
        auto report = detect({"driver"}, {}, env);
        REQUIRE(report);
        CHECK_FALSE(report->chosen);  // nvml and nvidia-smi see GPUs, but were not asked
        CHECK(report->archs().empty());
    }
    SECTION("the default order starts with torch, then the driver") {
        auto report = detect({}, {}, env);
        REQUIRE(report);
        CHECK(report->order == known_probes());
        REQUIRE(report->chosen_answer());
        CHECK(report->chosen_answer()->probe == "driver");
    }
    SECTION("an unknown probe name is a usage error with a suggestion") {
        auto report = detect({"nvidai-smi"}, {}, env);
        REQUIRE_FALSE(report);
        CHECK(report.error().code == ErrorCode::usage);
        CHECK_THAT(report.error().message, Catch::Contains("did you mean 'nvidia-smi'?"));
    }
}

// Its own case (not a SECTION of the one above) so that a missing python3 venv skips only it.
TEST_CASE("detect: torch in a venv, with the order's precedence", "[device][probe]") {
    std::string why;
    const auto& venv = fake_torch_venv(&why);
    if (!venv) BS_SKIP(why);
    ScopedEnv cuda_devices("FAKE_CUDA_DEVICES", "9.0");
    ScopedEnv cuda_ok("FAKE_CUDA_INIT_ERROR", std::nullopt);
    ScopedEnv nvml_devices("FAKE_NVML_DEVICES", "9.0");
    ScopedEnv nvml_ok("FAKE_NVML_INIT_ERROR", std::nullopt);
    FakeSmi smi(k_wrong_smi);
    auto env = smi.env();
    env["BOOTSTRAP_LIBCUDA"] = BS_FAKE_LIBCUDA;
    env["BOOTSTRAP_LIBNVML"] = BS_FAKE_LIBNVML;
    env["FAKE_TORCH_DEVICES"] = "9.0";
    auto report = detect({"torch", "driver"}, *venv, env);
    REQUIRE(report);
    REQUIRE(report->chosen_answer());
    CHECK(report->chosen_answer()->probe == "torch");
    CHECK(report->chosen_answer()->torch_version == "2.11.0+cu130");
}

TEST_CASE("detect: a TorchProbe answers for torch, told what the driver and NVML see", "[device][probe]") {
    ScopedEnv cuda_devices("FAKE_CUDA_DEVICES", "9.0");
    ScopedEnv cuda_ok("FAKE_CUDA_INIT_ERROR", std::nullopt);
    ScopedEnv nvml_devices("FAKE_NVML_DEVICES", "9.0");
    ScopedEnv nvml_ok("FAKE_NVML_INIT_ERROR", std::nullopt);
    TempDir venv("bs-torch-hook");
    auto env = child_env({{"CUDA_VISIBLE_DEVICES", "0"}, {"UNRELATED", "x"}});
    env["BOOTSTRAP_LIBCUDA"] = BS_FAKE_LIBCUDA;
    env["BOOTSTRAP_LIBNVML"] = BS_FAKE_LIBNVML;
    std::vector<std::string> views;
    std::vector<std::string> pythons;
    TorchProbe hook =
        [&](const std::filesystem::path& python, const bootstrap::exec::EnvMap&, const std::string& view) {
        pythons.push_back(python.string());
        views.push_back(view);
        ProbeAnswer a;
        a.probe = "torch";
        a.available = true;
        a.torch_version = "from the hook";
        a.gpus.push_back(GpuInfo{0, "cached", 9, 0});
        return a;
    };
    auto report = detect({"torch", "driver"}, venv.path(), env, hook);
    REQUIRE(report);
    REQUIRE(pythons.size() == 1);
    CHECK(pythons[0] == (venv.path() / "bin" / "python").string());
    // The answers keep the order's positions although torch ran last.
    REQUIRE(report->answers.size() == 4);
    CHECK(report->answers[0].probe == "torch");
    CHECK(report->answers[0].torch_version == "from the hook");
    CHECK(report->answers[1].probe == "driver");
    CHECK(report->chosen_answer()->probe == "torch");
    CHECK_THAT(views[0], Catch::Contains("driver: cuda "));
    CHECK_THAT(views[0], Catch::Contains("driver: gpu 0 9.0 "));
    CHECK_THAT(views[0], Catch::Contains("nvml: gpu 0 9.0 "));
    CHECK_THAT(views[0], Catch::Contains("env CUDA_VISIBLE_DEVICES=0\n"));
    CHECK_THAT(views[0], !Catch::Contains("UNRELATED"));
    CHECK_THAT(views[0], !Catch::Contains("nvidia-smi"));

    // Another GPU under the driver changes the view.
    ScopedEnv other("FAKE_CUDA_DEVICES", "9.0;9.0");
    auto again = detect({"torch", "driver"}, venv.path(), env, hook);
    REQUIRE(again);
    REQUIRE(views.size() == 2);
    CHECK(views[1] != views[0]);

    // Without a venv the hook is not asked.
    auto no_venv = detect({"torch", "driver"}, {}, env, hook);
    REQUIRE(no_venv);
    CHECK(views.size() == 2);
    CHECK_THAT(no_venv->find("torch")->unavailable_reason, Catch::Contains("no venv"));
}

TEST_CASE("torch_view: the native answers and torch's environment, secrets digested", "[device][probe]") {
    ProbeAnswer driver;
    driver.probe = "driver";
    driver.available = true;
    driver.cuda_version = "13.0";
    driver.gpus.push_back(GpuInfo{0, "NVIDIA H200", 9, 0});
    ProbeAnswer nvml;
    nvml.probe = "nvml";
    nvml.unavailable_reason = "cannot load libnvidia-ml.so.1";
    ProbeAnswer smi = driver;
    smi.probe = "nvidia-smi";
    auto view = torch_view(
        {driver, nvml, smi},
        {{"CUDA_VISIBLE_DEVICES", "1"}, {"PYTHONPATH", "/src"}, {"TORCH_HUB_TOKEN", "hunter2"}, {"HOME", "/root"}});
    CHECK(view ==
          "driver: cuda 13.0 driver \n"
          "driver: gpu 0 9.0 NVIDIA H200\n"
          "nvml: unavailable: cannot load libnvidia-ml.so.1\n"
          "env CUDA_VISIBLE_DEVICES=1\n"
          "env PYTHONPATH=/src\n"
          "env TORCH_HUB_TOKEN=sha256:" +
              bootstrap::core::sha256_hex("hunter2") + "\n");
}
