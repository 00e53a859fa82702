// Where a venv's state lives: every path under .bootstrap/, and which of it is host-local (left
// out of a pack, removed by seal).
#include <catch2/catch.hpp>

#include <string>

#include "core/fs.hpp"
#include "state/layout.hpp"

using namespace bootstrap;

TEST_CASE("the layout names every state path under the venv's .bootstrap/") {
    const state::Layout l("/v");
    CHECK(l.dir() == "/v/.bootstrap");
    CHECK(l.lock() == "/v/.bootstrap/lock");
    CHECK(l.journal() == "/v/.bootstrap/journal.json");
    CHECK(l.run_logs("20261201T000000Z-1") == "/v/.bootstrap/logs/20261201T000000Z-1");
    CHECK(l.overrides("cublas") == "/v/.bootstrap/overrides/cublas.txt");
    CHECK(l.locked_requirements("torch", 0) == "/v/.bootstrap/locked/torch.txt");
    CHECK(l.locked_requirements("torch", 1) == "/v/.bootstrap/locked/torch.2.txt");
    CHECK(l.recreate_trash(42) == "/v/.bootstrap/recreate-trash-42");
    CHECK(core::pid_after(l.recreate_trash(42).filename().string(), state::Layout::k_recreate_trash_prefix) == 42);
}

TEST_CASE("the layout's own caches and facts are host-local, its records are not") {
    const state::Layout l("/v");
    for (const auto& path :
         {l.lock(), l.logs(), l.run_logs("x") / "01-a.log", l.packages_cache(), l.python_facts(), l.host_facts(),
          l.torch_facts(), l.torch_probe(), l.verified_files_cache(), l.dir() / "journal.json.tmp-12-abcdef",
          l.builds(), l.builds() / "checked-abc" / "x-1.0-py3-none-any.whl"}) {
        const std::string rel = path.lexically_relative("/v").generic_string();
        INFO(rel);
        CHECK(state::is_host_local_state(rel));
    }
    for (const auto& path : {l.journal(), l.history() / "0001-after.json", l.overrides("cublas"),
                             l.declared_overrides(), l.changing(), l.locked_requirements("t", 0)}) {
        const std::string rel = path.lexically_relative("/v").generic_string();
        INFO(rel);
        CHECK_FALSE(state::is_host_local_state(rel));
    }
    for (const char* rel : {"lib/python3.11/site-packages/x.cache", "lock", ".bootstrapped/lock"}) {
        INFO(rel);
        CHECK_FALSE(state::is_host_local_state(rel));
    }
}

TEST_CASE("a venv has state once its .bootstrap/ is a directory") {
    core::TempDir dir("bs-layout");
    const state::Layout l(dir.path());
    CHECK_FALSE(l.exists());
    std::filesystem::create_directories(l.dir());
    CHECK(l.exists());
}
