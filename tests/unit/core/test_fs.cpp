#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "core/sha256.hpp"

#include <sys/stat.h>

using namespace bootstrap::core;

TEST_CASE("write_file_atomic writes and leaves no temporaries") {
    TempDir dir("bs-test");
    auto p = dir.path() / "sub" / "f.json";
    REQUIRE(write_file_atomic(p, "hello"));
    CHECK(read_file(p).value() == "hello");
    REQUIRE(write_file_atomic(p, "again"));
    CHECK(read_file(p).value() == "again");
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(p.parent_path())) ++entries;
    CHECK(entries == 1);
}

TEST_CASE("read_file names the missing path") {
    auto r = read_file("/nonexistent/x");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::not_found);
    CHECK(r.error().message.find("/nonexistent/x") != std::string::npos);
}

TEST_CASE("sha256 of a known string") {
    CHECK(sha256_hex("abc") ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("read_regular_file refuses FIFOs, devices, directories and large files at once") {
    TempDir dir("bs-test");
    auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    auto r = read_regular_file(fifo, 1024);  // no writer: a plain open would block forever
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::io);
    CHECK(r.error().message == "cannot read " + fifo.string() + ": not a regular file (a FIFO)");

    auto zero = dir.path() / "zero";
    fs::create_symlink("/dev/zero", zero);
    r = read_regular_file(zero, 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          "cannot read " + zero.string() + ": not a regular file (a character device)");

    r = read_regular_file(dir.path(), 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not a regular file (a directory)") != std::string::npos);

    auto big = dir.path() / "big";
    REQUIRE(write_file_atomic(big, std::string(2048, 'x')));
    r = read_regular_file(big, 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "cannot read " + big.string() + ": larger than 1.0 KiB (2.0 KiB)");
    CHECK(read_regular_file(big, 2048).value() == std::string(2048, 'x'));

    r = read_regular_file(dir.path() / "missing", 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::not_found);
}

TEST_CASE("format_size") {
    CHECK(format_size(900) == "900 bytes");
    CHECK(format_size(64ull << 20) == "64 MiB");
    CHECK(format_size(70ull << 20) == "70 MiB");
    CHECK(format_size((3ull << 20) / 2) == "1.5 MiB");
    CHECK(format_size(3ull << 30) == "3.0 GiB");
}

TEST_CASE("write_file_exclusive never replaces a file") {
    TempDir dir("bs-test");
    auto p = dir.path() / "sub" / "entry.json";
    bool exists = true;
    REQUIRE(write_file_exclusive(p, "first", &exists));
    CHECK_FALSE(exists);
    auto again = write_file_exclusive(p, "second", &exists);
    REQUIRE_FALSE(again);
    CHECK(exists);
    CHECK(again.error().message == "cannot create " + p.string() + ": it already exists");
    CHECK(read_file(p).value() == "first");
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(p.parent_path())) ++entries;
    CHECK(entries == 1);  // no temporaries left behind
}
