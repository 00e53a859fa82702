#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../skip.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"
#include "inspect/fatbin.hpp"

using bootstrap::ErrorCode;
using bootstrap::core::TempDir;
using namespace bootstrap::inspect;

namespace {

// ---- synthetic sections ----

void put(std::vector<unsigned char>& out, size_t at, uint64_t value, size_t width) {
    if (out.size() < at + width) out.resize(at + width, 0);
    for (size_t i = 0; i < width; ++i) out[at + i] = static_cast<unsigned char>(value >> (8 * i));
}

std::vector<unsigned char> entry(uint16_t kind, uint32_t sm, uint64_t flags, size_t payload) {
    std::vector<unsigned char> e(64, 0);
    put(e, 0, kind, 2);
    put(e, 2, 0x0101, 2);
    put(e, 4, 64, 4);
    put(e, 8, payload, 8);
    put(e, 28, sm, 4);
    put(e, 40, flags, 8);
    e.resize(64 + payload, 0xAB);
    return e;
}

std::vector<unsigned char> container(const std::vector<std::vector<unsigned char>>& entries) {
    std::vector<unsigned char> c(16, 0);
    size_t payload = 0;
    for (const auto& e : entries) payload += e.size();
    put(c, 0, 0xBA55ED50, 4);
    put(c, 4, 1, 2);
    put(c, 6, 16, 2);
    put(c, 8, payload, 8);
    for (const auto& e : entries) c.insert(c.end(), e.begin(), e.end());
    return c;
}

bootstrap::Result<std::vector<FatbinEntry>> parse(const std::vector<unsigned char>& bytes) {
    return parse_fatbin(std::span<const unsigned char>(bytes.data(), bytes.size()));
}

// ---- real nvcc output, each library built at most once per test binary ----

fs::path find_nvcc() {
    auto env = bootstrap::exec::current_environment();
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        if (env.count(var) && fs::exists(fs::path(env[var]) / "bin" / "nvcc"))
            return fs::path(env[var]) / "bin" / "nvcc";
    }
    auto on_path = bootstrap::exec::find_program("nvcc", env.count("PATH") ? env["PATH"] : "");
    if (!on_path.empty()) return on_path;
    return fs::exists("/usr/local/cuda/bin/nvcc") ? fs::path("/usr/local/cuda/bin/nvcc") : fs::path();
}

// Three builds: what `--arch 9.0` asks for (sm_90 SASS, LZ4-compressed to pin that flag), an
// sm_80-only build (uncompressed), and PTX only (zstd). Compression is forced both ways so the
// flags do not depend on nvcc's defaults. Built on first use, so a ctest run of one test case
// pays for one nvcc call.
const std::map<std::string, std::vector<std::string>>& nvcc_builds() {
    static const std::map<std::string, std::vector<std::string>> k_builds{
        {"sm90", {"-gencode", "arch=compute_90,code=sm_90", "--compress-mode=speed", "-Xfatbin", "-compress-all"}},
        {"sm80", {"-gencode", "arch=compute_80,code=sm_80", "--compress-mode=none"}},
        {"ptx90", {"-gencode", "arch=compute_90,code=compute_90", "--compress-mode=size", "-Xfatbin", "-compress-all"}},
    };
    return k_builds;
}

struct NvccLib {
    fs::path path;      // empty when skipped or failed
    std::string skip;   // why: no nvcc
    std::string error;  // nvcc is there but failed: the test fails, it is not skipped
};

NvccLib build_nvcc_lib(const std::string& name) {
    static const fs::path nvcc = find_nvcc();
    static TempDir dir("bs-fatbin");
    if (nvcc.empty()) return {{}, "no nvcc (CUDA_HOME, PATH, /usr/local/cuda/bin)", {}};
    const auto& flags = nvcc_builds().at(name);
    fs::path out = dir.path() / ("lib" + name + ".so");
    bootstrap::exec::ProcessSpec spec;
    spec.argv = {nvcc.string(), "-shared", "-Xcompiler", "-fPIC"};
    spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
    spec.argv.insert(spec.argv.end(), {"-o", out.string(), std::string(BS_TEST_FIXTURES) + "/tiny_kernel.cu"});
    spec.env = bootstrap::exec::current_environment();
    spec.capture = true;
    auto r = bootstrap::exec::run_process(spec);
    if (!r || !r->ok())
        return {{},
                {},
                "nvcc failed: " + bootstrap::core::format_argv(spec.argv) + "\n" + (r ? r->output : r.error().message)};
    return {out, {}, {}};
}

/// The library built by nvcc with `name`'s flags; skips the test case without nvcc and fails it
/// when nvcc is there but cannot build the fixture.
const NvccLib& nvcc_lib(const std::string& name) {
    static std::map<std::string, NvccLib> built;
    auto it = built.find(name);
    if (it == built.end()) it = built.emplace(name, build_nvcc_lib(name)).first;
    if (!it->second.error.empty()) FAIL(it->second.error);
    if (it->second.path.empty()) BS_SKIP(it->second.skip);
    return it->second;
}

std::vector<FatbinEntry> entries_of(const NvccLib& lib) {
    auto contents = read_cuda_contents(lib.path);
    REQUIRE(contents);
    CHECK(contents->has_fatbin);
    return contents->entries;
}

}  // namespace

TEST_CASE("parse_fatbin walks containers and entries", "[inspect][fatbin]") {
    auto bytes = container({entry(2, 90, 0x11, 40), entry(1, 90, 0x8011, 24)});
    auto second = container({entry(2, 80, 0x2011, 8), entry(2, 100, 0x1100011, 8)});
    bytes.insert(bytes.end(), 8, 0);  // padding between containers
    bytes.insert(bytes.end(), second.begin(), second.end());
    bytes.insert(bytes.end(), 8, 0);  // and at the end
    auto parsed = parse(bytes);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 4);
    const auto& e = *parsed;
    CHECK(e[0].describe() == "sm_90 SASS");
    CHECK(e[0].size == 40);
    CHECK(e[0].offset == 16);
    CHECK(e[1].describe() == "compute_90 PTX (zstd-compressed)");
    CHECK(e[2].describe() == "sm_80 SASS (lz4-compressed)");
    CHECK(e[3].describe() == "sm_100a SASS");
    CHECK(summarize(e) == "sm_90 SASS, compute_90 PTX, sm_80 SASS, sm_100a SASS");
}

TEST_CASE("parse_fatbin rejects damaged sections, naming the offset", "[inspect][fatbin]") {
    auto good = container({entry(2, 90, 0x11, 40)});
    SECTION("bad magic") {
        auto bytes = good;
        bytes[0] = 0x51;
        auto parsed = parse(bytes);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("offset 0x0"));
        CHECK_THAT(parsed.error().message, Catch::Contains("magic"));
    }
    SECTION("container payload past the section") {
        auto bytes = good;
        bytes.resize(bytes.size() - 10);
        auto parsed = parse(bytes);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("runs past the section"));
    }
    SECTION("entry payload past its container") {
        auto bytes = good;
        put(bytes, 16 + 8, 4096, 8);
        auto parsed = parse(bytes);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("offset 0x10"));
        CHECK_THAT(parsed.error().message, Catch::Contains("runs past its container"));
    }
    SECTION("unknown entry kind") {
        auto bytes = good;
        put(bytes, 16, 7, 2);
        auto parsed = parse(bytes);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("unknown entry kind 7"));
    }
    SECTION("empty section and empty container are fine") {
        CHECK(parse({})->empty());
        CHECK(parse(container({}))->empty());
    }
}

TEST_CASE("check_cuda_arch tables", "[inspect][fatbin]") {
    auto sm = [](unsigned n, char variant = 0) {
        FatbinEntry e;
        e.kind = FatbinKind::sass;
        e.sm = n;
        e.variant = variant;
        return e;
    };
    auto ptx = [](unsigned n) {
        FatbinEntry e;
        e.kind = FatbinKind::ptx;
        e.sm = n;
        return e;
    };
    struct Row {
        std::vector<FatbinEntry> entries;
        const char* arch;
        bool ok;
    };
    for (const auto& row : std::vector<Row>{
             {{sm(90)}, "9.0", true},
             {{sm(80)}, "9.0", false},
             {{sm(80)}, "8.6", true},
             {{sm(86)}, "8.0", false},
             {{sm(89)}, "9.0", false},  // the seed's P15
             {{ptx(89)}, "9.0", true},
             {{ptx(90)}, "8.9", false},
             {{ptx(90)}, "12.0", true},
             {{sm(90, 'a')}, "9.0", true},
             {{sm(90, 'a')}, "9.1", false},
             {{sm(100)}, "10.3", true},
             {{sm(80), sm(90)}, "sm_90", true},
             {{}, "9.0", false},
         }) {
        INFO(summarize(row.entries) << " on " << row.arch);
        CHECK(static_cast<bool>(check_cuda_arch(row.entries, row.arch, "lib.so")) == row.ok);
    }
    auto bad = check_cuda_arch({sm(90)}, "nine", "lib.so");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::usage);
}

TEST_CASE("read_cuda_contents on files without CUDA code", "[inspect][fatbin]") {
    TempDir dir("bs-not-elf");
    fs::path text = dir.path() / "notes.so";
    std::ofstream(text) << "not an ELF file at all\n";
    auto not_elf = read_cuda_contents(text);
    REQUIRE_FALSE(not_elf);
    CHECK_THAT(not_elf.error().message, Catch::Contains("is not an ELF file"));

    auto missing = read_cuda_contents(dir.path() / "missing.so");
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("cannot open"));

    auto plain = read_cuda_contents("/proc/self/exe");
    REQUIRE(plain);
    CHECK_FALSE(plain->has_fatbin);
    CHECK(plain->entries.empty());
    auto check = check_cuda_arch(plain->entries, "9.0", "unit_inspect");
    REQUIRE_FALSE(check);
    CHECK_THAT(check.error().message, Catch::Contains("carries no CUDA code"));
}

TEST_CASE("read_cuda_contents: a truncated library is an error, not 'no CUDA code'", "[inspect][fatbin]") {
    auto whole = bootstrap::core::read_file("/proc/self/exe");
    REQUIRE(whole);
    REQUIRE(read_cuda_contents("/proc/self/exe"));
    TempDir dir("bs-truncated");
    // Cut short in the section data, in the section header table, and inside the ELF header.
    for (size_t keep : {whole->size() / 2, whole->size() - 16, size_t{40}}) {
        INFO(keep);
        fs::path cut = dir.path() / "libcut.so";
        REQUIRE(bootstrap::core::write_file_atomic(cut, std::string_view(*whole).substr(0, keep)));
        auto r = read_cuda_contents(cut);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::io);
        CHECK_THAT(r.error().message, Catch::StartsWith(cut.string() + " is truncated or corrupt: "));
        CHECK_THAT(r.error().message, Catch::EndsWith(fmt::format("(the file has {} bytes)", keep)));
    }
}

TEST_CASE("real nvcc output: sm_90 SASS for --arch 9.0", "[inspect][fatbin][nvcc]") {
    const auto& lib = nvcc_lib("sm90");
    auto entries = entries_of(lib);
    REQUIRE_FALSE(entries.empty());
    for (const auto& e : entries) {
        INFO(e.describe());
        CHECK(e.kind == FatbinKind::sass);
        CHECK(e.sm == 90);
        CHECK(e.compression == FatbinCompression::lz4);
    }
    CHECK(summarize(entries) == "sm_90 SASS");
    CHECK(check_cuda_arch(entries, "9.0", "libsm90.so"));
    CHECK_FALSE(check_cuda_arch(entries, "8.9", "libsm90.so"));
    CHECK_FALSE(check_cuda_arch(entries, "10.0", "libsm90.so"));  // SASS only, no PTX
}

TEST_CASE("real nvcc output: an sm_80-only build fails for 9.0", "[inspect][fatbin][nvcc]") {
    const auto& lib = nvcc_lib("sm80");
    auto entries = entries_of(lib);
    REQUIRE_FALSE(entries.empty());
    for (const auto& e : entries) {
        CHECK(e.sm == 80);
        CHECK_FALSE(e.compressed());
    }
    auto check = check_cuda_arch(entries, "9.0", "libsm80.so");
    REQUIRE_FALSE(check);
    CHECK(check.error().code == ErrorCode::step_failed);
    CHECK_THAT(check.error().message, Catch::Contains("libsm80.so has no CUDA code for compute capability 9.0"));
    CHECK_THAT(check.error().message, Catch::Contains("it carries sm_80 SASS"));
    CHECK(check_cuda_arch(entries, "8.6", "libsm80.so"));
}

TEST_CASE("real nvcc output: compressed compute_90 PTX", "[inspect][fatbin][nvcc]") {
    const auto& lib = nvcc_lib("ptx90");
    auto entries = entries_of(lib);
    std::vector<FatbinEntry> ptx;
    for (const auto& e : entries)
        if (e.kind == FatbinKind::ptx) ptx.push_back(e);
    REQUIRE(ptx.size() == 1);
    CHECK(ptx[0].sm == 90);
    CHECK(ptx[0].compressed());
    CHECK(ptx[0].compression == FatbinCompression::zstd);
    CHECK(ptx[0].describe() == "compute_90 PTX (zstd-compressed)");
    CHECK(summarize(entries) == "compute_90 PTX");
    CHECK(check_cuda_arch(entries, "9.0", "libptx90.so"));
    CHECK(check_cuda_arch(entries, "12.0", "libptx90.so"));  // the driver JITs PTX forward
    CHECK_FALSE(check_cuda_arch(entries, "8.9", "libptx90.so"));
}
