#pragma once
// Ed25519 signatures (OpenSSL 3's EVP, from the system's libcrypto.so.3 dlopen()ed on first
// use: the static binary keeps only SHA-256, so a no-op run and `--version` never relocate
// EVP's provider tables), signing keys and the trusted-keys list, in Nix's `name:base64` form.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::core {

namespace fs = std::filesystem;

[[nodiscard]] std::string base64_encode(std::string_view bytes);
/// Standard base64 with padding; nullopt-like error on anything else.
[[nodiscard]] Result<std::string> base64_decode(std::string_view text);

/// A public key: its name (who it stands for), the raw 32 bytes and its id, the first 16 hex
/// digits of the sha256 of the raw key (what a signature names).
struct PublicKey {
    std::string name;
    std::string raw;
    std::string id;
    /// "name:base64", a trusted-keys line.
    [[nodiscard]] std::string line() const;
};

/// Read "name:base64" (a 32-byte key). Errors name `where` (file:line, or a variable).
[[nodiscard]] Result<PublicKey> parse_public_key(std::string_view text, std::string_view where);

struct SigningKey {
    std::string name;
    std::string seed;  // the raw 32-byte private key
    PublicKey public_key;
};

/// A new key named `name`, from getrandom(2).
[[nodiscard]] Result<SigningKey> generate_signing_key(std::string name);

/// The base64 Ed25519 signature of `message`.
[[nodiscard]] Result<std::string> sign(const SigningKey& key, std::string_view message);

/// True when `signature` (base64) is `key`'s signature of `message`.
[[nodiscard]] Result<bool> verify(const PublicKey& key, std::string_view message, std::string_view signature);

/// This user's key directory, `<home>/keys/<user>/` (mode 0700): `ed25519.key` (0600, the
/// private key, never leaves it) and `ed25519.pub` (the line others add to their trusted keys).
[[nodiscard]] fs::path key_dir(const fs::path& home);

/// Write a new key into key_dir(home); refuses to replace one (the error names it).
[[nodiscard]] Result<SigningKey> create_signing_key(const fs::path& home, std::string name);

/// This user's signing key, nullopt when there is none. A key file or directory another user
/// could read or replace (not ours, or group/other bits) is an error naming it.
[[nodiscard]] Result<std::optional<SigningKey>> load_signing_key(const fs::path& home);

/// The keys whose signatures this user trusts, by id: `BOOTSTRAP_TRUSTED_KEYS` (whitespace-
/// separated `name:base64`) when set, else the lines of `<home>/trusted-keys` and
/// `/etc/bootstrap/trusted-keys` ('#' comments), plus this user's own key. A trusted-keys file
/// another user could write (not owned by us or root, or group/other-writable) is an error.
struct TrustedKeys {
    std::map<std::string, PublicKey> by_id;
    std::vector<std::string> sources;  // where they came from, for messages
};
[[nodiscard]] Result<TrustedKeys> load_trusted_keys(const fs::path& home, const std::map<std::string, std::string>& env,
                                                    const fs::path& system_file = "/etc/bootstrap/trusted-keys");

/// Parse a trusted-keys text (one `name:base64` a line, '#' comments); errors name file:line.
[[nodiscard]] Result<std::vector<PublicKey>> parse_trusted_keys(std::string_view text, const std::string& file);

}  // namespace bootstrap::core
