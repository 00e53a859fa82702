// A sealed venv's fixed point (engine/image_state.hpp): the journal's venv state is a content
// digest, which a copy of the venv (an image layer) keeps, where a digest of RECORD stat stamps
// does not.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>

#include "core/fs.hpp"
#include "engine/image_state.hpp"
#include "engine/skip_rule.hpp"
#include "pyenv/dist_info.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

/// A site-packages holding demo 1.0 (RECORD `record`) and other 2.0.
fs::path site(const fs::path& root, const std::string& record) {
    const fs::path s = root / "lib/python3.11/site-packages";
    write(s / "demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
    write(s / "demo-1.0.dist-info/RECORD", record);
    write(s / "other-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: other\nVersion: 2.0\n");
    write(s / "other-2.0.dist-info/RECORD", "other/__init__.py,,\n");
    return s;
}

}  // namespace

TEST_CASE("a content state holds in a copy of the venv where the stat state does not", "[image_state]") {
    core::TempDir dir;
    const std::string record = "demo/__init__.py,sha256=abc,3\ndemo-1.0.dist-info/RECORD,,\n";
    auto a = pyenv::scan_site_packages(site(dir.path() / "a", record));
    REQUIRE(a);
    // The copy: same bytes, other inodes and mtimes (as an image layer gives them).
    const fs::path b_site = site(dir.path() / "b", record);
    fs::last_write_time(b_site / "demo-1.0.dist-info/RECORD",
                        fs::file_time_type::clock::now() - std::chrono::hours(24 * 365));
    auto b = pyenv::scan_site_packages(b_site);
    REQUIRE(b);
    CHECK(engine::installed_state(*a) != engine::installed_state(*b));
    auto ca = engine::content_state(*a);
    auto cb = engine::content_state(*b);
    REQUIRE(ca);
    REQUIRE(cb);
    CHECK(*ca == *cb);
    CHECK(engine::is_content_state(*ca));
    CHECK_FALSE(engine::is_content_state(engine::installed_state(*a)));

    // Another RECORD (a reinstalled or changed distribution): another content state.
    auto c = pyenv::scan_site_packages(site(dir.path() / "c", "demo/__init__.py,sha256=xyz,3\n"));
    REQUIRE(c);
    CHECK(*engine::content_state(*c) != *ca);
}

TEST_CASE("the sealed marker records the image build's time when the seal had one", "[image_state]") {
    core::TempDir dir;
    const fs::path venv = dir.path() / "venv";
    fs::create_directories(venv / ".bootstrap");
    CHECK_FALSE(engine::is_sealed(venv));
    CHECK_FALSE(engine::sealed_build_time(venv));
    write(engine::sealed_marker(venv), engine::sealed_marker_text("1970-01-01T00:00:00Z"));
    CHECK(engine::is_sealed(venv));
    CHECK(engine::sealed_build_time(venv) == std::optional<std::string>("1970-01-01T00:00:00Z"));
    write(engine::sealed_marker(venv), engine::sealed_marker_text(std::nullopt));
    CHECK(engine::is_sealed(venv));
    CHECK_FALSE(engine::sealed_build_time(venv));
    REQUIRE(engine::unseal(venv));
    CHECK_FALSE(engine::is_sealed(venv));
    CHECK(engine::unseal(venv));  // already gone: fine
}
