#include <catch2/catch.hpp>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../skip.hpp"
#include "core/cache_trust.hpp"
#include "core/ed25519.hpp"
#include "core/fs.hpp"

using namespace bootstrap::core;

namespace {

/// A cache entry as the build cache writes one: a wheel and entry.txt.
fs::path make_entry(const fs::path& root, const std::string& key) {
    fs::path dir = root / key;
    REQUIRE(write_file_atomic(dir / "demo-1.0-py3-none-any.whl", "wheel bytes"));
    REQUIRE(write_file_atomic(dir / "entry.txt", "wheel = demo-1.0-py3-none-any.whl\n"));
    return dir;
}

}  // namespace

TEST_CASE("base64 round-trips and refuses what is not base64") {
    for (const std::string& s :
         std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\0\xff\x10", 3)})
        CHECK(base64_decode(base64_encode(s)).value() == s);
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK_FALSE(base64_decode("Zm9"));
    CHECK_FALSE(base64_decode("Zm9v!mFy"));
    CHECK_FALSE(base64_decode("Zm=v"));
}

TEST_CASE("an Ed25519 signature verifies with its key only, and only for its message") {
    auto key = generate_signing_key("alice@n1").value();
    CHECK(key.public_key.raw.size() == 32);
    CHECK(key.public_key.id.size() == 16);
    auto sig = sign(key, "the text").value();
    CHECK(verify(key.public_key, "the text", sig).value());
    CHECK_FALSE(verify(key.public_key, "the text!", sig).value());
    auto other = generate_signing_key("mallory").value();
    CHECK_FALSE(verify(other.public_key, "the text", sig).value());
    CHECK_FALSE(verify(key.public_key, "the text", "bm90IGEgc2lnbmF0dXJl").value());
    // The trusted-keys line reads back as the same key.
    auto back = parse_public_key(key.public_key.line(), "test").value();
    CHECK(back.id == key.public_key.id);
    CHECK(back.name == "alice@n1");
}

TEST_CASE("trusted-keys text: name:base64 lines, comments, errors at file:line") {
    auto key = generate_signing_key("alice").value();
    auto keys = parse_trusted_keys("# site keys\n\n" + key.public_key.line() + "  # alice's\n", "/etc/k").value();
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].id == key.public_key.id);
    auto bad = parse_trusted_keys("# x\nalice:Zm9vYmFy\n", "/etc/k");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("/etc/k:2: key 'alice' is not a base64 Ed25519 public key (6 bytes, not 32)") !=
          std::string::npos);
    auto nokey = parse_trusted_keys("just-a-word\n", "/etc/k");
    REQUIRE_FALSE(nokey);
    CHECK(nokey.error().message.find("/etc/k:1: 'just-a-word' is not a key") != std::string::npos);
}

TEST_CASE("keygen writes a 0600 key in a 0700 directory, and a key others can read is refused") {
    TempDir home("bs-keys");
    CHECK_FALSE(load_signing_key(home.path()).value());
    auto made = create_signing_key(home.path(), "me").value();
    const fs::path dir = key_dir(home.path());
    struct stat st {};
    REQUIRE(::stat((dir / "ed25519.key").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    auto loaded = load_signing_key(home.path()).value();
    REQUIRE(loaded);
    CHECK(loaded->public_key.id == made.public_key.id);
    CHECK_FALSE(create_signing_key(home.path(), "again"));  // never replaced
    // Our own key is trusted without being listed.
    CHECK(load_trusted_keys(home.path(), {}, home.path() / "none").value().by_id.count(made.public_key.id) == 1);

    ::chmod((dir / "ed25519.key").c_str(), 0644);
    auto refused = load_signing_key(home.path());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "refusing to use the signing key " + (dir / "ed25519.key").string() +
                                         ": its mode is 0644: others could read it (it must be 0600)");
}

TEST_CASE("a trusted-keys file others could write is refused, and BOOTSTRAP_TRUSTED_KEYS replaces the files") {
    TempDir home("bs-trust");
    auto alice = generate_signing_key("alice").value();
    auto bob = generate_signing_key("bob").value();
    REQUIRE(write_file_atomic(home.path() / "trusted-keys", alice.public_key.line() + "\n", 0644));
    auto keys = load_trusted_keys(home.path(), {}, home.path() / "none").value();
    CHECK(keys.by_id.count(alice.public_key.id) == 1);
    auto from_env =
        load_trusted_keys(home.path(), {{"BOOTSTRAP_TRUSTED_KEYS", bob.public_key.line()}}, home.path() / "none")
            .value();
    CHECK(from_env.by_id.count(alice.public_key.id) == 0);
    CHECK(from_env.by_id.count(bob.public_key.id) == 1);
    ::chmod((home.path() / "trusted-keys").c_str(), 0664);
    auto refused = load_trusted_keys(home.path(), {}, home.path() / "none");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("its mode 0664 lets others add a key") != std::string::npos);
}

TEST_CASE("an entry only we could write needs no signature, a group-writable one needs a trusted one") {
    TempDir root("bs-entry");
    ::chmod(root.path().c_str(), 0755);
    const std::string key = std::string(64, 'a');
    fs::path entry = make_entry(root.path(), key);
    ::chmod(entry.c_str(), 0755);
    auto no_keys = []() -> bootstrap::Result<const TrustedKeys*> {
        FAIL("keys asked for");
        return nullptr;
    };
    CHECK(check_entry(entry, key, no_keys).value().state == EntryTrust::State::ours);

    // As with umask 002 in a cache a group shares (not our user-private group: see below).
    if (::geteuid() == 0) REQUIRE(::chown((entry / "entry.txt").c_str(), 0, 65534) == 0);
    ::chmod((entry / "entry.txt").c_str(), 0664);
    auto writer = entry_other_writer(entry);
    REQUIRE(writer);
    CHECK(writer->path == entry / "entry.txt");
    CHECK(writer->who.find("(group-writable)") != std::string::npos);

    TrustedKeys trusted;
    auto alice = generate_signing_key("alice").value();
    auto keys = [&]() -> bootstrap::Result<const TrustedKeys*> { return &trusted; };
    CHECK(check_entry(entry, key, keys).value().state == EntryTrust::State::unsigned_entry);
    REQUIRE(sign_entry(entry, key, alice));
    CHECK(check_entry(entry, key, keys).value().state == EntryTrust::State::unknown_key);
    trusted.by_id[alice.public_key.id] = alice.public_key;
    auto good = check_entry(entry, key, keys).value();
    CHECK(good.state == EntryTrust::State::trusted);
    CHECK(good.usable());
    // Under another key (the text includes the cache key) the signature does not hold.
    CHECK(check_entry(entry, std::string(64, 'b'), keys).value().state == EntryTrust::State::bad_signature);

    // The wheel replaced (same size even): the signature fails, naming the file.
    REQUIRE(write_file_atomic(entry / "demo-1.0-py3-none-any.whl", "evil bytes!"));
    auto bad = check_entry(entry, key, keys).value();
    CHECK(bad.state == EntryTrust::State::bad_signature);
    CHECK_FALSE(bad.usable());
    CHECK(bad.why == "its files are not the ones key 'alice' signed (demo-1.0-py3-none-any.whl changed)");
}

TEST_CASE("an entry file owned by another uid is another writer's") {
    if (::geteuid() != 0) bootstrap::test::skip_test_case("needs root to chown a file to another uid");
    TempDir root("bs-entry-uid");
    ::chmod(root.path().c_str(), 0755);
    fs::path entry = make_entry(root.path(), std::string(64, 'c'));
    ::chmod(entry.c_str(), 0755);
    CHECK_FALSE(entry_other_writer(entry));
    REQUIRE(::chown((entry / "entry.txt").c_str(), 65534, 65534) == 0);
    auto writer = entry_other_writer(entry);
    REQUIRE(writer);
    CHECK(writer->who.rfind("uid 65534", 0) == 0);
}

TEST_CASE("a file writable by our own user-private group is no other writer's") {
    // Debian's umask 002 for a user whose primary group is their own: nobody else is in it.
    const passwd* pw = ::getpwuid(::geteuid());
    REQUIRE(pw != nullptr);
    const group* gr = ::getgrgid(pw->pw_gid);
    if (gr == nullptr || std::string(gr->gr_name) != pw->pw_name || (gr->gr_mem[0] != nullptr))
        bootstrap::test::skip_test_case("our primary group is not a user-private group");
    TempDir root("bs-entry-upg");
    ::chmod(root.path().c_str(), 0755);
    fs::path entry = make_entry(root.path(), std::string(64, 'd'));
    ::chmod(entry.c_str(), 02775);
    ::chown(entry.c_str(), ::geteuid(), pw->pw_gid);
    ::chmod((entry / "entry.txt").c_str(), 0664);
    CHECK_FALSE(entry_other_writer(entry));
}
