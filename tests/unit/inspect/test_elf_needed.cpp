// DT_NEEDED entries, read from real libraries built with the host's cc.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../cc.hpp"
#include "../skip.hpp"
#include "core/fs.hpp"
#include "exec/process.hpp"
#include "inspect/elf_needed.hpp"

using bootstrap::ErrorCode;
using bootstrap::core::TempDir;
using bootstrap::inspect::read_needed_libraries;

using bs_test::cc;

namespace {}  // namespace

TEST_CASE("read_needed_libraries lists DT_NEEDED in order", "[elf_needed]") {
    TempDir dir("elfneeded");
    REQUIRE(bootstrap::core::write_file_atomic(dir.path() / "c10.c", "int c10_answer(void) { return 42; }\n"));
    REQUIRE(bootstrap::core::write_file_atomic(
        dir.path() / "ext.c", "extern int c10_answer(void);\nint ext(void) { return c10_answer(); }\n"));
    auto c10 = dir.path() / "libc10.so", ext = dir.path() / "ext.so";
    if (!cc({"-shared", "-fPIC", "-o", c10.string(), (dir.path() / "c10.c").string()}))
        BS_SKIP("no C compiler (cc) on PATH");
    REQUIRE(cc({"-shared", "-fPIC", "-o", ext.string(), (dir.path() / "ext.c").string(), "-L" + dir.path().string(),
                "-lc10", "-Wl,--no-as-needed"}));
    auto needed = read_needed_libraries(ext);
    REQUIRE(needed);
    REQUIRE_FALSE(needed->empty());
    CHECK(needed->front() == "libc10.so");
    // The library itself needs no libc10.
    auto own = read_needed_libraries(c10);
    REQUIRE(own);
    for (const auto& n : *own) CHECK(n != "libc10.so");
}

TEST_CASE("read_needed_libraries: an object without a dynamic section, a non-ELF file", "[elf_needed]") {
    TempDir dir("elfneeded");
    REQUIRE(bootstrap::core::write_file_atomic(dir.path() / "a.c", "int a(void) { return 1; }\n"));
    auto obj = dir.path() / "a.o";
    if (!cc({"-c", "-o", obj.string(), (dir.path() / "a.c").string()})) BS_SKIP("no C compiler (cc) on PATH");
    auto none = read_needed_libraries(obj);
    REQUIRE(none);
    CHECK(none->empty());

    REQUIRE(bootstrap::core::write_file_atomic(dir.path() / "text.so", "not an ELF file\n"));
    auto bad = read_needed_libraries(dir.path() / "text.so");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::io);
    CHECK(bad.error().message.find("text.so") != std::string::npos);
}
