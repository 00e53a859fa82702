#pragma once
// The build cache: `$BOOTSTRAP_HOME/builds/<key>/` holds one built wheel, `inputs.txt` (every
// input of its key, readable), `build.log` and `entry.txt`. The key digests everything that
// decides binary compatibility, and the source by its content only (a git commit, an archive's
// sha256, a tree digest; never where it was fetched from), so a later run, another venv, another
// clone path or mirror of the commit, or another node sharing the home installs the wheel
// without building. Entries of the previous scheme (bootstrap-build-v1, whose git keys held the
// URL) are found and re-keyed (adopt_v1), not rebuilt. One builder per key: a file lock, then a staging
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
    std::string source;       // "git REV[ +submodules]", "sha256 HEX" (archive), "tree HEX" (directory)
    std::string source_from;  // where it was fetched from (URL redacted, or path): shown, not keyed
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
    /// An sdist's build dependencies as the isolated build gets them ("setuptools==80.9.0"), or
    /// as the venv has them ("torch 2.11.0"): keyed by make_source_build_key only.
    std::vector<std::string> build_requires;
};

struct BuildKey {
    std::string digest;   // hex
    std::string explain;  // one "field: value" line per input, and a "# source from: ..." comment
    BuildInputs inputs;
};

/// The key, scheme bootstrap-build-v2: `source_from` is shown in `explain`, never hashed.
[[nodiscard]] BuildKey make_build_key(const BuildInputs& inputs);

/// The key of a package an install step builds from its sdist (steps/source_build.hpp), scheme
/// bootstrap-sdist-build-v1: the sdist's sha256, its build requirements' versions, the Python,
/// platform, environment, frontend and settings; `pure` leaves out what only a compiled wheel
/// depends on (ext_suffix, torch, ABI packages, nvcc, compiler, libstdc++, arches): a wheel
/// that comes out `none-any` is published under that key, so a torch bump keeps it.
[[nodiscard]] BuildKey make_source_build_key(const BuildInputs& inputs, bool pure);
inline constexpr const char* k_source_build_key_scheme = "bootstrap-sdist-build-v1";

/// The scheme before: the same inputs, a git source as "git URL@REV[ +submodules]"
/// (`v1_source`). Its explain is what a v1 entry's inputs.txt holds.
[[nodiscard]] BuildKey make_build_key_v1(const BuildInputs& inputs, const std::string& v1_source);

/// A v1 source as v2 keys it: "git URL@REV[ +submodules]" -> "git REV[ +submodules]"; an
/// archive's or directory's is unchanged.
[[nodiscard]] std::string content_source(std::string_view v1_source);

inline constexpr const char* k_build_key_scheme_v1 = "bootstrap-build-v1";
/// How many v1 entries adopt_v1 examines at most (each: a directory name and its inputs.txt).
inline constexpr size_t k_v1_entries_examined = 1000;

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
        bool published = true;     // false: a build the cache could not take, installed from staging
        std::string rekeyed_from;  // "bootstrap-build-v1 KEY": adopted from an entry of that scheme
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
    /// `origin`: an entry re-keyed, whose built_at, host and rekeyed_from are kept.
    [[nodiscard]] Result<Entry> publish(const std::string& key, const fs::path& staging_dir, const std::string& inputs,
                                        double build_seconds, const core::SigningKey* signer = nullptr,
                                        const Entry* origin = nullptr) const;

    /// The bootstrap-build-v1 entry that `inputs` would have hit: its key recomputed from
    /// `inputs` (for a git source, with the URL each v1 entry's inputs.txt names: the same
    /// commit fetched from anywhere), at most k_v1_entries_examined entries examined. Its key.
    [[nodiscard]] std::optional<std::string> find_v1(const BuildInputs& inputs) const;

    /// When `key` (v2) misses, with its lock held: find_v1, checked under the same trust rule
    /// as find_trusted (`private_dir`, `passed_over`), then, when `publish_it`, copied under
    /// `key` (its wheel and build.log; inputs.txt the v2 inputs, entry.txt its built_at and
    /// host and `rekeyed_from = bootstrap-build-v1 V1KEY`, signed by `signer`); the v1 entry is
    /// kept. Otherwise the v1 entry itself (or its checked copy). nullopt when none is usable.
    [[nodiscard]] Result<std::optional<Entry>> adopt_v1(
        const BuildKey& key, const fs::path& private_dir,
        const std::function<Result<const core::TrustedKeys*>()>& trusted_keys,
        std::optional<core::EntryTrust>* passed_over, bool publish_it, const core::SigningKey* signer) const;

    [[nodiscard]] const fs::path& root() const { return m_root; }

private:
    fs::path m_root;
};

}  // namespace bootstrap::steps
