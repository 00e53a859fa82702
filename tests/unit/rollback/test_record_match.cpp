#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"
#include "rollback/record_match.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

std::string row(const std::string& path, const std::string& content) {
    return path + "," + pyenv::record_hash(content) + "," + std::to_string(content.size()) + "\n";
}

const std::string k_store_url = R"({"url":"file:///store/ab/foo-1.0-py3-none-any.whl","archive_info":{}})";
const std::string k_built_url = R"({"url":"file:///build/dist/foo-1.0-py3-none-any.whl","archive_info":{}})";

/// A dist-info as uv leaves it after installing foo from the artifact store by path.
fs::path restored_dist_info(const fs::path& site) {
    const fs::path di = site / "foo-1.0.dist-info";
    REQUIRE(core::write_file_atomic(di / "INSTALLER", "uv\n"));
    REQUIRE(core::write_file_atomic(di / "REQUESTED", ""));
    REQUIRE(core::write_file_atomic(di / "uv_cache.json", "{\"timestamp\":1}"));
    REQUIRE(core::write_file_atomic(di / "direct_url.json", k_store_url));
    REQUIRE(core::write_file_atomic(site / "foo" / "__init__.py", "X = 1\n"));
    std::string record =
        row("foo-1.0.dist-info/INSTALLER", "uv\n") + "foo-1.0.dist-info/RECORD,,\n" +
        row("foo-1.0.dist-info/REQUESTED", "") + row("foo-1.0.dist-info/direct_url.json", k_store_url) +
        row("foo-1.0.dist-info/uv_cache.json", "{\"timestamp\":1}") + row("foo/__init__.py", "X = 1\n");
    REQUIRE(core::write_file_atomic(di / "RECORD", record));
    return di;
}

}  // namespace

TEST_CASE("match_record restores REQUESTED and the origin URL, uv_cache.json does not count") {
    core::TempDir tmp("bs-fixup");
    auto di = restored_dist_info(tmp.path());
    manifest::Package target;
    target.name = "foo";
    target.version = "1.0";
    target.origin.url = "file:///build/dist/foo-1.0-py3-none-any.whl";
    // The original: a dependency (no REQUESTED), installed from the build dir; uv's
    // uv_cache.json (the source wheel's ctime) is not part of the digest.
    const std::string original = row("foo-1.0.dist-info/INSTALLER", "uv\n") + "foo-1.0.dist-info/RECORD,,\n" +
                                 row("foo-1.0.dist-info/direct_url.json", k_built_url) +
                                 row("foo/__init__.py", "X = 1\n");
    target.record_sha256 = pyenv::record_text_digest(original);

    auto matched = rollback::match_record(di, target);
    REQUIRE(matched);
    CHECK(*matched);
    CHECK(core::read_file(di / "RECORD").value() ==
          row("foo-1.0.dist-info/INSTALLER", "uv\n") + "foo-1.0.dist-info/RECORD,,\n" +
              row("foo-1.0.dist-info/direct_url.json", k_built_url) +
              row("foo-1.0.dist-info/uv_cache.json", "{\"timestamp\":1}") + row("foo/__init__.py", "X = 1\n"));
    CHECK(core::read_file(di / "direct_url.json").value() == k_built_url);
    CHECK_FALSE(fs::exists(di / "REQUESTED"));
    CHECK(pyenv::record_text_digest(core::read_file(di / "RECORD").value()) == target.record_sha256);
    // Already matching: nothing to do.
    CHECK(rollback::match_record(di, target).value());
}

TEST_CASE("match_record adds REQUESTED in sorted position") {
    core::TempDir tmp("bs-fixup");
    auto di = restored_dist_info(tmp.path());
    fs::remove(di / "REQUESTED");
    std::string record = core::read_file(di / "RECORD").value();
    const std::string requested_row = row("foo-1.0.dist-info/REQUESTED", "");
    auto at = record.find(requested_row);
    REQUIRE(at != std::string::npos);
    const std::string with_requested = record;
    record.erase(at, requested_row.size());
    REQUIRE(core::write_file_atomic(di / "RECORD", record));
    manifest::Package target;
    target.record_sha256 = pyenv::record_text_digest(with_requested);
    CHECK(rollback::match_record(di, target).value());
    CHECK(fs::exists(di / "REQUESTED"));
    CHECK(core::read_file(di / "RECORD").value() == with_requested);
}

TEST_CASE("match_record changes nothing when no variation matches") {
    core::TempDir tmp("bs-fixup");
    auto di = restored_dist_info(tmp.path());
    const std::string before = core::read_file(di / "RECORD").value();
    manifest::Package target;
    target.origin.url = "file:///elsewhere.whl";
    target.record_sha256 = core::sha256_hex("something else entirely");
    auto matched = rollback::match_record(di, target);
    REQUIRE(matched);
    CHECK_FALSE(*matched);
    CHECK(core::read_file(di / "RECORD").value() == before);
    CHECK(fs::exists(di / "REQUESTED"));
    CHECK(fs::exists(di / "uv_cache.json"));
    CHECK(core::read_file(di / "direct_url.json").value() == k_store_url);
}

TEST_CASE("match_record drops direct_url.json when the target was installed without a URL") {
    // Restored by path from the artifact store or a --find-links directory; the original came
    // from an index or through --find-links, and had no direct_url.json.
    core::TempDir tmp("bs-fixup");
    auto di = restored_dist_info(tmp.path());
    const std::string original = row("foo-1.0.dist-info/INSTALLER", "uv\n") + "foo-1.0.dist-info/RECORD,,\n" +
                                 row("foo-1.0.dist-info/REQUESTED", "") +
                                 row("foo-1.0.dist-info/uv_cache.json", "{\"timestamp\":1}") +
                                 row("foo/__init__.py", "X = 1\n");
    manifest::Package target;
    target.origin.kind = bootstrap::manifest::OriginKind::index;
    target.record_sha256 = pyenv::record_text_digest(original);

    SECTION("applied when it makes RECORD match") {
        CHECK(rollback::match_record(di, target).value());
        CHECK_FALSE(fs::exists(di / "direct_url.json"));
        CHECK(core::read_file(di / "RECORD").value() == original);
    }
    SECTION("never for a target that records a URL") {
        target.origin.url = "file:///build/dist/foo-1.0-py3-none-any.whl";
        CHECK_FALSE(rollback::match_record(di, target).value());
        CHECK(fs::exists(di / "direct_url.json"));
    }
}
