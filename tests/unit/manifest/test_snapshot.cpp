#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "fixture.hpp"
#include "manifest/host_facts.hpp"
#include "manifest/package_cache.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/dist_info.hpp"

namespace fs = std::filesystem;
using namespace bootstrap::manifest;
using bootstrap::core::TempDir;
using bs_test::DistSpec;
using bs_test::write_dist;

namespace {

/// Every dist-info directory in `site` and the regular files in it dated 10 s back: the package
/// cache keeps only stamps older than 2 s (a change in the same tick could leave one equal).
void settle(const fs::path& site) {
    const auto past = fs::file_time_type::clock::now() - std::chrono::seconds(10);
    for (const auto& e : fs::directory_iterator(site)) {
        if (e.path().extension() != ".dist-info") continue;
        for (const auto& f : fs::directory_iterator(e.path()))
            if (fs::is_regular_file(fs::symlink_status(f.path()))) fs::last_write_time(f.path(), past);
        fs::last_write_time(e.path(), past);
    }
}

/// The golden fixture: one package of every origin kind, torch with its version file and CMake
/// config, and a distutils-era install without RECORD.
fs::path make_fixture_venv(const fs::path& root) {
    fs::path venv = root / "venv";
    fs::path site = bs_test::site_packages(venv);
    REQUIRE(bootstrap::core::write_file_atomic(venv / "pyvenv.cfg", "version = 3.11.7\n"));
    write_dist(site, {"demo_core", "1.0.0", "uv\n", true});
    DistSpec foo{"Foo.Bar", "2.0", "pip\n"};
    foo.tags = {"cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"};
    write_dist(site, foo);
    DistSpec editable{"mylib", "0.1.dev0", "uv\n", true};
    editable.direct_url = R"({"url": "file:///src/mylib", "dir_info": {"editable": true}})";
    write_dist(site, editable);
    DistSpec localdir{"localdir", "0.3"};
    localdir.direct_url = R"({"url": "file:///src/localdir", "dir_info": {}})";
    write_dist(site, localdir);
    DistSpec wheel{"localwheel", "1.2"};
    wheel.direct_url = R"({"url": "file:///wheels/localwheel-1.2-py3-none-any.whl",
        "archive_info": {"hash": "sha256=00", "hashes": {"sha256": "ff"}}})";
    write_dist(site, wheel);
    DistSpec remote{"remote", "3.0", "pip\n"};
    remote.direct_url = R"({"url": "https://example.org/remote-3.0.tar.gz",
        "archive_info": {"hash": "sha256=aa"}})";
    write_dist(site, remote);
    DistSpec vcs{"vcspkg", "0.5"};
    vcs.direct_url = R"({"url": "https://github.com/x/vcspkg", "vcs_info": {"vcs": "git",
        "commit_id": "0123456789abcdef", "requested_revision": "main"}})";
    write_dist(site, vcs);
    DistSpec legacy{"legacy", "1.0", "conda\n"};
    legacy.record.reset();
    legacy.tags.clear();
    write_dist(site, legacy);
    // An install cut short (a full disk): the dist-info holds only RECORD.
    REQUIRE(bootstrap::core::write_file_atomic(site / "wandb-0.22.0.dist-info" / "RECORD",
                                               "wandb/__init__.py,sha256=abc,10\n"));
    DistSpec torch{"torch", "2.5.1+cu124", "uv\n", true};
    torch.tags = {"cp311-cp311-linux_x86_64"};
    write_dist(site, torch);
    REQUIRE(bootstrap::core::write_file_atomic(site / "torch" / "version.py",
                                               "from typing import Optional\n\n"
                                               "__all__ = ['__version__', 'debug', 'cuda']\n"
                                               "__version__ = '2.5.1+cu124'\n"
                                               "debug = False\n"
                                               "cuda: Optional[str] = '12.4'\n"
                                               "git_version = 'abc'\n"
                                               "hip: Optional[str] = None\n"));
    REQUIRE(bootstrap::core::write_file_atomic(site / "torch/share/cmake/Torch/TorchConfig.cmake",
                                               "if(CMAKE_SYSTEM_NAME STREQUAL \"Linux\")\n"
                                               "  set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=1\")\nendif()\n"));
    return venv;
}

SnapshotRequest fixture_request(const fs::path& venv) {
    SnapshotRequest r;
    r.venv = venv;
    r.python = bs_test::fake_python(venv);
    r.env = {{"PATH", "/usr/bin"},
             {"HOME", "/root"},
             {"TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX"},
             {"MAX_JOBS", "4"},
             {"CC", "gcc-12"}};
    r.label = "fixture";
    r.recipe_name = "demo";
    r.recipe_digest = "0f0f";
    r.host = bs_test::fake_host();
    return r;
}

}  // namespace

// After an intended format change, regenerate with BS_UPDATE_GOLDEN=1 and review the diff.
TEST_CASE("snapshot of the fixture venv matches the golden manifest") {
    TempDir tmp("bs-snapshot");
    fs::path venv = make_fixture_venv(tmp.path());
    auto m = take_snapshot(fixture_request(venv));
    REQUIRE(m.has_value());
    CHECK(m->venv == fs::absolute(venv).lexically_normal().string());
    m->venv = "/fixture/venv";  // the only machine-dependent value
    std::string text = to_json(*m);

    const fs::path golden = fs::path(BS_TEST_DATA) / "manifest" / "fixture_manifest.json";
    if (std::getenv("BS_UPDATE_GOLDEN")) REQUIRE(bootstrap::core::write_file_atomic(golden, text));
    auto expected = bootstrap::core::read_file(golden);
    REQUIRE(expected.has_value());
    CHECK(text == *expected);

    // And byte-identical on a second snapshot.
    auto again = take_snapshot(fixture_request(venv));
    REQUIRE(again.has_value());
    again->venv = "/fixture/venv";
    CHECK(to_json(*again) == text);
}

TEST_CASE("snapshot reads each package from its dist-info") {
    TempDir tmp("bs-snapshot");
    fs::path venv = make_fixture_venv(tmp.path());
    auto m = take_snapshot(fixture_request(venv));
    REQUIRE(m.has_value());
    REQUIRE(m->packages.size() == 10);

    const Package& foo = m->packages.at("foo-bar");
    CHECK(foo.display_name == "Foo.Bar");
    CHECK(foo.installer == "pip");
    CHECK_FALSE(foo.requested);
    CHECK(foo.wheel_tag == "cp311-cp311-manylinux_2_17_x86_64,cp311-cp311-manylinux2014_x86_64");
    CHECK(foo.origin.kind == bootstrap::manifest::OriginKind::index);
    CHECK(foo.record_sha256 == bootstrap::core::sha256_hex("Foo.Bar/__init__.py,sha256=abc,10\n"));

    CHECK(m->packages.at("demo-core").requested);
    CHECK(m->packages.at("mylib").origin.kind == bootstrap::manifest::OriginKind::editable);
    CHECK(m->packages.at("localdir").origin.kind == bootstrap::manifest::OriginKind::local);
    CHECK(m->packages.at("localwheel").origin.kind == bootstrap::manifest::OriginKind::local);
    CHECK(m->packages.at("localwheel").origin.archive_hash == "sha256=ff");
    CHECK(m->packages.at("remote").origin.kind == bootstrap::manifest::OriginKind::url);
    CHECK(m->packages.at("remote").origin.archive_hash == "sha256=aa");
    CHECK(m->packages.at("vcspkg").origin.commit == "0123456789abcdef");
    CHECK(m->packages.at("legacy").origin.kind == bootstrap::manifest::OriginKind::unknown);
    CHECK(m->packages.at("legacy").record_sha256.empty());
    CHECK(m->packages.at("legacy").wheel_tag.empty());
    for (const auto& [name, p] : m->packages) CHECK(p.broken == (name == "wandb" ? "METADATA missing" : ""));
    const Package& wandb = m->packages.at("wandb");
    CHECK(wandb.version == "0.22.0");
    CHECK(wandb.record_sha256 == bootstrap::core::sha256_hex("wandb/__init__.py,sha256=abc,10\n"));

    REQUIRE(m->torch.has_value());
    CHECK(*m->torch == Torch{"2.5.1+cu124", "12.4", "1"});
    CHECK(m->build_env == std::map<std::string, std::string>{
                              {"CC", "gcc-12"}, {"MAX_JOBS", "4"}, {"TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX"}});
    CHECK(m->python.version == "3.11.7");
    CHECK(m->host == bs_test::fake_host());
    CHECK_FALSE(m->run.has_value());

    SECTION("a reinstall changes the record digest") {
        auto dist = bs_test::site_packages(venv) / "demo_core-1.0.0.dist-info";
        REQUIRE(bootstrap::core::write_file_atomic(dist / "RECORD", "other,sha256=x,1\n"));
        auto m2 = take_snapshot(fixture_request(venv));
        REQUIRE(m2.has_value());
        CHECK(m2->packages.at("demo-core").record_sha256 != m->packages.at("demo-core").record_sha256);
    }
}

TEST_CASE("snapshot lists a hostile dist-info as broken instead of reading it") {
    TempDir tmp("bs-snapshot");
    fs::path venv = tmp.path() / "venv";
    fs::path site = bs_test::site_packages(venv);
    write_dist(site, {"good", "1.0"});
    fs::path fifo = write_dist(site, {"fifo", "2.0"});
    fs::remove(fifo / "RECORD");
    REQUIRE(::mkfifo((fifo / "RECORD").c_str(), 0644) == 0);
    fs::path zero = write_dist(site, {"zero", "3.0"});
    fs::remove(zero / "METADATA");
    fs::create_symlink("/dev/zero", zero / "METADATA");
    fs::path wheel_fifo = write_dist(site, {"wheelfifo", "4.0"});
    fs::remove(wheel_fifo / "WHEEL");
    REQUIRE(::mkfifo((wheel_fifo / "WHEEL").c_str(), 0644) == 0);

    auto m = take_snapshot(fixture_request(venv));
    // A whole dist-info whose WHEEL is a FIFO is an error naming it (it is not read).
    REQUIRE_FALSE(m);
    CHECK(m.error().message == "cannot read " + (wheel_fifo / "WHEEL").string() + ": not a regular file (a FIFO)");
    fs::remove_all(wheel_fifo);

    settle(site);
    m = take_snapshot(fixture_request(venv));
    REQUIRE(m);
    CHECK(m->packages.at("good").broken.empty());
    CHECK(m->packages.at("fifo").broken == "RECORD is not a regular file (a FIFO)");
    CHECK(m->packages.at("fifo").record_sha256.empty());
    CHECK(m->packages.at("zero").broken == "METADATA is not a regular file (a character device)");
    CHECK(m->packages.at("zero").version == "3.0");
    // The broken ones are not cached: a repaired dist-info is read afresh.
    auto cache = bootstrap::core::read_file(venv / ".bootstrap" / "packages.cache");
    REQUIRE(cache);
    CHECK(cache->find("fifo-2.0.dist-info") == std::string::npos);
    CHECK(cache->find("good-1.0.dist-info") != std::string::npos);
}

TEST_CASE("snapshot without torch records null, and a missing site-packages is an error") {
    TempDir tmp("bs-snapshot");
    fs::path venv = tmp.path() / "venv";
    write_dist(bs_test::site_packages(venv), {"a", "1"});
    auto m = take_snapshot(fixture_request(venv));
    REQUIRE(m.has_value());
    CHECK_FALSE(m->torch.has_value());
    CHECK(to_json(*m).find("\"torch\": null") != std::string::npos);

    auto request = fixture_request(tmp.path() / "nothing");
    auto missing = take_snapshot(request);
    CHECK_FALSE(missing.has_value());
}

TEST_CASE("parse_origin follows PEP 610") {
    CHECK(parse_origin("", "uv").kind == bootstrap::manifest::OriginKind::index);
    CHECK(parse_origin("", "pip").kind == bootstrap::manifest::OriginKind::index);
    CHECK(parse_origin("", "conda").kind == bootstrap::manifest::OriginKind::unknown);
    CHECK(parse_origin("", "").kind == bootstrap::manifest::OriginKind::unknown);
    CHECK(parse_origin("not json", "uv").kind == bootstrap::manifest::OriginKind::unknown);
    Origin vcs = parse_origin(R"({"url": "https://g/x", "vcs_info": {"vcs": "git", "commit_id": "c0ffee"}})", "uv");
    CHECK(vcs == Origin{bootstrap::manifest::OriginKind::vcs, "https://g/x", "git", "c0ffee", {}, "", "", ""});
    CHECK(parse_origin(R"({"url": "file:///a", "dir_info": {"editable": false}})", "uv").kind ==
          bootstrap::manifest::OriginKind::local);
    CHECK(parse_origin(R"({"url": "file:///a", "dir_info": {"editable": true}})", "uv").kind ==
          bootstrap::manifest::OriginKind::editable);
    Origin archive = parse_origin(R"({"url": "https://h/x.whl", "archive_info": {}})", "uv");
    CHECK(archive.kind == bootstrap::manifest::OriginKind::url);
    CHECK(archive.archive_hash.empty());
}

TEST_CASE("an origin URL's credentials are never recorded") {
    Origin vcs = parse_origin(
        R"({"url": "https://bob:t0ken-99@git.example/x.git", "vcs_info": {"vcs": "git", "commit_id": "c0ffee"}})",
        "uv");
    CHECK(vcs.url == "https://bob:***@git.example/x.git");
    Origin archive = parse_origin(R"({"url": "https://t0ken-99@h/x.whl", "archive_info": {}})", "pip");
    CHECK(archive.url == "https://***@h/x.whl");
}

TEST_CASE("read_torch copes with missing files") {
    TempDir tmp("bs-torch");
    CHECK(read_torch(tmp.path()) == Torch{});
    REQUIRE(bootstrap::core::write_file_atomic(tmp.path() / "torch" / "version.py",
                                               "__version__ = \"2.11.0\"\ncuda = None\n"));
    CHECK(read_torch(tmp.path()) == Torch{"2.11.0", "", ""});
}

TEST_CASE("host fact parsers") {
    CHECK(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                             "Cuda compilation tools, release 13.0, V13.0.48\n") == "13.0");
    CHECK(parse_nvcc_version("garbage") == "");
    CHECK(parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                               "580.65.06  Release Build  (dvs-builder@U16)  Sun Jul 27\n"
                               "GCC version:  gcc version 12.2.0\n") == "580.65.06");
    CHECK(parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar "
                               "5 22:23:56 UTC 2024\n") == "550.54.15");
    CHECK(parse_driver_version("") == "");
    using namespace std::string_literals;
    std::string lib =
        "xxGLIBCXX_3.4\0GLIBCXX_3.4.9\0GLIBCXX_3.4.30\0GLIBCXX_3.4.29\0"
        "GLIBCXX_TUNABLES\0GLIBCXX_DEBUG_MESSAGE_LENGTH\0GLIBCXX_3.4.31x"s;
    CHECK(highest_glibcxx(lib) == "3.4.30");
    CHECK(highest_glibcxx("nothing") == "");
}

TEST_CASE("probe_host caches gcc and nvcc answers keyed on the tools") {
    TempDir tmp("bs-host");
    fs::path bin = tmp.path() / "bin";
    fs::path counter = tmp.path() / "calls";
    auto write_tool = [&](const std::string& name, const std::string& answer) {
        REQUIRE(bootstrap::core::write_file_atomic(
            bin / name, "#!/bin/sh\necho " + name + " >> '" + counter.string() + "'\n" + answer));
        ::chmod((bin / name).c_str(), 0755);
    };
    write_tool("gcc", "echo 99.1.0\n");
    write_tool("nvcc", "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n");
    const bootstrap::exec::EnvMap env{{"PATH", bin.string() + ":/usr/bin:/bin"}};
    const fs::path cache = tmp.path() / "venv" / ".bootstrap" / "host.facts";
    auto calls = [&] {
        auto text = bootstrap::core::read_file(counter);
        return text ? std::count(text->begin(), text->end(), '\n') : 0;
    };

    auto first = probe_host(env, cache);
    REQUIRE(first.has_value());
    CHECK(first->gcc == "99.1.0");
    CHECK(first->nvcc == "12.8");
    CHECK_FALSE(first->glibc.empty());
    CHECK_THAT(first->glibcxx, Catch::StartsWith("3.4."));
    CHECK(calls() == 2);
    CHECK(fs::exists(cache));

    auto second = probe_host(env, cache);
    REQUIRE(second.has_value());
    CHECK(*second == *first);
    CHECK(calls() == 2);  // nothing spawned
    const std::string cached = bootstrap::core::read_file(cache).value();
    CHECK(cached.find("\"version\": 2") != std::string::npos);
    CHECK(cached.find("\"gcc\": \"99.1.0\"") != std::string::npos);
    CHECK(cached.find("\"libstdcxx\": \"/") != std::string::npos);
    CHECK(cached.find("\"loader_key\": \"LD_LIBRARY_PATH=") != std::string::npos);

    // Where libstdc++ is comes from the cache while the loader's inputs are the same (no
    // dlopen): a cached path to another library is believed, and its GLIBCXX level read.
    {
        auto doc = nlohmann::json::parse(cached);
        const fs::path fake = tmp.path() / "libstdc++.so.6";
        REQUIRE(bootstrap::core::write_file_atomic(fake, std::string("x\0GLIBCXX_9.9.9\0y", 17)));
        doc["libstdcxx"] = fake.string();
        REQUIRE(bootstrap::core::write_file_atomic(cache, doc.dump(1)));
        auto faked = probe_host(env, cache);
        REQUIRE(faked.has_value());
        CHECK(faked->glibcxx == "9.9.9");
        // Another LD_LIBRARY_PATH or ld.so.cache: the loader is asked again.
        doc["loader_key"] = "LD_LIBRARY_PATH=/elsewhere | ld.so.cache 0";
        REQUIRE(bootstrap::core::write_file_atomic(cache, doc.dump(1)));
        auto asked = probe_host(env, cache);
        REQUIRE(asked.has_value());
        CHECK(asked->glibcxx == first->glibcxx);
        CHECK(bootstrap::core::read_file(cache).value() == cached);
        CHECK(calls() == 4);  // the fake library's stamp re-asked gcc and nvcc; the real one is cached
    }

    // An older bootstrap's "stamp=..." lines, or a damaged file: a miss, rewritten as JSON.
    for (const std::string& old : {std::string("stamp=host-facts-v1 | x\ngcc=1\n"), std::string("{")}) {
        REQUIRE(bootstrap::core::write_file_atomic(cache, old));
        auto again = probe_host(env, cache);
        REQUIRE(again.has_value());
        CHECK(*again == *first);
        CHECK(bootstrap::core::read_file(cache).value() == cached);
    }
    CHECK(calls() == 8);

    // A changed tool (size differs) invalidates the cache.
    write_tool("gcc", "echo 100.0.0.1\n");
    auto third = probe_host(env, cache);
    REQUIRE(third.has_value());
    CHECK(third->gcc == "100.0.0.1");
    CHECK(calls() == 10);

    // No tools on PATH: empty facts, not an error.
    auto none = probe_host({{"PATH", (tmp.path() / "empty").string()}}, "");
    REQUIRE(none.has_value());
    CHECK(none->gcc.empty());
}

TEST_CASE("build_env_names lists the build-relevant variables") {
    const auto& names = build_env_names();
    for (const char* n : {"TORCH_CUDA_ARCH_LIST", "NVTE_CUDA_ARCHS", "CMAKE_CUDA_ARCHITECTURES", "MAX_JOBS",
                          "CUDA_HOME", "CXXFLAGS", "NVTE_FRAMEWORK"})
        CHECK(std::find(names.begin(), names.end(), n) != names.end());
    CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("the package cache keeps each package's Requires-Dist for a scan to recall") {
    TempDir tmp("bs-snapshot");
    fs::path venv = make_fixture_venv(tmp.path());
    const fs::path site = bs_test::site_packages(venv);
    const fs::path remote = site / "remote-3.0.dist-info";
    REQUIRE(bootstrap::core::write_file_atomic(remote / "METADATA",
                                               "Metadata-Version: 2.1\nName: remote\nVersion: 3.0\n"
                                               "Requires-Dist: numpy>=1.17\nRequires-Dist: torch>=2.2;\n"
                                               "  extra == \"gpu\"\n\nRequires-Dist: not-a-header\n"));
    settle(site);
    REQUIRE(take_snapshot(fixture_request(venv)).has_value());
    const std::vector<std::string> expected{"numpy>=1.17", "torch>=2.2; extra == \"gpu\""};

    auto cache = PackageCache::load(venv / ".bootstrap" / "packages.cache");
    auto recalled = bootstrap::pyenv::scan_site_packages(site, {}, false, &cache);
    REQUIRE(recalled.has_value());
    REQUIRE(recalled->at("remote").requires_dist.has_value());
    CHECK(*recalled->at("remote").requires_dist == expected);
    CHECK(recalled->at("demo-core").requires_dist == std::vector<std::string>{});

    // METADATA edited in place behind an unchanged directory: the cache answers (its stamp is
    // what it trusts); a scan without it reads the file.
    const auto dir_time = fs::last_write_time(remote);
    {
        std::ofstream in_place(remote / "METADATA", std::ios::trunc);
        in_place << "Metadata-Version: 2.1\nName: remote\nVersion: 3.0\nRequires-Dist: six\n";
    }
    fs::last_write_time(remote, dir_time);
    auto again = bootstrap::pyenv::scan_site_packages(site, {}, false, &cache);
    REQUIRE(again.has_value());
    CHECK(*again->at("remote").requires_dist == expected);
    auto fresh = bootstrap::pyenv::scan_site_packages(site);
    REQUIRE(fresh.has_value());
    CHECK(*fresh->at("remote").requires_dist == std::vector<std::string>{"six"});
}

TEST_CASE("repeated snapshots reuse per-package facts while the dist-info directory is unchanged") {
    TempDir tmp("bs-snapshot");
    fs::path venv = make_fixture_venv(tmp.path());
    settle(bs_test::site_packages(venv));
    const fs::path cache = venv / ".bootstrap" / "packages.cache";
    auto first = take_snapshot(fixture_request(venv));
    REQUIRE(first.has_value());
    REQUIRE(fs::exists(cache));

    // WHEEL edited in place behind an unchanged RECORD and directory: the cached tag is what a
    // snapshot reports (the stamps are what the cache trusts).
    fs::path dist = bs_test::site_packages(venv) / "remote-3.0.dist-info";
    const auto dir_time = fs::last_write_time(dist);
    {
        std::ofstream in_place(dist / "WHEEL", std::ios::trunc);
        in_place << "Tag: cp311-none-any\n";
    }
    fs::last_write_time(dist, dir_time);
    auto second = take_snapshot(fixture_request(venv));
    REQUIRE(second.has_value());
    CHECK(second->packages.at("remote").wheel_tag == "py3-none-any");
    CHECK(to_json(*second) == to_json(*first));

    // A file added to the dist-info (REQUESTED) changes the directory's stamp: read again.
    REQUIRE_FALSE(first->packages.at("remote").requested);
    REQUIRE(bootstrap::core::write_file_atomic(dist / "REQUESTED", ""));
    auto requested = take_snapshot(fixture_request(venv));
    REQUIRE(requested.has_value());
    CHECK(requested->packages.at("remote").requested);
    CHECK(requested->packages.at("remote").wheel_tag == "cp311-none-any");
    fs::remove(dist / "REQUESTED");

    // A reinstall rewrites RECORD: everything is read again.
    REQUIRE(bootstrap::core::write_file_atomic(dist / "RECORD", "remote/__init__.py,,\n"));
    auto third = take_snapshot(fixture_request(venv));
    REQUIRE(third.has_value());
    CHECK(third->packages.at("remote").wheel_tag == "cp311-none-any");
    CHECK(third->packages.at("remote").record_sha256 != first->packages.at("remote").record_sha256);
    CHECK(third->packages.at("remote").origin == first->packages.at("remote").origin);

    // A change moments old was read within its stamp's timestamp tick: not cached (one such
    // package is cheaper to read again next time than to wait for).
    CHECK(bootstrap::core::read_file(cache)->find("remote-3.0.dist-info") == std::string::npos);
    // Many installed moments ago (a run's after-snapshot): the snapshot waits for the tick to
    // be over (50 ms after a sub-second stamp), reads them once more and caches them...
    const fs::path site = bs_test::site_packages(venv);
    // (Writing 70 dist-infos can take longer than the tick: their stamps are all set to now.)
    auto stamp_all = [&](fs::file_time_type when) {
        for (int i = 0; i < 70; ++i) {
            const fs::path dir = site / ("bulk" + std::to_string(i) + "-1.0.dist-info");
            fs::last_write_time(dir / "RECORD", when);
            fs::last_write_time(dir, when);
        }
    };
    for (int i = 0; i < 70; ++i) write_dist(site, {"bulk" + std::to_string(i), "1.0"});
    stamp_all(fs::file_time_type::clock::now());
    auto bulk = take_snapshot(fixture_request(venv));
    REQUIRE(bulk.has_value());
    CHECK(bulk->packages.size() == third->packages.size() + 70);
    {
        auto text = bootstrap::core::read_file(cache);
        REQUIRE(text.has_value());
        for (int i = 0; i < 70; ++i)
            CHECK(text->find("/bulk" + std::to_string(i) + "-1.0.dist-info\t") != std::string::npos);
    }
    // ...unless their stamps are whole seconds (a filesystem that keeps seconds): those settle
    // only after 2 s, too long to wait for; read, the same facts reported, not cached.
    stamp_all(
        std::chrono::file_clock::from_sys(std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now())));
    auto whole = take_snapshot(fixture_request(venv));
    REQUIRE(whole.has_value());
    CHECK(to_json(*whole) == to_json(*bulk));
    CHECK(bootstrap::core::read_file(cache)->find("/bulk0-1.0.dist-info") == std::string::npos);
    for (int i = 0; i < 70; ++i) fs::remove_all(site / ("bulk" + std::to_string(i) + "-1.0.dist-info"));
    settle(bs_test::site_packages(venv));

    // An uninstalled package drops out of the cache; a damaged cache is only a miss.
    fs::remove_all(bs_test::site_packages(venv) / "vcspkg-0.5.dist-info");
    REQUIRE(take_snapshot(fixture_request(venv)).has_value());
    auto text = bootstrap::core::read_file(cache);
    REQUIRE(text.has_value());
    CHECK(text->find("vcspkg") == std::string::npos);
    CHECK(text->find("remote-3.0.dist-info") != std::string::npos);
    REQUIRE(bootstrap::core::write_file_atomic(cache, "bootstrap-packages-cache-v2\nx\ty\n" + *text));
    auto fourth = take_snapshot(fixture_request(venv));
    REQUIRE(fourth.has_value());
    CHECK(fourth->packages.at("remote").wheel_tag == "cp311-none-any");
    CHECK(fourth->packages.size() == 9);
    // The damaged file was a miss, and the rewritten one is the current format again.
    auto rewritten = bootstrap::core::read_file(cache);
    REQUIRE(rewritten.has_value());
    CHECK(rewritten->rfind("bootstrap-packages-cache-v6\n", 0) == 0);
    CHECK(rewritten->find("remote-3.0.dist-info\t") != std::string::npos);

    // An old JSON (v4) cache is a miss too, never an error; so is a damaged line, for its
    // package only (a bad escape, a missing field, a stamp that is not a number).
    REQUIRE(bootstrap::core::write_file_atomic(cache, "{\"version\": 4, \"entries\": {}}\n"));
    auto fifth = take_snapshot(fixture_request(venv));
    REQUIRE(fifth.has_value());
    CHECK(to_json(*fifth) == to_json(*fourth));
    auto v6 = bootstrap::core::read_file(cache);
    REQUIRE(v6.has_value());
    CHECK(v6->rfind("bootstrap-packages-cache-v6\n", 0) == 0);
    std::string damaged = *v6;
    for (const char* bad : {"\\q", "\tx", "\\"}) {
        size_t at = damaged.find("remote-3.0.dist-info");
        REQUIRE(at != std::string::npos);
        damaged.insert(damaged.find('\n', at), bad);
        REQUIRE(bootstrap::core::write_file_atomic(cache, damaged));
        auto sixth = take_snapshot(fixture_request(venv));
        REQUIRE(sixth.has_value());
        CHECK(to_json(*sixth) == to_json(*fourth));
        damaged = *bootstrap::core::read_file(cache);
    }
    // A bad escape in a field only the snapshot's facts use (the RECORD digest, field 12): the
    // scan recalls the line, the facts are read again, and the line is written whole again.
    {
        size_t at = damaged.find("remote-3.0.dist-info");
        REQUIRE(at != std::string::npos);
        for (int tab = 0; tab < 11; ++tab) at = damaged.find('\t', at) + 1;
        damaged.insert(at, "\\q");
        REQUIRE(bootstrap::core::write_file_atomic(cache, damaged));
        auto seventh = take_snapshot(fixture_request(venv));
        REQUIRE(seventh.has_value());
        CHECK(to_json(*seventh) == to_json(*fourth));
        CHECK(*bootstrap::core::read_file(cache) == *v6);
    }
}

TEST_CASE("a console script's row is left out of the portable digest only, also when cached") {
    TempDir tmp("bs-snapshot");
    fs::path venv = tmp.path() / "venv";
    fs::path site = bs_test::site_packages(venv);
    DistSpec tool{"tool", "1.0"};
    const std::string files = "tool/__init__.py,sha256=abc,10\n";
    tool.record = "../../../bin/tool,sha256=shebang-of-this-venv,211\n" + files;
    write_dist(site, tool);
    settle(site);
    for (int pass = 0; pass < 2; ++pass) {  // the second reads .bootstrap/packages.cache
        auto m = take_snapshot(fixture_request(venv));
        REQUIRE(m.has_value());
        const Package& p = m->packages.at("tool");
        CHECK(p.record_sha256 == bootstrap::core::sha256_hex(*tool.record));
        CHECK(p.record_sha256_portable == bootstrap::core::sha256_hex(files));
    }
    CHECK(fs::exists(venv / ".bootstrap" / "packages.cache"));
}
