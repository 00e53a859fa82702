// A package installed from its sdist: PEP 751's [packages.sdist] is read (uv writes one for a
// package without a wheel) and written (bootstrap's lock of such a package), both ways with the
// wheel built from it; a --locked run pins the sdist's sha256; a bad sdist entry is refused at
// its line. The JSON lock keeps the same.
#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "lockfile/pylock.hpp"
#include "manifest/lockfile.hpp"
#include "pyenv/sdist_name.hpp"
#include "pyenv/uv_sdist_cache.hpp"
#include "steps/pylock_data.hpp"

namespace fs = std::filesystem;
using namespace bootstrap;
using manifest::Lockfile;

namespace {

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');

Result<Lockfile> parse(const std::string& text) { return lockfile::parse_pylock(text, "/l/pylock.toml"); }

std::string problems(const std::string& text) {
    auto lock = parse(text);
    REQUIRE_FALSE(lock.has_value());
    return lock.error().message + "\n" + lock.error().detail;
}

const std::string k_head = "lock-version = \"1.0\"\ncreated-by = \"uv\"\n";

/// The lock of a venv whose docopt was built from its sdist.
Lockfile sdist_lock() {
    Lockfile lock;
    lock.recipe_name = "r";
    lock.recipe_digest = std::string(64, 'd');
    lock.python_version = "3.11.7";
    manifest::Origin origin;
    origin.kind = manifest::OriginKind::index;
    origin.step = "deps";
    origin.index_urls = {"https://pypi.org/simple"};
    manifest::LockedPackage p{"docopt", "0.6.2", "", k_sha_a, origin};
    p.url = "https://files.pythonhosted.org/packages/a2/55/docopt-0.6.2.tar.gz";
    p.index = "https://pypi.org/simple";
    p.hash_source = "uv-cache";
    p.sdist = "docopt-0.6.2.tar.gz";
    p.built_wheel = "docopt-0.6.2-py2.py3-none-any.whl";
    p.built_sha256 = k_sha_b;
    lock.packages["docopt"] = p;
    lock.steps["deps"] = {true, false, "", {"docopt"}};
    return lock;
}

}  // namespace

TEST_CASE("sdist names: old and PEP 625 spellings of one release, nothing else") {
    CHECK(pyenv::is_sdist_of("docopt-0.6.2.tar.gz", "docopt", "0.6.2"));
    CHECK(pyenv::is_sdist_of("Django-1.0.zip", "django", "1.0.0"));
    CHECK(pyenv::is_sdist_of("flash_attn-2.8.3.tar.gz", "flash-attn", "2.8.3"));
    CHECK(pyenv::is_sdist_of("mamba-ssm-2.2.4.tar.gz", "mamba_ssm", "2.2.4"));
    CHECK_FALSE(pyenv::is_sdist_of("docopt-0.6.1.tar.gz", "docopt", "0.6.2"));
    CHECK_FALSE(pyenv::is_sdist_of("docopt-0.6.2-py3-none-any.whl", "docopt", "0.6.2"));
    CHECK_FALSE(pyenv::is_sdist_of("docopt-0.6.2.tar.bz", "docopt", "0.6.2"));
    CHECK_FALSE(pyenv::is_sdist_of("x/docopt-0.6.2.tar.gz", "docopt", "0.6.2"));
    CHECK(pyenv::is_sdist_file_name("a-1.zip"));
    CHECK_FALSE(pyenv::is_sdist_file_name(".tar.gz"));
}

TEST_CASE("pylock sdist: uv's sdist-only package reads as one installed from that sdist") {
    auto lock = parse(k_head +
                      "requires-python = \">=3.11\"\n"
                      "\n[[packages]]\n"  // 4, 5
                      "name = \"tinysd\"\nversion = \"0.1.0\"\n"
                      "sdist = { url = \"http://127.0.0.1:8765/files/tinysd-0.1.0.tar.gz\", hashes = { sha256 = \"" +
                      std::string(64, 'A') + "\" } }\n");  // 8
    INFO((lock ? "" : lock.error().message + "\n" + lock.error().detail));
    REQUIRE(lock);
    CHECK(lock->foreign_tool == "uv");
    const auto& p = lock->packages.at("tinysd");
    CHECK(p.sdist == "tinysd-0.1.0.tar.gz");
    CHECK(p.sha256 == k_sha_a);
    CHECK(p.url == "http://127.0.0.1:8765/files/tinysd-0.1.0.tar.gz");
    CHECK(p.wheel.empty());
    CHECK(p.at == "/l/pylock.toml:8");
    // A locked run pins it by version with the sdist's sha256: the installer checks its bytes.
    auto text = manifest::locked_requirements({&p}, {});
    REQUIRE(text);
    CHECK(*text == "tinysd==0.1.0 --hash=sha256:" + k_sha_a + "\n");
}

TEST_CASE("pylock sdist: a table with name, size, upload-time and a relative path, and beside wheels") {
    auto lock = lockfile::parse_pylock(k_head +
                                           "[[packages]]\nname = \"a\"\nversion = \"1.0\"\n"
                                           "[packages.sdist]\nname = \"a-1.0.tar.gz\"\npath = \"dist/a-1.0.tar.gz\"\n"
                                           "size = 1234\nupload-time = 2025-03-01T10:00:00Z\n"
                                           "hashes = { sha256 = \"" +
                                           k_sha_a +
                                           "\" }\n"
                                           "[[packages]]\nname = \"b\"\nversion = \"2.0\"\n"
                                           "wheels = [{ url = \"https://h/b-2.0-py3-none-any.whl\", hashes = { sha256 "
                                           "= \"" +
                                           k_sha_b +
                                           "\" } }]\n"
                                           "sdist = { url = \"https://h/b-2.0.tar.gz\", hashes = { sha256 = \"" +
                                           k_sha_a + "\" } }\n",
                                       "/locks/pylock.toml");
    INFO((lock ? "" : lock.error().message + "\n" + lock.error().detail));
    REQUIRE(lock);
    const auto& a = lock->packages.at("a");
    CHECK(a.sdist == "a-1.0.tar.gz");
    CHECK(a.path == "/locks/dist/a-1.0.tar.gz");
    CHECK(a.origin.kind == manifest::OriginKind::local);
    const auto& b = lock->packages.at("b");
    CHECK(b.sdist.empty());
    CHECK(b.wheel == "b-2.0-py3-none-any.whl");
    CHECK(b.sha256 == k_sha_b);
    CHECK(b.more_sha256 == std::vector<std::string>{k_sha_a});  // where no wheel fits, the sdist
}

TEST_CASE("pylock sdist: what the installer would get is validated, every problem at its line") {
    const auto error = problems(k_head +
                                "[[packages]]\nname = \"a\"\nversion = \"1.0\"\n"  // 3-5
                                "sdist = { url = \"https://h/a-1.0.tar.gz\" }\n"   // 6
                                "[[packages]]\nname = \"b\"\nversion = \"1.0\"\n"  // 7-9
                                "sdist = { path = \"-r b-1.0.tar.gz\", hashes = { sha256 = \"" +
                                k_sha_a +
                                "\" } }\n"                                         // 10
                                "[[packages]]\nname = \"c\"\nversion = \"1.0\"\n"  // 11-13
                                "sdist = { url = \"https://h/other-1.0.tar.gz\", size = \"big\", hashes = { sha256 = "
                                "\"" +
                                k_sha_a +
                                "\" } }\n"                                         // 14
                                "[[packages]]\nname = \"d\"\nversion = \"1.0\"\n"  // 15-17
                                "sdist = { url = \"https://h/d-1.0.tar.gz\", upload-time = \"yesterday\", hashes = { "
                                "md5 = \"x\" } }\n"                                                            // 18
                                "[[packages]]\nname = \"e\"\nversion = \"1.0\"\nsdist = \"e-1.0.tar.gz\"\n");  // 22
    INFO(error);
    CHECK(error.find("/l/pylock.toml:6:9: package a: sdist: 'hashes' is missing") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:10:18: package b: sdist: 'path' starts with '-'") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:14:") != std::string::npos);
    CHECK(error.find("package c: sdist: 'size' must be an integer, not a string") != std::string::npos);
    CHECK(error.find("package c: sdist: other-1.0.tar.gz is not an sdist of c 1.0") != std::string::npos);
    CHECK(error.find("package d: sdist: 'upload-time' must be a date-time") != std::string::npos);
    CHECK(error.find("/l/pylock.toml:22:") != std::string::npos);
    CHECK(error.find("package e: 'sdist' must be a table, not a string") != std::string::npos);
    CHECK(error.find("package e: no 'wheels'") == std::string::npos);  // one problem, not two
}

TEST_CASE("pylock sdist: bootstrap's lock of a package built from its sdist survives a round trip") {
    const auto text = lockfile::to_pylock(sdist_lock());
    INFO(text);
    CHECK(text.find("\n[packages.sdist]\nname = \"docopt-0.6.2.tar.gz\"\n"
                    "url = \"https://files.pythonhosted.org/packages/a2/55/docopt-0.6.2.tar.gz\"\n"
                    "hashes = { sha256 = \"" +
                    k_sha_a + "\" }\n") != std::string::npos);
    CHECK(text.find("wheels = [") == std::string::npos);
    CHECK(text.find("built-wheel = \"docopt-0.6.2-py2.py3-none-any.whl\"") != std::string::npos);
    CHECK(text.find("built-note = \"the wheel built from the sdist when this lock was made; a rebuilt compiled wheel "
                    "is not byte-identical") != std::string::npos);
    auto back = lockfile::parse_pylock(text, "/l/pylock.r.toml");
    INFO((back ? "" : back.error().message + "\n" + back.error().detail));
    REQUIRE(back);
    CHECK(back->foreign_tool.empty());
    const auto& p = back->packages.at("docopt");
    const auto original = sdist_lock();
    const auto& want = original.packages.at("docopt");
    CHECK(p.sdist == want.sdist);
    CHECK(p.sha256 == want.sha256);
    CHECK(p.url == want.url);
    CHECK(p.index == want.index);
    CHECK(p.hash_source == "uv-cache");
    CHECK(p.built_wheel == want.built_wheel);
    CHECK(p.built_sha256 == want.built_sha256);
    CHECK(p.origin.step == "deps");
}

TEST_CASE("lockfile JSON: the sdist and the wheel built from it, and where each package is") {
    const fs::path dir = fs::temp_directory_path() / "bs_unit_lock_sdist";
    fs::create_directories(dir);
    const fs::path file = dir / "l.json";
    const auto json = manifest::to_json(sdist_lock());
    CHECK(json.find("\"sdist\": \"docopt-0.6.2.tar.gz\"") != std::string::npos);
    CHECK(json.find("not byte-identical") != std::string::npos);
    REQUIRE(manifest::save_lockfile(file, sdist_lock()));
    auto back = manifest::load_lockfile(file);
    INFO((back ? "" : back.error().message));
    REQUIRE(back);
    const auto& p = back->packages.at("docopt");
    CHECK(p.sdist == "docopt-0.6.2.tar.gz");
    CHECK(p.built_wheel == "docopt-0.6.2-py2.py3-none-any.whl");
    CHECK(p.built_sha256 == k_sha_b);
    CHECK(p.at.starts_with(file.string() + ":"));
    // An sdist of another release is refused, naming the field.
    auto text = json;
    text.replace(text.find("\"docopt-0.6.2.tar.gz\""), 21, "\"docopt-9.9.tar.gz\"");
    REQUIRE(core::write_file_atomic(file, text));
    auto bad = manifest::load_lockfile(file);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("sdist") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("pylock sdist: an install step's pins carry the sdist's sha256") {
    auto data = steps::read_pylock(k_head +
                                       "[[packages]]\nname = \"tinysd\"\nversion = \"0.1.0\"\n"
                                       "sdist = { url = \"https://h/tinysd-0.1.0.tar.gz\", hashes = { sha256 = \"" +
                                       k_sha_a + "\" } }\n",
                                   "/l/pylock.toml");
    REQUIRE(data);
    auto pins = steps::pylock_pins(*data);
    INFO((pins ? "" : pins.error().message));
    REQUIRE(pins);
    CHECK(pins->text == "tinysd==0.1.0 --hash=sha256:" + k_sha_a + "\n");
}

TEST_CASE("uv's sdist revision: the sha256 it recorded") {
    const std::string bytes = std::string(
                                  "\x93\xb0"
                                  "7EB9XYDDFvrU9jrg\x91\x81\xa6Sha256\xd9\x40") +
                              k_sha_a + "\xc0";
    CHECK(pyenv::sha256_in_uv_revision(bytes) == k_sha_a);
    CHECK_FALSE(pyenv::sha256_in_uv_revision("\xa6Sha256\xd9\x40short"));
}
