#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "manifest/artifacts.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

fs::path write_wheel(const fs::path& dir, const std::string& name, const std::string& content) {
    fs::create_directories(dir);
    auto p = dir / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
}

int count_temp_files(const fs::path& root) {
    int n = 0;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
    return n;
}

}  // namespace

TEST_CASE("bootstrap_home follows BOOTSTRAP_HOME, then XDG_CACHE_HOME, then HOME") {
    CHECK(manifest::bootstrap_home({{"BOOTSTRAP_HOME", "/b"}, {"HOME", "/h"}}) == "/b");
    CHECK(manifest::bootstrap_home({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}) == "/x/bootstrap");
    CHECK(manifest::bootstrap_home({{"HOME", "/h"}}) == "/h/.cache/bootstrap");
    CHECK(manifest::artifact_store_root({{"BOOTSTRAP_HOME", "/b"}}) == "/b/artifacts");
}

TEST_CASE("artifact store: add is content-addressed, idempotent and keeps the mtime") {
    core::TempDir tmp("bs-artifacts");
    auto wheel = write_wheel(tmp.path() / "dist", "foo-1.0-py3-none-any.whl", "wheel bytes");
    struct timespec times[2] = {{1000000000, 5}, {1000000000, 123456789}};
    REQUIRE(::utimensat(AT_FDCWD, wheel.c_str(), times, 0) == 0);
    manifest::ArtifactStore store(tmp.path() / "store");

    auto sha = store.add(wheel);
    REQUIRE(sha);
    CHECK(*sha == core::sha256_hex("wheel bytes"));
    auto found = store.find(*sha);
    REQUIRE(found);
    CHECK(*found == tmp.path() / "store" / "sha256" / sha->substr(0, 2) / *sha / "foo-1.0-py3-none-any.whl");
    struct stat st {};
    REQUIRE(::stat(found->c_str(), &st) == 0);
    CHECK(st.st_mtim.tv_sec == 1000000000);
    CHECK(st.st_mtim.tv_nsec == 123456789);
    CHECK(store.verify(*sha));

    auto again = store.add(wheel);
    REQUIRE(again);
    CHECK(*again == *sha);
    CHECK(count_temp_files(store.root()) == 0);
}

TEST_CASE("artifact store: find and verify refuse missing, malformed and corrupt entries") {
    core::TempDir tmp("bs-artifacts");
    manifest::ArtifactStore store(tmp.path() / "store");
    const std::string absent(64, 'a');
    CHECK_FALSE(store.find(absent));
    CHECK_FALSE(store.find("not-a-digest"));
    CHECK_FALSE(store.find("../../etc"));
    auto missing = store.verify(absent);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
    CHECK(missing.error().message == "artifact sha256:" + absent + " is not in the store " + store.root().string());

    auto wheel = write_wheel(tmp.path(), "bar-2.0-py3-none-any.whl", "original");
    auto sha = store.add(wheel);
    REQUIRE(sha);
    auto stored = store.find(*sha);
    REQUIRE(stored);
    // A left-over temp file is never returned.
    write_wheel(stored->parent_path(), ".bar-2.0-py3-none-any.whl.tmp-1-0", "partial");
    CHECK(store.find(*sha) == stored);
    fs::permissions(*stored, fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(*stored, std::ios::binary | std::ios::trunc) << "tampered";
    CHECK(store.find(*sha));  // cheap check: present and non-empty
    auto bad = store.verify(*sha);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::io);
    CHECK(bad.error().message.find("is corrupt") != std::string::npos);
}

TEST_CASE("artifact store: add refuses what is not a wheel file") {
    core::TempDir tmp("bs-artifacts");
    manifest::ArtifactStore store(tmp.path() / "store");
    auto missing = store.add(tmp.path() / "nope-1.0-py3-none-any.whl");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
    auto txt = write_wheel(tmp.path(), "notes.txt", "x");
    auto not_wheel = store.add(txt);
    REQUIRE_FALSE(not_wheel);
    CHECK(not_wheel.error().code == ErrorCode::usage);
}

TEST_CASE("artifact store: concurrent adders of the same wheel all succeed") {
    core::TempDir tmp("bs-artifacts");
    auto wheel = write_wheel(tmp.path(), "big-1.0-py3-none-any.whl", std::string(3 << 20, 'w'));
    const fs::path root = tmp.path() / "store";
    std::vector<pid_t> kids;
    for (int i = 0; i < 4; ++i) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            manifest::ArtifactStore store(root);
            ::_exit(store.add(wheel) ? 0 : 1);
        }
        kids.push_back(pid);
    }
    for (pid_t pid : kids) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    manifest::ArtifactStore store(root);
    auto sha = core::sha256_file(wheel);
    REQUIRE(sha);
    CHECK(store.verify(*sha));
    CHECK(count_temp_files(root) == 0);
}
