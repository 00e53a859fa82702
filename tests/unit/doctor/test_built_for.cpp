// doctor's "built for" check: the arch a venv (image) was built for -- recorded in its history,
// else carried by its CUDA libraries -- against the node's GPUs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../cc.hpp"
#include "../skip.hpp"
#include "core/fs.hpp"
#include "doctor/checks.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
using recipe::Severity;

namespace {

namespace fs = std::filesystem;

const char* k_history = "/opt/venv/.bootstrap/history/0002-after.json";

RecordedArch recorded(const std::string& archs, const std::string& origin = "--arch 9.0") {
    return RecordedArch{archs, origin, "", k_history};
}

NodeDevice node(std::vector<NodeGpu> gpus, const std::string& origin = "probe 'nvidia-smi'") {
    return NodeDevice{std::move(gpus), origin, {}};
}

const NodeGpu k_a100{"NVIDIA A100-SXM4-80GB", 8, 0};
const NodeGpu k_h200{"NVIDIA H200", 9, 0};
const NodeGpu k_b200{"NVIDIA B200", 10, 0};
const NodeGpu k_a10{"NVIDIA A10", 8, 6};
const NodeGpu k_l40s{"NVIDIA L40S", 8, 9};

struct Outcome {
    std::vector<Finding> findings;
    CheckSummary summary;
};

Outcome check(const DoctorOptions& options) {
    Outcome out;
    out.findings = check_built_for(options, &out.summary);
    return out;
}

Outcome check(const RecordedArch& built, const NodeDevice& device) {
    DoctorOptions options;
    options.venv = "/nonexistent/venv";
    options.built_for = built;
    options.device = device;
    return check(options);
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// ---- a shared library with a synthetic .nv_fatbin section, built by the host's cc ----

void put(std::vector<unsigned char>& out, size_t at, uint64_t value, size_t width) {
    if (out.size() < at + width) out.resize(at + width, 0);
    for (size_t i = 0; i < width; ++i) out[at + i] = static_cast<unsigned char>(value >> (8 * i));
}

struct Code {
    bool ptx;
    unsigned sm;
    uint64_t flags = 0;  // 0x100000: an 'a' target
};

/// One fatbin container holding `codes` (layout in inspect/fatbin.hpp).
std::vector<unsigned char> fatbin(const std::vector<Code>& codes) {
    std::vector<unsigned char> entries;
    for (const auto& c : codes) {
        std::vector<unsigned char> e(64, 0);
        put(e, 0, c.ptx ? 1 : 2, 2);
        put(e, 2, 0x0101, 2);
        put(e, 4, 64, 4);
        put(e, 8, 16, 8);
        put(e, 28, c.sm, 4);
        put(e, 40, c.flags, 8);
        e.resize(64 + 16, 0xAB);
        entries.insert(entries.end(), e.begin(), e.end());
    }
    std::vector<unsigned char> out(16, 0);
    put(out, 0, 0xBA55ED50, 4);
    put(out, 4, 1, 2);
    put(out, 6, 16, 2);
    put(out, 8, entries.size(), 8);
    out.insert(out.end(), entries.begin(), entries.end());
    return out;
}

/// `so` (under site-packages) with a .nv_fatbin section holding `codes`.
void cuda_library(const fs::path& so, const std::vector<Code>& codes) {
    fs::create_directories(so.parent_path());
    std::string bytes;
    for (unsigned char b : fatbin(codes)) bytes += fmt::format("{},", static_cast<unsigned>(b));
    const fs::path source = so.string() + ".c";
    std::ofstream(source) << "__attribute__((used, section(\".nv_fatbin\"))) const unsigned char "
                             "fatbin[] = {"
                          << bytes << "};\nint answer(void) { return 42; }\n";
    REQUIRE(bs_test::cc({"-shared", "-fPIC", "-o", so.string(), source.string()}));
    fs::remove(source);
}

bool have_cc() {
    auto env = exec::current_environment();
    return !exec::find_program("cc", env["PATH"]).empty();
}

fs::path fake_venv(const fs::path& root) {
    fs::path venv = root / "venv";
    fs::create_directories(venv / "lib" / "python3.11" / "site-packages");
    std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\n";
    return venv;
}

}  // namespace

TEST_CASE("recorded cuda_archs parse into the targets a build compiled", "[doctor][built-for]") {
    auto one = parse_recorded_archs("9.0");
    REQUIRE(one);
    CHECK(*one == std::vector<CodeTarget>{{9, 0, 0, false}});

    auto list = parse_recorded_archs("8.9;9.0+PTX");
    REQUIRE(list);
    CHECK(*list == std::vector<CodeTarget>{{8, 9, 0, false}, {9, 0, 0, false}, {9, 0, 0, true}});
    CHECK((*list)[2].text() == "compute_90");

    auto spaced = parse_recorded_archs("9.0a 10.0");
    REQUIRE(spaced);
    CHECK(*spaced == std::vector<CodeTarget>{{9, 0, 'a', false}, {10, 0, 0, false}});
    CHECK((*spaced)[0].text() == "sm_90a");

    for (const char* bad : {"Hopper", "9", "9.0+ptx", "9.10", "x.0", ";"}) {
        auto r = parse_recorded_archs(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::usage);
        CHECK(r.error().message.find(fmt::format("cuda_archs '{}'", bad)) != std::string::npos);
    }
    auto bad = parse_recorded_archs("9.0;Hopper");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.rfind("'Hopper' in cuda_archs '9.0;Hopper' is not a compute "
                                    "capability",
                                    0) == 0);
}

TEST_CASE("which built code runs on which GPU", "[doctor][built-for]") {
    const CodeTarget sm90{9, 0, 0, false}, sm90a{9, 0, 'a', false}, sm80{8, 0, 0, false}, sm89{8, 9, 0, false},
        ptx90{9, 0, 0, true}, ptx90a{9, 0, 'a', true};
    // SASS: the same major, a minor <= the GPU's.
    CHECK(sm90.runs_on(9, 0));
    CHECK(sm90.runs_on(9, 2));
    CHECK_FALSE(sm90.runs_on(8, 0));
    CHECK_FALSE(sm90.runs_on(10, 0));
    CHECK(sm80.runs_on(8, 6));
    CHECK(sm80.runs_on(8, 9));
    CHECK_FALSE(sm89.runs_on(8, 6));
    // An arch-specific target: exactly its arch.
    CHECK(sm90a.runs_on(9, 0));
    CHECK_FALSE(sm90a.runs_on(9, 2));
    CHECK_FALSE(ptx90a.runs_on(10, 0));
    // PTX: JIT-compiled on any GPU >= its arch.
    CHECK(ptx90.runs_on(9, 0));
    CHECK(ptx90.runs_on(10, 0));
    CHECK(ptx90.runs_on(12, 0));
    CHECK_FALSE(ptx90.runs_on(8, 9));
}

TEST_CASE("an image built for 9.0 on an 8.0 GPU is an error naming both sides and the fix", "[doctor][built-for]") {
    auto out = check(recorded("9.0"), node({k_a100}));
    REQUIRE(out.findings.size() == 1);
    const Finding& f = out.findings[0];
    CHECK(f.rule == "built-for");
    CHECK(f.severity == Severity::error);
    CHECK(f.message ==
          "this venv (image) was built for 9.0 (--arch 9.0); this GPU is 8.0 "
          "(NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')");
    CHECK(has(f.evidence, fmt::format("recorded in {}: device.cuda_archs = 9.0, "
                                      "cuda_archs_from = --arch 9.0",
                                      k_history)));
    CHECK(has(f.evidence, "code built for: sm_90"));
    CHECK(has(f.evidence,
              "GPU 0: NVIDIA A100-SXM4-80GB, compute capability 8.0 (probe "
              "'nvidia-smi'): runs none of it"));
    // The venv examined, not the recipe's default one.
    CHECK(f.fix.find("bootstrap run RECIPE --venv /nonexistent/venv --arch 8.0") != std::string::npos);
    CHECK(f.fix.find("bootstrap containerfile RECIPE --arch 8.0") != std::string::npos);
    CHECK(f.fix.find("or run this venv (image) on a GPU it was built for (9.0)") != std::string::npos);
    // An older GPU: PTX would not help, so the fix does not suggest it.
    CHECK(f.fix.find("ptx = true") == std::string::npos);
    CHECK(f.explain.find("sm_90a") != std::string::npos);
    CHECK(out.summary.group == "built for");
    CHECK(out.summary.line == "built for: 9.0 (--arch 9.0) does not run on this GPU");

    // With a recipe, the fix names it; the source of the arch is said as recorded.
    recipe::Recipe r;
    r.file = "/work/recipes/h200.toml";
    DoctorOptions options;
    options.venv = "/nonexistent/venv";
    options.recipe = &r;
    options.built_for = recorded("9.0", "[device] fallback_arch");
    options.device = node({k_a100});
    auto named = check(options);
    REQUIRE(named.findings.size() == 1);
    CHECK(named.findings[0].message.rfind("this venv (image) was built for 9.0 (the recipe's "
                                          "[device] fallback_arch); this GPU is 8.0",
                                          0) == 0);
    CHECK(named.findings[0].fix.find("bootstrap run /work/recipes/h200.toml --venv "
                                     "/nonexistent/venv --arch 8.0") != std::string::npos);
}

TEST_CASE("a newer GPU than every SASS target fails and the fix names PTX", "[doctor][built-for]") {
    auto out = check(recorded("9.0"), node({k_b200}, "probe 'driver'"));
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].severity == Severity::error);
    CHECK(out.findings[0].message ==
          "this venv (image) was built for 9.0 (--arch 9.0); this GPU "
          "is 10.0 (NVIDIA B200, probe 'driver')");
    CHECK(out.findings[0].fix.find("[device] ptx = true") != std::string::npos);

    // With +PTX the driver JIT-compiles it: passed, and it says how.
    auto jit = check(recorded("9.0+PTX"), node({k_b200}, "probe 'driver'"));
    REQUIRE(jit.findings.size() == 1);
    CHECK(jit.findings[0].severity == Severity::info);
    CHECK(jit.findings[0].message.find("it runs there through PTX JIT") != std::string::npos);
    CHECK(jit.summary.line == "built for: 9.0+PTX (--arch 9.0) runs on this GPU");
}

TEST_CASE("a matching GPU passes and SASS of a lower minor runs on the same major", "[doctor][built-for]") {
    auto same = check(recorded("9.0"), node({k_h200}));
    REQUIRE(same.findings.size() == 1);
    CHECK(same.findings[0].severity == Severity::info);
    CHECK(same.findings[0].message ==
          "this venv (image) was built for 9.0 (--arch 9.0); this GPU "
          "is 9.0 (NVIDIA H200, probe 'nvidia-smi'): its code runs "
          "there");
    CHECK(same.summary.line == "built for: 9.0 (--arch 9.0) runs on this GPU");

    auto minor = check(recorded("8.0", "probe 'driver'"), node({k_a10}));
    REQUIRE(minor.findings.size() == 1);
    CHECK(minor.findings[0].severity == Severity::info);
    CHECK(has(minor.findings[0].evidence,
              "GPU 0: NVIDIA A10, compute capability 8.6 (probe "
              "'nvidia-smi'): runs the SASS"));

    // The other way round (8.9 code on 8.6) does not run.
    auto higher = check(recorded("8.9", "probe 'driver'"), node({k_a10}));
    REQUIRE(higher.findings.size() == 1);
    CHECK(higher.findings[0].severity == Severity::error);

    // 9.0a runs only on 9.0.
    auto specific = check(recorded("9.0a"), node({k_h200}));
    REQUIRE(specific.findings.size() == 1);
    CHECK(specific.findings[0].severity == Severity::info);
}

TEST_CASE("every GPU of the node must run it and the message names the ones that cannot", "[doctor][built-for]") {
    auto eight = check(recorded("9.0"), node(std::vector<NodeGpu>(8, k_a100)));
    REQUIRE(eight.findings.size() == 1);
    CHECK(eight.findings[0].message ==
          "this venv (image) was built for 9.0 (--arch 9.0); this "
          "node's 8 GPUs are 8.0 (NVIDIA A100-SXM4-80GB, probe "
          "'nvidia-smi')");
    CHECK(eight.summary.line == "built for: 9.0 (--arch 9.0) does not run on 8 of 8 GPUs");

    auto mixed = check(recorded("9.0"), node({k_h200, k_l40s, k_l40s}, "probe 'driver'"));
    REQUIRE(mixed.findings.size() == 1);
    CHECK(mixed.findings[0].severity == Severity::error);
    CHECK(mixed.findings[0].message ==
          "this venv (image) was built for 9.0 (--arch 9.0); GPUs "
          "1, 2 are 8.9 (NVIDIA L40S, probe 'driver')");
    CHECK(mixed.findings[0].fix.find("--arch 8.9") != std::string::npos);
    CHECK(mixed.summary.line == "built for: 9.0 (--arch 9.0) does not run on 2 of 3 GPUs");

    auto both = check(recorded("8.9;9.0"), node({k_h200, k_l40s}, "probe 'driver'"));
    REQUIRE(both.findings.size() == 1);
    CHECK(both.findings[0].severity == Severity::info);
    CHECK(both.summary.line == "built for: 8.9;9.0 (--arch 9.0) runs on the node's GPUs");
}

TEST_CASE("doctor's --arch stands for the GPU and is named as its origin", "[doctor][built-for]") {
    auto out = check(recorded("9.0", "probe 'driver'"), node({{"", 8, 0}}, "--arch 8.0"));
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].message ==
          "this venv (image) was built for 9.0 (detected by probe 'driver'); this "
          "GPU is 8.0 (--arch 8.0)");
}

TEST_CASE("without a GPU nothing is compared and it is info", "[doctor][built-for]") {
    NodeDevice none;
    none.notes = {"driver: cannot load libcuda.so.1", "nvidia-smi: not found on PATH"};
    auto out = check(recorded("9.0"), none);
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].severity == Severity::info);
    CHECK(out.findings[0].message ==
          "this venv (image) was built for 9.0 (--arch 9.0); no GPU "
          "detected here, nothing compared");
    CHECK(has(out.findings[0].evidence, "no GPU: driver: cannot load libcuda.so.1"));
    CHECK(out.summary.line == "built for: 9.0 (--arch 9.0); no GPU detected, nothing compared");

    DoctorOptions unasked;  // not probed at all (a library caller): the same
    unasked.venv = "/nonexistent/venv";
    unasked.built_for = recorded("9.0");
    auto quiet = check(unasked);
    REQUIRE(quiet.findings.size() == 1);
    CHECK(quiet.findings[0].severity == Severity::info);

    DoctorOptions nothing;
    nothing.venv = "/nonexistent/venv";
    nothing.device = none;
    auto neither = check(nothing);
    REQUIRE(neither.findings.size() == 1);
    CHECK(neither.findings[0].severity == Severity::info);
    CHECK(neither.summary.line == "built for: no arch recorded in the history, no GPU detected: nothing compared");
}

TEST_CASE("a recorded arch this bootstrap cannot read is a warning naming the entry", "[doctor][built-for]") {
    auto out = check(recorded("Hopper"), NodeDevice{});
    REQUIRE(out.findings.size() == 2);
    CHECK(out.findings[0].severity == Severity::warning);
    CHECK(out.findings[0].message.rfind(fmt::format("{}: 'Hopper' in cuda_archs", k_history), 0) == 0);
    CHECK(out.findings[1].severity == Severity::info);
}

TEST_CASE("without a recorded arch the CUDA libraries' fatbins tell what the venv was built for",
          "[doctor][built-for]") {
    if (!have_cc()) bootstrap::test::skip_test_case("no C compiler (cc) to build a library with a fatbin");
    core::TempDir tmp("built-for");
    fs::path venv = fake_venv(tmp.path());
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    cuda_library(site / "fastext" / "_cuda.so", {{false, 90}});

    DoctorOptions options;
    options.venv = venv;
    options.device = node({k_a100});
    auto out = check(options);
    REQUIRE(out.findings.size() == 1);
    const Finding& f = out.findings[0];
    CHECK(f.severity == Severity::error);
    CHECK(f.message ==
          "this venv (image) was built for 9.0 (the CUDA code of its CUDA library); "
          "this GPU is 8.0 (NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')");
    CHECK(has(f.evidence, (site / "fastext" / "_cuda.so").string() + ": sm_90 SASS"));
    CHECK(f.fix.find("--arch 8.0") != std::string::npos);
    CHECK(out.summary.line ==
          "built for: no arch recorded in the history; 1 of 1 CUDA library carries no code for "
          "this GPU");

    // The same library on an H200 runs.
    options.device = node({k_h200});
    auto h200 = check(options);
    REQUIRE(h200.findings.size() == 1);
    CHECK(h200.findings[0].severity == Severity::info);
    CHECK(h200.summary.line == "built for: no arch recorded in the history; 1 CUDA library carries code for this GPU");

    // A second library with PTX compute_80 JIT-compiles on an 8.6 GPU; the sm_90 one does not
    // run there, and only it is named.
    cuda_library(site / "other" / "_ptx.so", {{true, 80}});
    options.device = node({k_a10});
    auto a10 = check(options);
    REQUIRE(a10.findings.size() == 1);
    CHECK(a10.findings[0].severity == Severity::error);
    CHECK(a10.findings[0].message.rfind("this venv (image) was built for 9.0 (the CUDA code of 1 "
                                        "of its 2 CUDA libraries); this GPU is 8.6",
                                        0) == 0);
    CHECK_FALSE(has(a10.findings[0].evidence, (site / "other" / "_ptx.so").string() + ": compute_80 PTX"));

    // sm_90a only on exactly 9.0.
    fs::remove(site / "other" / "_ptx.so");
    fs::remove(site / "fastext" / "_cuda.so");
    cuda_library(site / "fastext" / "_cuda.so", {{false, 90, 0x100000}});
    options.device = node({k_h200});
    CHECK(check(options).findings[0].severity == Severity::info);
    options.device = node({{"a future Hopper", 9, 2}});
    auto later = check(options);
    CHECK(later.findings[0].severity == Severity::error);
    CHECK(later.findings[0].message.rfind("this venv (image) was built for 9.0a ", 0) == 0);

    // Several targets are listed once each, ascending, as a TORCH_CUDA_ARCH_LIST.
    cuda_library(site / "other" / "_multi.so",
                 {{false, 90}, {false, 80}, {true, 90}, {false, 90, 0x100000}, {false, 80}});
    options.device = node({{"Tesla V100-SXM2-32GB", 7, 0}});
    auto volta = check(options);
    REQUIRE(volta.findings.size() == 1);
    CHECK(volta.findings[0].message ==
          "this venv (image) was built for 8.0;9.0;9.0+PTX;9.0a (the CUDA code of its 2 CUDA "
          "libraries); this GPU is 7.0 (Tesla V100-SXM2-32GB, probe 'nvidia-smi')");
    CHECK(volta.findings[0].fix.find("a library installed from an index needs a release built "
                                     "with code for 7.0") != std::string::npos);
    fs::remove(site / "other" / "_multi.so");

    // A recorded arch that runs here is cross-checked with the libraries: a build that ignored
    // it (its own arch list) left sm_90a, which a 9.2 GPU cannot run.
    options.device = node({{"a future Hopper", 9, 2}});
    options.built_for = recorded("9.2", "probe 'driver'");
    auto ignored = check(options);
    REQUIRE(ignored.findings.size() == 2);
    CHECK(ignored.findings[0].severity == Severity::info);
    CHECK(ignored.findings[1].severity == Severity::error);
    CHECK(ignored.findings[1].message ==
          "the history says this venv (image) was built for 9.2 (detected by probe 'driver'); this "
          "GPU is 9.2 "
          "(a future Hopper, probe 'nvidia-smi'), but 1 CUDA library in the venv carries no code "
          "for it");
    CHECK(has(ignored.findings[1].evidence, (site / "fastext" / "_cuda.so").string() + ": sm_90a SASS"));
    CHECK(ignored.summary.line ==
          "built for: 9.2 (detected by probe 'driver') runs on this GPU, but 1 CUDA "
          "library carries no code for it");
    // ... and with code that runs, the record's verdict stands alone.
    options.device = node({k_h200});
    options.built_for = recorded("9.0");
    auto agreed = check(options);
    REQUIRE(agreed.findings.size() == 1);
    CHECK(agreed.findings[0].severity == Severity::info);
    CHECK(agreed.summary.line == "built for: 9.0 (--arch 9.0) runs on this GPU");

    // --arch names the device and no arch is recorded: the cuda code check compares the
    // libraries one by one, this check adds nothing.
    options.built_for.reset();
    options.arch = "8.0";
    options.device = node({{"", 8, 0}}, "--arch 8.0");
    auto given = check(options);
    CHECK(given.findings.empty());
    CHECK(given.summary.line ==
          "built for: no arch recorded in the history (the cuda code check "
          "compared the CUDA libraries with --arch 8.0)");
}

TEST_CASE("no recorded arch and no CUDA code leave nothing to compare", "[doctor][built-for]") {
    core::TempDir tmp("built-for");
    DoctorOptions options;
    options.venv = fake_venv(tmp.path());
    options.device = node({k_a100});
    auto out = check(options);
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].severity == Severity::info);
    CHECK(out.summary.line ==
          "built for: no arch recorded in the history and no CUDA code in "
          "site-packages: nothing compared");
}

TEST_CASE("run_checks reports the built-for group after the cuda code", "[doctor][built-for]") {
    core::TempDir tmp("built-for");
    DoctorOptions options;
    options.venv = fake_venv(tmp.path());
    options.built_for = recorded("9.0");
    options.device = node({k_a100});
    auto report = run_checks(options);
    std::vector<std::string> groups;
    for (const auto& c : report.checks) groups.push_back(c.group);
    CHECK(groups == std::vector<std::string>{"venv", "files", "imports", "dependencies", "symbols", "cuda code",
                                             "built for", "packages", "build cache"});
    CHECK(std::any_of(report.findings.begin(), report.findings.end(),
                      [](const Finding& f) { return f.rule == "built-for" && f.severity == Severity::error; }));
}
