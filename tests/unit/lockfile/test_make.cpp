#include <catch2/catch.hpp>

#include <filesystem>

#include "core/fs.hpp"
#include "lockfile/index_page.hpp"
#include "lockfile/make.hpp"
#include "manifest/lockfile.hpp"

using namespace bootstrap;

namespace {

/// A trimmed copy of a real PyPI project page (tests/data/index/), parsed.
std::vector<lockfile::IndexFile> page(const std::string& file, const std::string& content_type) {
    auto text = core::read_file(std::filesystem::path(BS_TEST_DATA) / "index" / file);
    REQUIRE(text.has_value());
    auto files = lockfile::parse_index_page(*text, content_type, "https://pypi.org/simple/x/");
    REQUIRE(files.has_value());
    return *files;
}

manifest::Package installed(std::string name, std::string display, std::string version, std::string tags) {
    manifest::Package p;
    p.name = std::move(name);
    p.display_name = std::move(display);
    p.version = std::move(version);
    p.wheel_tag = std::move(tags);
    return p;
}

std::string matched(const std::vector<lockfile::IndexFile>& files, const manifest::Package& pkg) {
    auto f = lockfile::find_installed_wheel(files, pkg, "https://pypi.org/simple/x/");
    INFO((f ? "" : f.error().message));
    REQUIRE(f.has_value());
    return f->filename + " " + f->sha256;
}

std::string mismatch(const std::vector<lockfile::IndexFile>& files, const manifest::Package& pkg) {
    auto f = lockfile::find_installed_wheel(files, pkg, "https://pypi.org/simple/x/");
    REQUIRE_FALSE(f.has_value());
    return f.error().message;
}

const char* const k_json = "application/vnd.pypi.simple.v1+json";

}  // namespace

TEST_CASE("project pages are asked for by PEP 503 name, with the trailing slash") {
    CHECK(lockfile::project_page_url("https://pypi.org/simple", "Pygments") == "https://pypi.org/simple/pygments/");
    CHECK(lockfile::project_page_url("https://pypi.org/simple/", "charset_normalizer") ==
          "https://pypi.org/simple/charset-normalizer/");
}

TEST_CASE("the installed wheel is found by name, PEP 440 version and tag set, not by file name") {
    for (auto type : {k_json, "text/html"}) {
        INFO(type);
        std::string ext = type == k_json ? ".json" : ".html";
        // PyPI lists "pygments-2.18.0-...", METADATA says "Pygments".
        auto pygments = page("pygments" + ext, type);
        CHECK(matched(pygments, installed("pygments", "Pygments", "2.18.0", "py3-none-any")) ==
              "pygments-2.18.0-py3-none-any.whl "
              "b8e6aca0523f3ab76fee51799c488e38782ac06eafcf95e7ba832985c8e7b13a");
        CHECK(matched(pygments, installed("pygments", "Pygments", "2.0.2", "py3-none-any")) ==
              "Pygments-2.0.2-py3-none-any.whl "
              "5ded2fa9094fd7dfeb3da92636409fd702a0d07d606283504d7ee04401cee5cb");
        CHECK(matched(pygments, installed("pygments", "Pygments", "2.18", "py3-none-any"))
                  .starts_with("pygments-2.18.0-py3-none-any.whl "));  // PEP 440: 2.18 == 2.18.0

        // WHEEL's Tag lines come in another order than the file name's compressed set.
        auto charset = page("charset-normalizer" + ext, type);
        CHECK(matched(charset, installed("charset-normalizer", "charset-normalizer", "3.5.3",
                                         "cp311-cp311-manylinux_2_5_x86_64,cp311-cp311-manylinux1_x86_64,"
                                         "cp311-cp311-manylinux_2_28_x86_64")) ==
              "charset_normalizer-3.5.3-cp311-cp311-manylinux1_x86_64.manylinux_2_28_x86_64."
              "manylinux_2_5_x86_64.whl "
              "2a6f937e0b70133d1f826d0a253331b6fe1a4c874808cc12e16f2fb8177042f4");
        CHECK(matched(charset, installed("charset-normalizer", "charset_normalizer", "3.4.1",
                                         "cp311-cp311-manylinux2014_x86_64,cp311-cp311-manylinux_2_17_x86_64")) ==
              "charset_normalizer-3.4.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl "
              "fd4ec41f914fa74ad1b8304bbc634b3de73d2a0889bd32076342a573e0779e00");
        // A yanked file is still the one that was installed.
        CHECK(matched(charset, installed("charset-normalizer", "charset-normalizer", "3.4.8",
                                         "cp311-cp311-manylinux_2_17_x86_64,cp311-cp311-manylinux2014_x86_64,"
                                         "cp311-cp311-manylinux_2_28_x86_64"))
                  .starts_with("charset_normalizer-3.4.8-cp311-cp311-manylinux2014_x86_64."));
    }
}

TEST_CASE("a WHEEL file whose tags disagree with its file name: the one wheel for its platform") {
    // PyPI's page for transformer-engine-cu13 (2.14.0 and 2.14.1): its 2.14.1 x86_64 wheel is
    // py3-none-manylinux_2_28_x86_64, but the WHEEL file inside says cp310-cp310 (seen on a
    // real install by scripts/realworld.sh).
    auto te = page("transformer-engine-cu13.json", k_json);
    CHECK(matched(te, installed("transformer-engine-cu13", "transformer_engine_cu13", "2.14.1",
                                "cp310-cp310-manylinux_2_28_x86_64"))
              .starts_with("transformer_engine_cu13-2.14.1-py3-none-manylinux_2_28_x86_64.whl "));
    // Another platform has no such wheel: still a mismatch, naming the closest.
    CHECK_THAT(mismatch(te, installed("transformer-engine-cu13", "transformer_engine_cu13", "2.14.1",
                                      "cp310-cp310-manylinux_2_28_ppc64le")),
               Catch::StartsWith("no wheel of transformer-engine-cu13 2.14.1 with tags"));
}

TEST_CASE("no match names the package, version, tags and page, and the closest wheels") {
    auto charset = page("charset-normalizer.json", k_json);
    // A subset of the file's tags is not the same wheel.
    CHECK(mismatch(charset, installed("charset-normalizer", "charset-normalizer", "3.4.1",
                                      "cp311-cp311-manylinux_2_17_x86_64")) ==
          "no wheel of charset-normalizer 3.4.1 with tags {cp311-cp311-manylinux_2_17_x86_64} on "
          "https://pypi.org/simple/x/; closest wheels of 3.4.1 there: "
          "charset_normalizer-3.4.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl, "
          "charset_normalizer-3.4.1-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl, "
          "charset_normalizer-3.4.1-cp311-cp311-musllinux_1_2_aarch64.whl, "
          "charset_normalizer-3.4.1-cp311-cp311-musllinux_1_2_x86_64.whl");
    CHECK(mismatch(charset, installed("charset-normalizer", "charset-normalizer", "3.5.3", "cp312-cp312-win_amd64"))
              .ends_with("; closest wheels of 3.5.3 there: "
                         "charset_normalizer-3.5.3-cp311-cp311-manylinux1_x86_64.manylinux_2_28_"
                         "x86_64.manylinux_2_5_x86_64.whl, "
                         "charset_normalizer-3.5.3-cp311-cp311-manylinux2014_aarch64.manylinux_2_"
                         "17_aarch64.manylinux_2_28_aarch64.whl, "
                         "charset_normalizer-3.5.3-cp311-cp311-manylinux2014_armv7l.manylinux_2_17_"
                         "armv7l.manylinux_2_31_armv7l.whl, "
                         "charset_normalizer-3.5.3-cp311-cp311-manylinux2014_ppc64le.manylinux_2_"
                         "17_ppc64le.manylinux_2_28_ppc64le.whl, "
                         "charset_normalizer-3.5.3-cp311-cp311-manylinux2014_s390x.manylinux_2_17_"
                         "s390x.manylinux_2_28_s390x.whl "
                         "(and 1 more)"));
    auto pygments = page("pygments.json", k_json);
    CHECK(mismatch(pygments, installed("pygments", "Pygments", "2.19.0", "py3-none-any")) ==
          "no wheel of pygments 2.19.0 with tags {py3-none-any} on https://pypi.org/simple/x/: it "
          "lists no wheel "
          "of version 2.19.0 (6 files)");
    CHECK(mismatch(pygments, installed("pygments", "Pygments", "2.18.0", "")) ==
          "pygments 2.18.0: its dist-info has no WHEEL tags to match against "
          "https://pypi.org/simple/x/");
    CHECK(mismatch(pygments, installed("pygments", "Pygments", "2.18.0", "py3-none")) ==
          "pygments 2.18.0: its WHEEL file has a bad tag: 'py3-none' is not a wheel tag "
          "(python-abi-platform)");
}

TEST_CASE("closest wheels: shared tags first, then shared python, abi and platform tags") {
    std::string h(64, 'a');
    std::vector<lockfile::IndexFile> files{
        {"demo-1.0-cp310-cp310-macosx_11_0_arm64.whl", "u", h, false},
        {"demo-1.0-cp310-cp310-manylinux_2_17_x86_64.whl", "u", h, false},
        {"demo-1.0-cp311-cp311-musllinux_1_2_x86_64.whl", "u", h, false},
        {"demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux_2_34_x86_64.whl", "u", h, false},
        {"demo-2.0-cp311-cp311-manylinux_2_17_x86_64.whl", "u", h, false}};
    CHECK(mismatch(files, installed("demo", "demo", "1.0", "cp311-cp311-manylinux_2_17_x86_64")) ==
          "no wheel of demo 1.0 with tags {cp311-cp311-manylinux_2_17_x86_64} on "
          "https://pypi.org/simple/x/; closest wheels of 1.0 there: "
          "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux_2_34_x86_64.whl, "
          "demo-1.0-cp311-cp311-musllinux_1_2_x86_64.whl, "
          "demo-1.0-cp310-cp310-manylinux_2_17_x86_64.whl, "
          "demo-1.0-cp310-cp310-macosx_11_0_arm64.whl");
}

TEST_CASE("wheels that differ only by build tag must be the same bytes") {
    std::string a(64, 'a'), b(64, 'b');
    std::vector<lockfile::IndexFile> files{{"demo-1.0-1-py3-none-any.whl", "u1", a, false},
                                           {"demo-1.0-2-py3-none-any.whl", "u2", a, false}};
    auto pkg = installed("demo", "demo", "1.0", "py3-none-any");
    CHECK(matched(files, pkg) == "demo-1.0-1-py3-none-any.whl " + a);
    files[1].sha256 = b;
    CHECK(mismatch(files, pkg) ==
          "demo 1.0: several different wheels with tags {py3-none-any} on "
          "https://pypi.org/simple/x/: "
          "demo-1.0-1-py3-none-any.whl, demo-1.0-2-py3-none-any.whl");
}

TEST_CASE("locked requirements pin with hashes, drift is named") {
    const std::string aa(64, 'a'), bb(64, 'b');
    manifest::LockedPackage a{"demo-core", "1.0.0", "demo_core-1.0.0-py3-none-any.whl", aa, {}};
    manifest::LockedPackage b{"local-pkg", "0.1", "local_pkg-0.1-py3-none-any.whl", bb, {}};
    auto text = manifest::locked_requirements({&a, &b}, {{"local-pkg", "/store/local_pkg-0.1-py3-none-any.whl"}});
    CHECK(text.value() == "demo-core==1.0.0 --hash=sha256:" + aa +
                              "\n/store/local_pkg-0.1-py3-none-any.whl --hash=sha256:" + bb + "\n");

    manifest::Lockfile lock;
    lock.packages["demo-core"] = a;
    lock.packages["wandb"] = {"wandb", "0.22.0", "", "", {}};
    manifest::Manifest venv;
    venv.packages["demo-core"].version = "2.0.0";
    venv.packages["regex"].version = "2024.1.0";
    auto drift = manifest::lock_drift(lock, venv);
    REQUIRE(drift.size() == 3);
    CHECK(drift[0] == "demo-core is 2.0.0, locked 1.0.0");
    CHECK(drift[1] == "regex 2024.1.0 is installed but not locked");
    CHECK(drift[2] == "wandb 0.22.0 is locked but not installed");
}

TEST_CASE("the default lockfile sits in lockfiles/ beside the recipe, or beside its directory") {
    core::TempDir tmp("bs-lockpath");
    recipe::Recipe r;
    r.name = "demo";
    r.file = tmp.path() / "recipes" / "demo.toml";
    // Neither exists: beside the recipe (created when written).
    CHECK(lockfile::default_lockfile_path(r) == tmp.path() / "recipes" / "lockfiles" / "demo.lock.json");
    // A project's recipes/ beside its lockfiles/.
    std::filesystem::create_directories(tmp.path() / "lockfiles");
    CHECK(lockfile::default_lockfile_path(r) == tmp.path() / "lockfiles" / "demo.lock.json");
    // The recipe's own lockfiles/ wins.
    std::filesystem::create_directories(tmp.path() / "recipes" / "lockfiles");
    CHECK(lockfile::default_lockfile_path(r) == tmp.path() / "recipes" / "lockfiles" / "demo.lock.json");
}
