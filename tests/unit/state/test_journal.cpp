#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "core/fs.hpp"
#include "state/journal.hpp"
#include "state/venv_lock.hpp"

using namespace bootstrap;

TEST_CASE("journal round-trips and is written atomically") {
    core::TempDir dir("bs-journal");
    state::Journal j;
    j.recipe = "demo";
    auto& e = j.steps["torch"];
    e.key = "abc";
    e.status = state::StepStatus::interrupted;
    e.seconds = 1.5;
    e.dists["demo-torch"] = {"2.11.0+cu130", "ff00", {10, 20, 30}};
    REQUIRE(j.save(dir.path()));
    auto back = state::Journal::load(dir.path());
    REQUIRE(back);
    CHECK(back->recipe == "demo");
    const auto& b = back->steps.at("torch");
    CHECK(b.key == "abc");
    CHECK(b.status == state::StepStatus::interrupted);
    CHECK(b.dists.at("demo-torch").version == "2.11.0+cu130");
    CHECK(b.dists.at("demo-torch").stamp == core::FileStamp{10, 20, 30});
    int entries = 0;
    for ([[maybe_unused]] auto& f : std::filesystem::directory_iterator(dir.path() / ".bootstrap")) ++entries;
    CHECK(entries == 1);
}

TEST_CASE("missing journal is empty, corrupt one is a clear error") {
    core::TempDir dir("bs-journal");
    auto empty = state::Journal::load(dir.path());
    REQUIRE(empty);
    CHECK(empty->steps.empty());
    REQUIRE(core::write_file_atomic(state::Journal::path_for(dir.path()), "{not json"));
    auto bad = state::Journal::load(dir.path());
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("journal.json is corrupt") != std::string::npos);
}

TEST_CASE("a journal field of the wrong type is an error naming the field, never an exception") {
    core::TempDir dir("bs-journal");
    const auto path = state::Journal::path_for(dir.path());
    auto load = [&](const std::string& text) {
        REQUIRE(core::write_file_atomic(path, text));
        return state::Journal::load(dir.path());
    };
    auto wrong_type = load(R"({"schema": 1, "steps": {"a": {"key": 5, "status": "ok"}}})");
    REQUIRE_FALSE(wrong_type);
    CHECK(wrong_type.error().message.find("journal.json is corrupt (steps.a.key: expected a string)") !=
          std::string::npos);
    auto bad_stamp = load(R"({"schema": 1, "steps": {"a": {"key": "k", "status": "ok",
        "dists": {"x": {"version": "1", "record_sha256": "", "stamp": [1, 2]}}}}})");
    REQUIRE_FALSE(bad_stamp);
    CHECK(bad_stamp.error().message.find("steps.a.dists.x.stamp: expected [size, mtime_ns, inode]") !=
          std::string::npos);
    auto newer = load(R"({"schema": 2, "steps": {}})");
    REQUIRE_FALSE(newer);
    CHECK(newer.error().message.find("unsupported journal schema 2 (expected 1)") != std::string::npos);
    auto good = load(R"({"schema": 1, "recipe": "r", "steps": {"a": {"key": "k", "status": "ok",
        "seconds": 2, "dists": {"x": {"version": "1", "record_sha256": "s", "stamp": [1, -2, 3]}}}}})");
    REQUIRE(good);
    CHECK(good->steps.at("a").dists.at("x").stamp.mtime_ns == -2);
    CHECK(good->steps.at("a").seconds == 2);
}

TEST_CASE("the venv lock names its holder when it times out") {
    core::TempDir dir("bs-lock");
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t child = ::fork();
    if (child == 0) {
        auto lock = state::VenvLock::acquire(dir.path(), 5);
        char c = lock ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        ::sleep(3);
        ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    REQUIRE(c == 'y');
    long waited_for = 0;
    auto second = state::VenvLock::acquire(dir.path(), 0.3, [&](long pid) { waited_for = pid; });
    REQUIRE_FALSE(second);
    CHECK(second.error().code == ErrorCode::lock_timeout);
    CHECK(second.error().message.find("pid " + std::to_string(child)) != std::string::npos);
    CHECK(waited_for == child);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    // The kernel dropped the dead holder's lock.
    CHECK(state::VenvLock::acquire(dir.path(), 1));
    ::close(ready[0]);
    ::close(ready[1]);
}
