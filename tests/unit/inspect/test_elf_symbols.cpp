#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "../cc.hpp"
#include "../skip.hpp"
#include "core/fs.hpp"
#include "exec/process.hpp"
#include "inspect/elf_symbols.hpp"

using bootstrap::ErrorCode;
using bootstrap::core::TempDir;
using namespace bootstrap::inspect;

namespace {

/// Build a shared library from C source with the host compiler; empty path when there is none.
std::filesystem::path build_so(const TempDir& dir, const std::string& source, const std::string& version_script) {
    auto src = dir.path() / "lib.c";
    auto map = dir.path() / "lib.map";
    auto out = dir.path() / "libdemo.so.13";
    REQUIRE(bootstrap::core::write_file_atomic(src, source));
    REQUIRE(bootstrap::core::write_file_atomic(map, version_script));
    if (!bs_test::cc({"-shared", "-fPIC", "-o", out.string(), src.string(), "-Wl,--version-script=" + map.string()}))
        return {};
    return out;
}

}  // namespace

TEST_CASE("read_dynamic_symbols lists defined symbols with their version", "[elf_symbols]") {
    TempDir dir("elfsym");
    auto so = build_so(dir,
                       "extern int puts(const char*);\n"
                       "int cublasLtGroupedMatrixLayoutInit_internal(void) { return puts(\"x\"); }\n"
                       "int other_symbol(void) { return 2; }\n",
                       "libdemo.so.13 { global: cublasLt*; other_symbol; local: *; };\n");
    if (so.empty()) BS_SKIP("no C compiler (cc) on PATH");
    auto symbols = read_dynamic_symbols(so);
    REQUIRE(symbols);
    const auto* found = find_defined(*symbols, "cublasLtGroupedMatrixLayoutInit_internal");
    REQUIRE(found != nullptr);
    CHECK(found->version == "libdemo.so.13");
    CHECK(find_defined(*symbols, "other_symbol") != nullptr);
    CHECK(find_defined(*symbols, "missing_symbol") == nullptr);
    // puts is referenced, not defined: listed, but never "found".
    bool puts_listed = false;
    for (const auto& s : *symbols)
        if (s.name == "puts") puts_listed = !s.defined;
    CHECK(puts_listed);
    CHECK(find_defined(*symbols, "puts") == nullptr);
}

TEST_CASE("read_dynamic_symbols rejects what is not ELF", "[elf_symbols]") {
    TempDir dir("elfsym");
    auto text = dir.path() / "notelf.so";
    REQUIRE(bootstrap::core::write_file_atomic(text, "hello"));
    auto r = read_dynamic_symbols(text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::io);
    CHECK(r.error().message.find("not an ELF") != std::string::npos);
    auto missing = read_dynamic_symbols(dir.path() / "nope.so");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("nope.so") != std::string::npos);
}

TEST_CASE("read_dynamic_symbols rejects a truncated library", "[elf_symbols]") {
    auto whole = bootstrap::core::read_file("/proc/self/exe");
    REQUIRE(whole);
    TempDir dir("elfsym");
    auto cut = dir.path() / "libcut.so";
    REQUIRE(bootstrap::core::write_file_atomic(cut, std::string_view(*whole).substr(0, whole->size() / 3)));
    auto r = read_dynamic_symbols(cut);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::io);
    CHECK(r.error().message.find(cut.string() + " is truncated or corrupt: ") == 0);
}

TEST_CASE("read_dynamic_symbols ends on a version-definition chain that loops", "[elf_symbols]") {
    // Found by the elf fuzz target: sh_info claims 1.9e9 definitions and a vd_next of -28 sent
    // the walk back to the first entry through an int cast; it took ~80 s per file.
    const std::filesystem::path file = BS_FUZZ_CORPUS "/elf/verdef-cycle.so";
    REQUIRE(std::filesystem::is_regular_file(file));
    auto start = std::chrono::steady_clock::now();
    auto r = read_dynamic_symbols(file);
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 10.0);  // generous for a loaded machine; the walk is bounded by the data now
    if (r)
        for (const auto& s : *r) CHECK(s.name.size() < 4096);
}
