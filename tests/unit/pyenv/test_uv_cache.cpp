// What uv's cache says of the wheels it downloaded (pyenv/uv_cache.hpp): the sha256 in a
// `.http` pointer, laid out as uv 0.13.9 writes it.
#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "pyenv/uv_cache.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

const std::string k_hex = "f02a1ffa8b187520f800f7fc985a421156fc553b44eaf870f119ed6589cabdd7";

/// A pointer as uv 0.13.9 wrote it for demo_core-1.0.0 (its first bytes; the HTTP cache policy
/// that follows is not read).
std::string pointer(const std::string& filename, const std::string& hex = k_hex) {
    std::string out = "\x95\xb0S5Y5MyvOSsSvjqis\x91\x81\xa6Sha256\xd9";
    out += static_cast<char>(hex.size());
    out += hex;
    out += "\xd9";
    out += static_cast<char>(filename.size());
    out += filename;
    out += std::string("\x00\xcd\x05\xe1\x00\x00", 6);
    return out;
}

}  // namespace

TEST_CASE("uv cache: a pointer's sha256 and file name, anything else read as nothing") {
    auto record = pyenv::parse_uv_wheel_pointer(pointer("demo_core-1.0.0-py3-none-any.whl"));
    REQUIRE(record);
    CHECK(record->sha256 == k_hex);
    CHECK(record->filename == "demo_core-1.0.0-py3-none-any.whl");
    // No hash computed (an empty array), a cut pointer, another layout: nothing.
    CHECK_FALSE(pyenv::parse_uv_wheel_pointer(std::string("\x95\xb0S5Y5MyvOSsSvjqis\x90\xd9\x05x.whl", 24)));
    CHECK_FALSE(pyenv::parse_uv_wheel_pointer(pointer("demo_core-1.0.0-py3-none-any.whl").substr(0, 60)));
    CHECK_FALSE(pyenv::parse_uv_wheel_pointer(pointer("demo_core-1.0.0.tar.gz")));
    CHECK_FALSE(pyenv::parse_uv_wheel_pointer(pointer("x-1.0-py3-none-any.whl", std::string(64, 'Z'))));
    CHECK_FALSE(pyenv::parse_uv_wheel_pointer(""));
}

TEST_CASE("uv cache: the records of a name and version under every wheels bucket") {
    core::TempDir tmp("bs-uv-records");
    const auto dir = tmp.path() / "wheels-v8" / "index" / "77f48757360f1707" / "demo-core";
    fs::create_directories(dir);
    REQUIRE(core::write_file_atomic(dir / "1.0.0-py3-none-any.http", pointer("demo_core-1.0.0-py3-none-any.whl")));
    REQUIRE(core::write_file_atomic(dir / "1.1.0-py3-none-any.http", pointer("demo_core-1.1.0-py3-none-any.whl")));
    REQUIRE(core::write_file_atomic(dir / "1.0.0-py3-none-any.msgpack", "not a pointer"));
    auto records = pyenv::uv_wheel_records(tmp.path(), "demo-core", "1.0.0");
    REQUIRE(records.size() == 1);
    CHECK(records[0].filename == "demo_core-1.0.0-py3-none-any.whl");
    CHECK(records[0].pointer == dir / "1.0.0-py3-none-any.http");
    CHECK(pyenv::uv_wheel_records(tmp.path(), "demo-utils", "1.0.0").empty());
    CHECK(pyenv::uv_wheel_records(tmp.path() / "missing", "demo-core", "1.0.0").empty());
}
