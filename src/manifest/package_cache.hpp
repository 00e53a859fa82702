#pragma once
// What a snapshot reads from each `*.dist-info`, cached in `<venv>/.bootstrap/packages.cache`
// under the dist-info directory's stat stamp (pyenv::ScanMemo says what that stamp catches):
// the scan's facts (name, version, INSTALLER, REQUESTED, RECORD's stamp) and the rest (the
// RECORD digest, WHEEL tags, the direct_url.json origin). A repeated snapshot then costs one
// stat call per package and no open; only what changed is read. An entry is trusted (recalled,
// found, written) only when it was read after its stamps' timestamp tick was over: a change
// within that tick would leave the stamp equal (settle_margin_ns: 50 ms after a stamp with a
// sub-second part, 2 s after a whole-second one).

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/error.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/dist_info.hpp"

namespace bootstrap::manifest {

struct CachedPackageFacts {
    std::string record_sha256;
    std::string record_sha256_portable;
    std::string wheel_tag;
    Origin origin;  // as read from direct_url.json / INSTALLER (no engine annotations)
};

class PackageCache final : public pyenv::ScanMemo {
public:
    /// Load `file`; a missing, stale-format or unreadable cache is simply empty, and a damaged
    /// line is a miss for its package only. Lines are parsed when looked up, straight into the
    /// caller's objects.
    [[nodiscard]] static PackageCache load(fs::path file);
    /// load() of the venv's own cache (`<venv>/.bootstrap/packages.cache`): what a snapshot, a
    /// no-op check and `plan` scan the venv with.
    [[nodiscard]] static PackageCache of_venv(const fs::path& venv);

    /// A scan starts: what is put from now on was read no earlier than this moment.
    void start_pass();

    /// pyenv::ScanMemo: fills `out` with the distribution scanned from `dist_info` while both
    /// stamps still hold.
    [[nodiscard]] bool recall(const fs::path& site_packages, std::string_view entry, const core::FileStamp& dir,
                              pyenv::Distribution& out) const override;

    /// The cached facts for a whole distribution whose stamps still match the cache's.
    [[nodiscard]] std::optional<CachedPackageFacts> find(const pyenv::Distribution& dist) const;
    /// Remember a whole distribution (a broken one, or one without RECORD, is never cached).
    void put(const pyenv::Distribution& dist, CachedPackageFacts facts);
    /// Nanoseconds until every entry put since start_pass() that was read too soon after its
    /// stamps (not settled) would be settled if read again; 0 when there are fewer than
    /// `at_least` such entries.
    [[nodiscard]] std::int64_t unsettled_wait_ns(size_t at_least = 1) const;
    /// Rewrite the file atomically when something was added or is gone, keeping only the
    /// entries looked up or put since load (so uninstalled packages drop out). Best effort.
    void save();

private:
    struct Put {
        pyenv::Distribution dist;  // as scanned: name, version, installer, requested, stamps
        CachedPackageFacts facts;
    };
    struct Entry {
        std::string_view line;     // the loaded line, whole (key first); empty for a put one
        std::shared_ptr<Put> put;  // what put() was given, else null
        mutable bool used = false;
        mutable bool damaged = false;  // its line did not parse: dropped on save
        bool settled = false;          // read after its stamps' tick was over (loaded ones were)
    };
    /// The key as stored (a loaded key without escapes is a view of m_text), kept alive here.
    std::string_view keep_key(std::string key);

    fs::path m_file;
    std::shared_ptr<const std::string> m_text;                                                      // the loaded file
    std::shared_ptr<std::deque<std::string>> m_keys = std::make_shared<std::deque<std::string>>();  // not in m_text
    std::unordered_map<std::string_view, Entry> m_entries;  // by dist-info directory path
    mutable std::string m_key;                              // lookup key, reused
    bool m_dirty = false;
    std::int64_t m_pass_start = 0;  // start_pass()'s time, ns since the epoch
    std::int64_t m_settles_at = 0;  // when the unsettled entries put would settle, 0: none
    size_t m_unsettled = 0;         // how many were put unsettled
};

}  // namespace bootstrap::manifest
