// `cache keygen`: this user's Ed25519 key for signing the build-cache entries it writes
// (core/ed25519.hpp; the trust model: core/cache_trust.hpp, README "Many nodes").
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "core/ed25519.hpp"
#include "core/fs.hpp"
#include "exec/environment.hpp"
#include "manifest/artifacts.hpp"

namespace bootstrap::cli {

namespace {

struct KeygenArgs {
    std::string name;
};

std::string default_key_name() {
    char host[256] = {};
    (void)::gethostname(host, sizeof host - 1);
    // key_dir ends in the user's name.
    return fmt::format("{}@{}", core::key_dir("/").filename().string(), host);
}

int execute_keygen(const KeygenArgs& args) {
    const auto home = manifest::bootstrap_home(exec::current_environment());
    auto key = core::create_signing_key(home, args.name.empty() ? default_key_name() : args.name);
    if (!key) return report_error(key.error());
    const auto dir = core::key_dir(home);
    fmt::print("created signing key '{}' (id {}): {} (mode 0600; it never leaves {})\n", key->name, key->public_key.id,
               (dir / "ed25519.key").string(), dir.string());
    fmt::print("build-cache entries you write are signed with it from now on. Its public key, also in {}:\n\n",
               (dir / "ed25519.pub").string());
    fmt::print("{}\n\n", key->public_key.line());
    fmt::print(
        "Users who should install your entries add that line to their {} (or /etc/bootstrap/trusted-keys, "
        "or BOOTSTRAP_TRUSTED_KEYS).\n",
        (home / "trusted-keys").string());
    return 0;
}

}  // namespace

void set_cache_command(CLI::App& app, Outcome& outcome) {
    auto* cmd = app.add_subcommand("cache", "Sign what you add to a shared build cache ($BOOTSTRAP_HOME/builds)");
    cmd->require_subcommand(1);
    auto args = std::make_shared<KeygenArgs>();
    auto* keygen = cmd->add_subcommand(
        "keygen", "Make your Ed25519 signing key (in $BOOTSTRAP_HOME/keys/USER/) and print its public key");
    keygen->add_option("--name", args->name, "The key's name in trusted-keys lines (default: USER@HOST)");
    keygen->footer(
        "A build-cache entry another user could have written (a file or a directory on its path owned\n"
        "by another uid, or group/world-writable, as in a cache a group shares) is installed only when\n"
        "it is signed by a trusted key; otherwise the step is built here. Trusted keys: the lines\n"
        "(NAME:BASE64, '#' comments) of $BOOTSTRAP_HOME/trusted-keys and /etc/bootstrap/trusted-keys,\n"
        "or BOOTSTRAP_TRUSTED_KEYS (space-separated) instead of both, plus your own key. `doctor`\n"
        "names each entry's writer and whether it is trusted.\n"
        "Exit codes: 0 ok, 1 failed, 2 a key exists already (remove it first to replace it).");
    keygen->callback([args, &outcome] { outcome.exit_code = execute_keygen(*args); });
}

}  // namespace bootstrap::cli
