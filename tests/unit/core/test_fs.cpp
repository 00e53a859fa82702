#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "core/sha256.hpp"

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
