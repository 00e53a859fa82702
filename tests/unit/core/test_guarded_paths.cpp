#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/guarded_paths.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

TEST_CASE("whole_directory_refusal names /, the system's directories, home and its ancestors") {
    core::TempDir dir;
    const fs::path home = dir.path() / "home" / "alice";
    fs::create_directories(home / "proj");
    auto why = [&](const fs::path& p) { return core::whole_directory_refusal(p, home).value_or(""); };
    CHECK(why("/") == "the root of the file system");
    for (const char* sys : {"/etc", "/usr", "/var", "/root", "/proc", "/sys", "/dev", "/boot"})
        CHECK(why(sys) == fmt::format("a system directory ({})", sys));
    CHECK(why("/etc/") == "a system directory (/etc)");
    CHECK(why("/usr/../etc") == "a system directory (/etc)");
    CHECK(why(home) == "the home directory");
    CHECK(why(home / "") == "the home directory");
    CHECK(why(dir.path() / "home").starts_with("an ancestor of the home directory"));
    fs::create_directory_symlink(home, dir.path() / "link");
    CHECK(why(dir.path() / "link") == "the home directory");
    // A directory of its own, anywhere, is fine.
    CHECK(why(home / "proj").empty());
    CHECK(why("/etc/ssl").empty());
    CHECK(why("/usr/local/src").empty());
    CHECK(core::whole_directory_refusal("/opt/x", "").value_or("") == "");
}

TEST_CASE("credential_file_rule knows credential files by their names wherever they lie") {
    auto rule = [](const char* p) { return core::credential_file_rule(p).value_or(""); };
    CHECK(rule("/home/a/.ssh/id_ed25519") == "an SSH private key (.ssh/id_*)");
    CHECK(rule("/x/keys/.ssh/id_rsa") == "an SSH private key (.ssh/id_*)");
    CHECK(rule("/home/a/.netrc") == ".netrc");
    CHECK(rule("/home/a/.pypirc") == ".pypirc");
    CHECK(rule("/home/a/.aws/credentials") == ".aws/credentials");
    CHECK(rule("/home/a/.docker/config.json") == ".docker/config.json");
    CHECK(rule("/home/a/.git-credentials") == ".git-credentials");
    CHECK(rule("/home/a/.local/share/keyrings/login.keyring") == "a keyring (*.keyring)");
    CHECK(rule("/home/a/.local/share/keyrings/user.keystore") == "a keyring (share/keyrings/)");
    CHECK(rule("/home/a/.local/share/python_keyring/keyring_pass.cfg") == "a keyring (python_keyring/)");
    CHECK(rule("/home/a/.gnupg/private-keys-v1.d/ABC.key") == "a GnuPG private key (.gnupg/private-keys-v1.d/)");
    // Their neighbours are not.
    CHECK(rule("/home/a/.ssh/known_hosts").empty());
    CHECK(rule("/home/a/.ssh/id_ed25519.pub").empty());  // the public half
    CHECK(rule("/src/proj/credentials").empty());
    CHECK(rule("/src/proj/config.json").empty());
    CHECK(rule("/src/keyrings/setup.py").empty());
}
