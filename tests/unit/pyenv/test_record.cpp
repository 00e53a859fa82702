#include <set>

#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "pyenv/record.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

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

TEST_CASE("record_paths and disown_paths: an extra gives up the rows of shared files") {
    core::TempDir tmp("bs-fixup");
    const fs::path di = tmp.path() / "full-1.0.dist-info";
    const std::string record =
        "full-1.0.dist-info/RECORD,,\n"
        "\"odd,name.py\",sha256=x,1\n"
        "../../../bin/shared-tool,sha256=b,2\n"
        "shared/./__init__.py,sha256=c,3\n"
        "shared/full_only.py,sha256=d,4\n";
    REQUIRE(core::write_file_atomic(di / "RECORD", record));

    auto paths = pyenv::record_paths(di);
    REQUIRE(paths);
    CHECK(*paths == std::set<std::string>{"../../../bin/shared-tool", "full-1.0.dist-info/RECORD", "odd,name.py",
                                          "shared/__init__.py", "shared/full_only.py"});

    const std::set<std::string> owned{"shared/__init__.py", "../../../bin/shared-tool", "lite/other.py"};
    auto dropped = pyenv::disown_paths(di, owned);
    REQUIRE(dropped);
    CHECK(*dropped == 2);
    CHECK(core::read_file(di / "RECORD").value() ==
          "full-1.0.dist-info/RECORD,,\n"
          "\"odd,name.py\",sha256=x,1\n"
          "shared/full_only.py,sha256=d,4\n");
    // Nothing shared: RECORD is left alone.
    CHECK(pyenv::disown_paths(di, {"lite/other.py"}).value() == 0);
    CHECK_FALSE(pyenv::record_paths(tmp.path() / "missing.dist-info"));
}
