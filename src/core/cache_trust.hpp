#pragma once
// The trust model of a shared cache entry (a build-cache entry, `$BOOTSTRAP_HOME/builds/<key>/`):
// an entry another user could have written (one of its files, or a directory on its path, is
// owned by another uid than ours or root's, or is world-writable, or group-writable by another
// group than our user-private one, without the sticky bit) is used only when it carries a valid
// signature by a trusted key (core/ed25519.hpp). The signature (`<entry>/signature`: "ed25519
// KEYID BASE64", then the signed text) covers a canonical text of the entry: its cache key and
// each file's name, size and sha256.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/ed25519.hpp"
#include "core/error.hpp"

namespace bootstrap::core {

namespace fs = std::filesystem;

/// Someone other than us (and root) who could have written a path.
struct OtherWriter {
    fs::path path;    // the file or directory that lets them
    std::string who;  // "uid 1001 (mallory)", "group builders (group-writable)", "anyone (world-writable)"
    [[nodiscard]] std::string describe() const;  // "uid 1001 (mallory), owner of PATH"
};

/// The first other writer of `entry`: its files (not followed), the entry directory, then each
/// directory above it up to '/'. nullopt when only we or root could have written it.
[[nodiscard]] std::optional<OtherWriter> entry_other_writer(const fs::path& entry);

/// The text an entry's signature covers: "bootstrap-cache-entry-v1\nkey KEY\n" then one
/// "file NAME SIZE SHA256" line per regular file but `signature`, sorted by name. Anything but
/// a regular file in the entry is an error (it cannot be signed).
[[nodiscard]] Result<std::string> entry_canonical_text(const fs::path& entry, const std::string& key);

/// Write `<entry>/signature` for the entry's current files.
[[nodiscard]] Status sign_entry(const fs::path& entry, const std::string& key, const SigningKey& signer);

struct EntryTrust {
    enum class State { ours, trusted, unsigned_entry, unknown_key, bad_signature };
    State state = State::ours;
    std::optional<OtherWriter> writer;  // set unless `ours`
    std::string signer;                 // the key's name (trusted) or id (unknown_key)
    std::string why;                    // for a refusal: what failed
    [[nodiscard]] bool usable() const { return state == State::ours || state == State::trusted; }
    /// One line: "written by uid 1001 (mallory) ...; signed by trusted key alice" / the refusal.
    [[nodiscard]] std::string describe() const;
};

/// How far `entry` may be trusted: `ours` when nobody else could have written it, else what its
/// signature says against `trusted` (asked for only then: the keys and libcrypto are loaded
/// only for entries that need them). `files_at` is where the entry's files are read to check
/// the signature (a private copy, so that what is verified is what gets installed), default
/// the entry itself.
[[nodiscard]] Result<EntryTrust> check_entry(const fs::path& entry, const std::string& key,
                                             const std::function<Result<const TrustedKeys*>()>& trusted,
                                             const fs::path& files_at = {});

}  // namespace bootstrap::core
