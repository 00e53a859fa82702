#include <catch2/catch.hpp>

#include "engine/locking.hpp"
#include "manifest/lockfile.hpp"

using namespace bootstrap;

TEST_CASE("hash_from_simple_page finds the file's sha256 fragment") {
    std::string html = R"(<html><body>
<a href="../../files/demo_core-1.0.0-py3-none-any.whl#sha256=aaaa">demo_core-1.0.0-py3-none-any.whl</a>
<a href="https://x/files/demo_torch-2.11.0%2Bcu130-py3-none-any.whl#sha256=bbbb" data-requires-python="&gt;=3.9">t</a>
<a href="/files/nohash-1.0-py3-none-any.whl">nohash</a>
</body></html>)";
    CHECK(engine::hash_from_simple_page(html, "demo_core-1.0.0-py3-none-any.whl") == "aaaa");
    CHECK(engine::hash_from_simple_page(html, "demo_torch-2.11.0+cu130-py3-none-any.whl") == "bbbb");
    CHECK(engine::hash_from_simple_page(html, "nohash-1.0-py3-none-any.whl").empty());
    CHECK(engine::hash_from_simple_page(html, "other-1.0-py3-none-any.whl").empty());
}

TEST_CASE("wheel file names follow PEP 427, with compressed tag sets") {
    manifest::Package p;
    p.name = "demo-core";
    p.display_name = "demo.core";
    p.version = "1.0.0";
    p.wheel_tag = "py3-none-any";
    CHECK(manifest::wheel_file_name(p) == "demo_core-1.0.0-py3-none-any.whl");
    p.wheel_tag = "py2-none-any,py3-none-any";
    CHECK(manifest::wheel_file_name(p) == "demo_core-1.0.0-py2.py3-none-any.whl");
    p.wheel_tag = "cp311-cp311-manylinux_2_17_x86_64,cp311-cp311-manylinux2014_x86_64";
    CHECK(manifest::wheel_file_name(p) ==
          "demo_core-1.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
}

TEST_CASE("locked requirements pin with hashes; drift is named") {
    manifest::LockedPackage a{"demo-core", "1.0.0", "demo_core-1.0.0-py3-none-any.whl", "aa", {}};
    manifest::LockedPackage b{"local-pkg", "0.1", "local_pkg-0.1-py3-none-any.whl", "bb", {}};
    auto text = manifest::locked_requirements({&a, &b}, {{"local-pkg", "/store/local_pkg-0.1-py3-none-any.whl"}});
    CHECK(text == "demo-core==1.0.0 --hash=sha256:aa\n/store/local_pkg-0.1-py3-none-any.whl --hash=sha256:bb\n");

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
