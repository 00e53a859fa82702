#include <catch2/catch.hpp>

#include "core/sha256.hpp"
#include "pyenv/record.hpp"

using namespace bootstrap;

TEST_CASE("record_hash is PEP 376 urlsafe base64 without padding") {
    CHECK(pyenv::record_hash("") == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    CHECK(pyenv::record_hash("uv") == "sha256=5hhM4Q4mYTT9z6QB6PGpUAW81PGNFrYrdXMj4oM_6ak");
    CHECK(pyenv::record_hash_of_hex(core::sha256_hex("uv")) == pyenv::record_hash("uv"));
}

TEST_CASE("RECORD rows: quoted paths, empty hashes and sizes, CRLF line ends") {
    const auto rows = pyenv::parse_record(
        "six.py,sha256=abc,34549\r\n\"odd,name \"\"q\"\".py\",sha256=def,12\r\n\r\nsix-1.16.0.dist-info/RECORD,,\n"
        "../../../bin/tool,sha256=ghi,not-a-number");
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].path == "six.py");
    CHECK(rows[0].hash == "sha256=abc");
    CHECK(rows[0].size == std::optional<std::uint64_t>(34549));
    CHECK(rows[1].path == "odd,name \"q\".py");
    CHECK(rows[1].size == std::optional<std::uint64_t>(12));
    CHECK(rows[2].path == "six-1.16.0.dist-info/RECORD");
    CHECK(rows[2].hash.empty());
    CHECK_FALSE(rows[2].size);
    CHECK(rows[3].path == "../../../bin/tool");
    CHECK_FALSE(rows[3].size);
}
