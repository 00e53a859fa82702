#pragma once
// The build cache: `$BOOTSTRAP_HOME/builds/<key>/` holds one built wheel, `inputs.txt` (every
// input of its key, readable), `build.log` and `entry.txt`. The key digests everything that
// decides binary compatibility, so a later run, another venv or another node sharing the home
// installs the wheel without building. One builder per key: a file lock, then a staging
// directory published by rename. An entry another user could have written is installed only
// when signed by a trusted key (core/cache_trust.hpp), from a private copy that was checked.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cache_trust.hpp"
#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace bootstrap::steps {

namespace fs = std::filesystem;

/// The inputs of a build-cache key, as text (what `plan --explain` shows).
struct BuildInputs {
    std::string source;  // "git URL@REV", "sha256 HEX" (archive), "tree HEX" (directory)
    std::string subdirectory;
    std::string python;                     // "cpython 3.11.7"
    std::string ext_suffix;                 // ".cpython-311-x86_64-linux-gnu.so"
    std::string platform;                   // "linux-x86_64 glibc 2.36"
    std::string torch;                      // "2.11.0+cu130 cuda 13.0 cxx11_abi 1", or "not installed"
    std::vector<std::string> abi_packages;  // "torch 2.11.0+cu130", ...
    std::string nvcc;                       // "13.0", or "none"
    std::string compiler;                   // first line of `c++ --version`
    std::string libstdcxx;                  // the newest GLIBCXX_ version the compiler's libstdc++ defines
    std::string arch_list;                  // the arches `{device.*}` stood for ("" when the step uses none)
    std::vector<std::string> env;           // NAME=value the build sees that can change its output
    std::string frontend;                   // "uv build" / "pip wheel"
    bool no_build_isolation = false;
    std::vector<std::string> config_settings;  // "key=value"
};

struct BuildKey {
    std::string digest;   // hex
    std::string explain;  // one "field: value" line per input
};

[[nodiscard]] BuildKey make_build_key(const BuildInputs& inputs);

/// Variables that only say how fast to build (MAX_JOBS, ...): left out of the key, so nodes
/// with different core counts share builds.
[[nodiscard]] bool is_parallelism_variable(const std::string& name);

class BuildCache {
public:
    explicit BuildCache(fs::path root) : m_root(std::move(root)) {}

    struct Entry {
        fs::path dir;
        fs::path wheel;
        std::string sha256;
        double build_seconds = 0;
        std::string built_at;
        std::string host;
        bool published = true;  // false: a build the cache could not take, installed from staging
    };

    /// The entry for `key` when it is complete and its wheel still has the recorded sha256.
    [[nodiscard]] std::optional<Entry> find(const std::string& key) const;

    /// find() under the trust rule: an entry another user could have written is copied into
    /// `private_dir` (created; the caller removes it), its signature checked on the copy, and
    /// returned pointing into the copy when a trusted key signed it. Otherwise nullopt, and
    /// `*passed_over` says whose entry it was and why it was not used.
    [[nodiscard]] Result<std::optional<Entry>> find_trusted(
        const std::string& key, const fs::path& private_dir,
        const std::function<Result<const core::TrustedKeys*>()>& trusted_keys,
        std::optional<core::EntryTrust>* passed_over) const;

    /// Whether this user can add entries (creates the root, group-writable when setgid).
    [[nodiscard]] bool writable() const;

    /// The lock one builder of `key` holds while building (waits, interruptibly, for another).
    [[nodiscard]] Result<core::FileLock> lock(const std::string& key, double timeout_s,
                                              const std::function<void(long pid)>& on_wait) const;

    /// A fresh, empty staging directory for building `key`: `<root>/.tmp-<key>-<pid>`.
    [[nodiscard]] Result<fs::path> staging(const std::string& key) const;

    /// Where this process copies or extracts the source to build `key`:
    /// `<root>/.src-<key>-<pid>` (extraction's own temporary is `..src-<key>-<pid>.tmp-<pid>`).
    [[nodiscard]] fs::path source_copy(const std::string& key) const;

    /// With `key`'s lock held: remove the staging dirs and source copies of `key` that builders
    /// that died left (their pid is gone); a live process's are never touched. Returns them.
    std::vector<fs::path> remove_leftovers(const std::string& key) const;

    /// Publish a staging directory holding exactly one wheel: write `inputs.txt` and
    /// `entry.txt`, sign it with `signer` (when given), then rename it to `<root>/<key>`,
    /// replacing an entry find_trusted passed over. Remove it on any failure. An old entry this
    /// user cannot remove stays: the build is returned unpublished, in the staging directory.
    [[nodiscard]] Result<Entry> publish(const std::string& key, const fs::path& staging_dir, const std::string& inputs,
                                        double build_seconds, const core::SigningKey* signer = nullptr) const;

    [[nodiscard]] const fs::path& root() const { return m_root; }

private:
    fs::path m_root;
};

}  // namespace bootstrap::steps
