#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "core/fs.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"
#include "rollback/uv_cache.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

std::string row(const std::string& path, const std::string& content) {
    return path + "," + pyenv::record_hash(content) + "," + std::to_string(content.size()) + "\n";
}

const std::string k_init = "X = 1\n";
const std::string k_tool = "#!/bin/sh\necho hi\n";
const std::string k_metadata = "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n";
const std::string k_wheel = "Wheel-Version: 1.0\nTag: py3-none-any\n";

/// uv's cache after installing demo-pkg 1.0 from an index: the unpacked wheel under
/// archive-v0/, linked from wheels-v8/index/<hash>/demo-pkg/1.0-py3-none-any; its RECORD in the
/// wheel's own order.
fs::path make_cache(const fs::path& root) {
    const fs::path cache = root / "uv-cache";
    const fs::path archive = cache / "archive-v0" / "AbC123";
    REQUIRE(core::write_file_atomic(archive / "demo_pkg" / "__init__.py", k_init));
    REQUIRE(core::write_file_atomic(archive / "demo_pkg" / "tool.sh", k_tool, 0755));
    REQUIRE(core::write_file_atomic(archive / "demo_pkg-1.0.dist-info" / "METADATA", k_metadata));
    REQUIRE(core::write_file_atomic(archive / "demo_pkg-1.0.dist-info" / "WHEEL", k_wheel));
    REQUIRE(core::write_file_atomic(archive / "demo_pkg-1.0.dist-info" / "RECORD",
                                    row("demo_pkg/__init__.py", k_init) + row("demo_pkg/tool.sh", k_tool) +
                                        row("demo_pkg-1.0.dist-info/METADATA", k_metadata) +
                                        row("demo_pkg-1.0.dist-info/WHEEL", k_wheel) +
                                        "demo_pkg-1.0.dist-info/RECORD,,\n"));
    const fs::path entries = cache / "wheels-v8" / "index" / "f24c2a7ca0424352" / "demo-pkg";
    fs::create_directories(entries);
    fs::create_directory_symlink("../../../../archive-v0/AbC123", entries / "1.0-py3-none-any");
    REQUIRE(core::write_file_atomic(entries / "1.0-py3-none-any.msgpack", "x"));
    REQUIRE(core::write_file_atomic(entries / "1.0-py3-none-any.http", "x"));
    fs::create_directories(cache / "wheels-v8" / "pypi" / "other");
    return cache;
}

/// RECORD as uv writes it for that install, rows sorted by path, spelt out here by hand.
std::string uv_record(bool requested) {
    return row("demo_pkg-1.0.dist-info/INSTALLER", "uv") + row("demo_pkg-1.0.dist-info/METADATA", k_metadata) +
           "demo_pkg-1.0.dist-info/RECORD,,\n" + (requested ? row("demo_pkg-1.0.dist-info/REQUESTED", "") : "") +
           row("demo_pkg-1.0.dist-info/WHEEL", k_wheel) + row("demo_pkg/__init__.py", k_init) +
           row("demo_pkg/tool.sh", k_tool);
}

manifest::Package target(bool requested) {
    manifest::Package p;
    p.name = "demo-pkg";
    p.display_name = "demo-pkg";
    p.version = "1.0";
    p.installer = "uv";
    p.requested = requested;
    p.record_sha256 = pyenv::record_text_digest(uv_record(requested));
    return p;
}

}  // namespace

TEST_CASE("uv_cache_dir follows uv: UV_CACHE_DIR, XDG_CACHE_HOME, HOME, none with UV_NO_CACHE") {
    using rollback::uv_cache_dir;
    CHECK(uv_cache_dir({{"UV_CACHE_DIR", "/c"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}) == fs::path("/c"));
    CHECK(uv_cache_dir({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}) == fs::path("/x/uv"));
    CHECK(uv_cache_dir({{"XDG_CACHE_HOME", "relative"}, {"HOME", "/h"}}) == fs::path("/h/.cache/uv"));
    CHECK_FALSE(uv_cache_dir({{"UV_NO_CACHE", "1"}, {"UV_CACHE_DIR", "/c"}}).has_value());
    CHECK(uv_cache_dir({{"UV_NO_CACHE", "0"}, {"UV_CACHE_DIR", "/c"}}) == fs::path("/c"));
    CHECK_FALSE(uv_cache_dir({}).has_value());
}

TEST_CASE("cached_wheels finds the unpacked wheel of a name and version only") {
    core::TempDir tmp("bs-uv-cache");
    const fs::path cache = make_cache(tmp.path());
    auto found = rollback::cached_wheels(cache, "demo-pkg", "1.0");
    REQUIRE(found.size() == 1);
    CHECK(found[0] == fs::canonical(cache / "archive-v0" / "AbC123"));
    CHECK(rollback::cached_wheels(cache, "demo-pkg", "1.0.1").empty());
    CHECK(rollback::cached_wheels(cache, "demo-pkg", "1").empty());
    CHECK(rollback::cached_wheels(cache, "other", "1.0").empty());
    CHECK(rollback::cached_wheels(tmp.path() / "no-cache", "demo-pkg", "1.0").empty());
}

TEST_CASE("a cached wheel restores exactly the target's RECORD, files linked with their modes") {
    core::TempDir tmp("bs-uv-cache");
    const fs::path cache = make_cache(tmp.path());
    const fs::path wheel = rollback::cached_wheels(cache, "demo-pkg", "1.0").at(0);
    for (bool requested : {true, false}) {
        INFO("requested " << requested);
        std::string why;
        const fs::path site = tmp.path() / (requested ? "site-a" : "site-b");
        const rollback::RestoreTarget where{site, tmp.path() / "bin", tmp.path() / "bin" / "python"};
        auto planned = rollback::plan_cached_restore(wheel, target(requested), where, why);
        REQUIRE(planned);
        REQUIRE(planned->has_value());
        CHECK((*planned)->record_text == uv_record(requested));

        REQUIRE(rollback::install_cached(**planned, where));
        auto scanned = pyenv::scan_site_packages(site);
        REQUIRE(scanned);
        REQUIRE(scanned->count("demo-pkg"));
        CHECK(pyenv::record_digest(scanned->at("demo-pkg")).value() == target(requested).record_sha256);
        CHECK(scanned->at("demo-pkg").requested == requested);
        CHECK(core::read_file(site / "demo_pkg" / "__init__.py").value() == k_init);
        struct stat st {};
        REQUIRE(::stat((site / "demo_pkg" / "tool.sh").c_str(), &st) == 0);
        CHECK((st.st_mode & 0111) != 0);
        // Linked from the cache, as uv does by default.
        struct stat cached {};
        REQUIRE(::stat((wheel / "demo_pkg" / "tool.sh").c_str(), &cached) == 0);
        CHECK(st.st_ino == cached.st_ino);
    }
    // UV_LINK_MODE=copy: copies, the same RECORD.
    std::string why;
    const rollback::RestoreTarget copy{tmp.path() / "site-c", tmp.path() / "bin", tmp.path() / "bin" / "python", false};
    auto planned = rollback::plan_cached_restore(wheel, target(true), copy, why);
    REQUIRE(planned);
    REQUIRE(planned->has_value());
    REQUIRE(rollback::install_cached(**planned, copy));
    struct stat copied {
    }, cached{};
    REQUIRE(::stat((copy.site_packages / "demo_pkg" / "tool.sh").c_str(), &copied) == 0);
    REQUIRE(::stat((wheel / "demo_pkg" / "tool.sh").c_str(), &cached) == 0);
    CHECK(copied.st_ino != cached.st_ino);
    CHECK((copied.st_mode & 0111) != 0);
    CHECK(core::read_file(copy.site_packages / "demo_pkg-1.0.dist-info" / "RECORD").value() == uv_record(true));
}

TEST_CASE("a cached wheel is refused unless it gives the target exactly") {
    core::TempDir tmp("bs-uv-cache");
    const fs::path cache = make_cache(tmp.path());
    const fs::path wheel = rollback::cached_wheels(cache, "demo-pkg", "1.0").at(0);
    auto refused = [&](const manifest::Package& p, const std::string& reason) {
        std::string why;
        const rollback::RestoreTarget where{tmp.path() / "site", tmp.path() / "bin", tmp.path() / "bin" / "python"};
        auto planned = rollback::plan_cached_restore(wheel, p, where, why);
        REQUIRE(planned);
        CHECK_FALSE(planned->has_value());
        CHECK(why.find(reason) != std::string::npos);
    };
    auto other = target(true);
    other.record_sha256 = target(false).record_sha256;  // the target had no REQUESTED
    refused(other, "differs from the target's");
    auto by_pip = target(true);
    by_pip.installer = "pip";
    refused(by_pip, "installed by 'pip'");

    // An entry point gives a script (and a RECORD row) the target's RECORD does not have.
    REQUIRE(core::write_file_atomic(wheel / "demo_pkg-1.0.dist-info" / "entry_points.txt",
                                    "[console_scripts]\ndemo = demo_pkg:main\n"));
    refused(target(true), "differs from the target's");
    REQUIRE(core::write_file_atomic(wheel / "demo_pkg-1.0.dist-info" / "entry_points.txt", "[console_scripts]\nbad\n"));
    refused(target(true), "cannot read");
    fs::remove(wheel / "demo_pkg-1.0.dist-info" / "entry_points.txt");

    fs::remove(wheel / "demo_pkg" / "tool.sh");  // a cache entry cut short
    refused(target(true), "demo_pkg/tool.sh is missing");
}
