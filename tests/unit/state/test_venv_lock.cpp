#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "state/venv_lock.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

long dead_pid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

}  // namespace

TEST_CASE("taking the venv lock removes dead runs' temporaries, and only those") {
    core::TempDir dir("bs-lock");
    auto venv = dir.path() / "venv";
    auto state = venv / ".bootstrap";
    long dead = dead_pid();
    long live = ::getppid();
    auto dead_journal = state / fmt::format("journal.json.tmp-{}-Ab12Cd", dead);
    auto dead_history = state / "history" / fmt::format("0003-after.json.tmp-{}-Zz99Yy", dead);
    auto dead_locked = state / "locked" / fmt::format("torch.txt.tmp-{}-Qq11Ww", dead);
    auto dead_trash = state / fmt::format("recreate-trash-{}", dead);
    auto live_facts = state / fmt::format("python.facts.tmp-{}-Ab12Cd", live);
    auto journal = state / "journal.json";
    auto log = state / "logs" / fmt::format("20260101T000000Z-{}", dead) / "01-venv.log";
    for (const auto& p : {dead_journal, dead_history, dead_locked, live_facts, journal, log})
        REQUIRE(core::write_file_atomic(p, "x"));
    REQUIRE(core::write_file_atomic(dead_trash / "bin" / "python", "x"));

    auto lock = state::VenvLock::acquire(venv, 1);
    REQUIRE(lock);
    auto removed = lock->removed_leftovers();
    std::sort(removed.begin(), removed.end());
    std::vector<fs::path> expected{dead_journal, dead_history, dead_locked, dead_trash};
    std::sort(expected.begin(), expected.end());
    CHECK(removed == expected);
    for (const auto& p : expected) CHECK_FALSE(fs::exists(p));
    CHECK(fs::exists(live_facts));
    CHECK(fs::exists(journal));
    CHECK(fs::exists(log));  // a run's logs are kept, whatever pid named the run
}
