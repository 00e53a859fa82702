#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "device/arch.hpp"

using bootstrap::ErrorCode;
using namespace bootstrap::device;

namespace {

std::string list_text(std::string_view list) {
    auto parsed = parse_torch_arch_list(list);
    if (!parsed) return "error: " + parsed.error().message;
    return format_torch_arch_list(*parsed);
}

Arch arch(std::string_view text) {
    auto parsed = parse_arch(text);
    REQUIRE(parsed);
    return *parsed;
}

}  // namespace

TEST_CASE("parse_arch accepts the forms users and tools write", "[device][arch]") {
    struct Row {
        const char* text;
        const char* dotted;
        const char* digits;
    };
    for (auto row : std::vector<Row>{{"9.0", "9.0", "90"},
                                     {" 8.9 ", "8.9", "89"},
                                     {"90", "9.0", "90"},
                                     {"100", "10.0", "100"},
                                     {"12.1", "12.1", "121"},
                                     {"9.0a", "9.0a", "90a"},
                                     {"sm_90", "9.0", "90"},
                                     {"sm_90a", "9.0a", "90a"},
                                     {"compute_120", "12.0", "120"},
                                     {"10.0f", "10.0f", "100f"}}) {
        INFO(row.text);
        auto a = parse_arch(row.text);
        REQUIRE(a);
        CHECK(a->dotted() == row.dotted);
        CHECK(a->digits() == row.digits);
    }
    for (const char* bad : {"", "9", "9.", ".0", "9.10", "nine", "9.0+PTX", "sm_9.0", "0.0", "9,0"}) {
        INFO(bad);
        auto a = parse_arch(bad);
        REQUIRE_FALSE(a);
        CHECK(a.error().code == ErrorCode::usage);
        CHECK_THAT(a.error().message, Catch::Contains("not a CUDA compute capability"));
    }
}

TEST_CASE("TORCH_CUDA_ARCH_LIST grammar: accepted lists", "[device][arch]") {
    struct Row {
        const char* list;
        const char* normalized;
    };
    for (auto row : std::vector<Row>{
             {"9.0", "9.0"},
             {"9.0+PTX", "9.0+PTX"},
             {"8.9;9.0", "8.9;9.0"},
             {"8.9 9.0", "8.9;9.0"},
             {"9.0a", "9.0a"},
             {"9.0a+PTX", "9.0a+PTX"},
             {"Hopper", "9.0+PTX"},
             {"Ampere", "8.0;8.6+PTX"},
             {"Ampere+Tegra", "8.7"},
             {"Ada;Hopper", "8.9+PTX;9.0+PTX"},
             {"Blackwell", "10.0;10.3;12.0;12.1+PTX"},
             {"7.5 Hopper", "7.5;9.0+PTX"},
         }) {
        INFO(row.list);
        CHECK(list_text(row.list) == row.normalized);
    }
}

TEST_CASE("TORCH_CUDA_ARCH_LIST grammar: rejected lists say what to write", "[device][arch]") {
    struct Row {
        const char* list;
        const char* says;
    };
    for (auto row : std::vector<Row>{
             {"8.9,9.0", "commas are not separators"},
             {"8.9,9.0", "'8.9;9.0'"},
             {"9.0;", "empty item"},
             {"9.0; 8.9", "empty item"},
             {"", "empty item"},
             {"9.0+ptx", "unknown modifier '+ptx'"},
             {"90", "did you mean '9.0'?"},
             {"hopper", "did you mean 'Hopper'?"},
             {"Hoper", "did you mean 'Hopper'?"},
             {"10.0f", "not 'f'"},
             {"sm_90", "is not an arch"},
         }) {
        INFO(row.list);
        auto parsed = parse_torch_arch_list(row.list);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().code == ErrorCode::usage);
        CHECK_THAT(parsed.error().message, Catch::Contains(row.says));
        CHECK_THAT(parsed.error().message, Catch::Contains("TORCH_CUDA_ARCH_LIST"));
    }
}

TEST_CASE("derive_archs: one GPU, several, PTX, arch-specific", "[device][arch]") {
    auto one = derive_archs({arch("9.0")}, false);
    CHECK(one.arch == "9.0");
    CHECK(one.torch_arch_list == "9.0");
    CHECK(one.nvte_archs == "90");
    CHECK(one.cmake_archs == "90");

    CHECK(derive_archs({arch("9.0")}, true).torch_arch_list == "9.0+PTX");

    // Eight H200s are one arch; a 9.0 + 8.9 box gets both, ascending, GPU 0 as `arch`.
    std::vector<Arch> eight(8, arch("9.0"));
    CHECK(derive_archs(eight, false).torch_arch_list == "9.0");
    auto mixed = derive_archs({arch("9.0"), arch("8.9"), arch("9.0")}, true);
    CHECK(mixed.arch == "9.0");
    CHECK(mixed.torch_arch_list == "8.9;9.0+PTX");
    CHECK(mixed.nvte_archs == "89;90");
    CHECK(mixed.cmake_archs == "89;90");

    auto specific = derive_archs({arch("9.0a")}, false);
    CHECK(specific.torch_arch_list == "9.0a");
    CHECK(specific.nvte_archs == "90a");

    CHECK(derive_archs({}, true).torch_arch_list.empty());

    // Every derived list is one torch's grammar accepts.
    for (const auto& d : {one, mixed, specific}) CHECK(parse_torch_arch_list(d.torch_arch_list));
}

TEST_CASE("choose_archs: detected, --arch, --no-device, nothing", "[device][arch]") {
    SECTION("detected GPUs count when nothing is given") {
        auto c = choose_archs({arch("9.0")}, "driver", {});
        REQUIRE(c);
        CHECK(c->source == ArchSource::detected);
        CHECK(c->origin == "probe 'driver'");
        CHECK(c->derived.torch_arch_list == "9.0");
        CHECK(c->notices.empty());
    }
    SECTION("--arch without a GPU says so loudly") {
        ArchRequest r;
        r.given = "9.0";
        auto c = choose_archs({}, "", r);
        REQUIRE(c);
        CHECK(c->source == ArchSource::given);
        CHECK(c->derived.arch == "9.0");
        REQUIRE(c->notices.size() == 1);
        CHECK_THAT(c->notices[0], Catch::Contains("no GPU was detected"));
    }
    SECTION("--arch overriding a detected arch names both") {
        ArchRequest r;
        r.given = "8.9";
        auto c = choose_archs({arch("9.0")}, "torch", r);
        REQUIRE(c);
        CHECK(c->derived.torch_arch_list == "8.9");
        REQUIRE(c->notices.size() == 1);
        CHECK_THAT(c->notices[0], Catch::Contains("--arch 8.9 overrides the detected 9.0"));
    }
    SECTION("--arch with nothing probed claims neither a confirmation nor an override") {
        ArchRequest r;
        r.given = "9.0";
        r.probed = false;
        auto c = choose_archs({}, "", r);
        REQUIRE(c);
        CHECK(c->source == ArchSource::given);
        CHECK(c->origin == "--arch 9.0");
        CHECK(c->derived.torch_arch_list == "9.0");
        CHECK(c->notices.empty());
        r.no_device = true;
        auto both = choose_archs({}, "", r);
        REQUIRE(both);
        CHECK(both->notices == std::vector<std::string>{"--arch wins over --no-device"});
    }
    SECTION("--no-device uses the recipe's fallback_arch, loudly") {
        ArchRequest r;
        r.no_device = true;
        r.fallback_arch = "9.0";
        r.ptx = true;
        auto c = choose_archs({arch("8.0")}, "driver", r);
        REQUIRE(c);
        CHECK(c->source == ArchSource::fallback);
        CHECK(c->derived.torch_arch_list == "9.0+PTX");
        REQUIRE_FALSE(c->notices.empty());
        CHECK_THAT(c->notices[0], Catch::Contains("--no-device"));
        CHECK_THAT(c->notices[0], Catch::Contains("fallback_arch"));
    }
    SECTION("--no-device without a fallback_arch") {
        ArchRequest r;
        r.no_device = true;
        auto c = choose_archs({}, "", r);
        REQUIRE_FALSE(c);
        CHECK(c.error().code == ErrorCode::usage);
        CHECK_THAT(c.error().message, Catch::Contains("fallback_arch"));
        CHECK_THAT(c.error().message, Catch::Contains("--arch"));
    }
    SECTION("nothing detected and nothing given explains both options") {
        auto c = choose_archs({}, "", {});
        REQUIRE_FALSE(c);
        CHECK(c.error().code == ErrorCode::not_found);
        CHECK_THAT(c.error().message, Catch::Contains("no GPU was detected"));
        CHECK_THAT(c.error().detail, Catch::Contains("--arch 9.0"));
        CHECK_THAT(c.error().detail, Catch::Contains("--no-device"));
        CHECK_THAT(c.error().detail, Catch::Contains("fallback_arch"));
    }
    SECTION("a malformed --arch is a usage error") {
        ArchRequest r;
        r.given = "9,0";
        auto c = choose_archs({}, "", r);
        REQUIRE_FALSE(c);
        CHECK(c.error().code == ErrorCode::usage);
    }
}

TEST_CASE("compatibility: SASS same major and minor <=, PTX <=, 'a' only exact", "[device][arch]") {
    struct Row {
        const char* code;
        const char* device;
        bool sass;
        bool ptx;
    };
    for (auto row : std::vector<Row>{
             {"9.0", "9.0", true, true},
             {"8.0", "8.6", true, true},
             {"8.6", "8.0", false, false},
             {"8.9", "9.0", false, true},  // the seed's sm_89 build on an H200: PTX only
             {"9.0", "8.9", false, false},
             {"9.0", "10.0", false, true},  // SASS never crosses a major
             {"12.0", "9.0", false, false},
             {"9.0a", "9.0", true, true},
             {"9.0a", "9.1", false, false},  // arch-specific: exactly that arch
             {"10.0f", "10.3", true, true},  // family: within the major
             {"10.0f", "12.0", false, false},
         }) {
        INFO(row.code << " on " << row.device);
        CHECK(sass_runs_on(arch(row.code), arch(row.device)) == row.sass);
        CHECK(ptx_runs_on(arch(row.code), arch(row.device)) == row.ptx);
    }
}

TEST_CASE("torch's compiled arch list must cover the device", "[device][arch]") {
    const std::vector<std::string> cu130{"sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120"};
    CHECK(check_torch_covers(cu130, arch("9.0")));
    CHECK(check_torch_covers(cu130, arch("8.9")));                    // sm_86 SASS runs on 8.9
    CHECK(check_torch_covers(cu130, arch("12.1")));                   // sm_120
    CHECK(check_torch_covers({"sm_80", "compute_80"}, arch("9.0")));  // PTX forward

    auto missing = check_torch_covers({"sm_80", "sm_86"}, arch("9.0"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::usage);
    CHECK_THAT(missing.error().message, Catch::Contains("no kernels for compute capability 9.0"));
    CHECK_THAT(missing.error().message, Catch::Contains("sm_80 sm_86"));

    auto cpu = check_torch_covers({}, arch("9.0"));
    REQUIRE_FALSE(cpu);
    CHECK_THAT(cpu.error().message, Catch::Contains("CPU-only"));
}

TEST_CASE("parse_arch_flags reads torch._C._cuda_getArchFlags()", "[device][arch]") {
    auto targets = parse_arch_flags("sm_75 sm_90a compute_120 junk");
    REQUIRE(targets.size() == 3);
    CHECK(targets[0].text() == "sm_75");
    CHECK(targets[1].text() == "sm_90a");
    CHECK(targets[2].text() == "compute_120");
    CHECK(targets[2].ptx);
    CHECK(parse_arch_flags("").empty());
}

TEST_CASE("nvcc release and the torch.version.cuda check", "[device][arch]") {
    auto release = parse_nvcc_release(
        "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
        "Cuda compilation tools, release 13.0, V13.0.88\nBuild "
        "cuda_13.0.r13.0/compiler.36424714_0\n");
    REQUIRE(release);
    CHECK(*release == "13.0");
    CHECK_FALSE(parse_nvcc_release("gcc (Debian 12.2.0-14) 12.2.0"));

    CHECK(check_nvcc_matches_torch("13.0", "13.0"));
    CHECK(check_nvcc_matches_torch("12.8", "12.8.1"));
    auto mismatch = check_nvcc_matches_torch("12.8", "13.0");
    REQUIRE_FALSE(mismatch);
    CHECK(mismatch.error().code == ErrorCode::usage);
    CHECK_THAT(mismatch.error().message, Catch::Contains("nvcc is CUDA 12.8 but torch was built with CUDA 13.0"));
    auto cpu = check_nvcc_matches_torch("13.0", "");
    REQUIRE_FALSE(cpu);
    CHECK_THAT(cpu.error().message, Catch::Contains("CPU-only"));
}

TEST_CASE("nvcc --list-gpu-arch parsing and validation", "[device][arch]") {
    auto archs = parse_nvcc_gpu_archs("compute_75\ncompute_80\ncompute_90\ncompute_100\n\n");
    REQUIRE(archs.size() == 4);
    CHECK(archs[2].dotted() == "9.0");
    auto list = parse_torch_arch_list("8.0;9.0a+PTX");
    REQUIRE(list);
    CHECK(check_archs_supported_by_nvcc(*list, archs));
    auto old = parse_torch_arch_list("3.5;9.0");
    REQUIRE(old);
    auto rejected = check_archs_supported_by_nvcc(*old, archs);
    REQUIRE_FALSE(rejected);
    CHECK_THAT(rejected.error().message, Catch::Contains("cannot compile for 3.5"));
    CHECK_THAT(rejected.error().message, Catch::Contains("7.5 8.0 9.0 10.0"));
}
