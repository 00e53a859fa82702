#pragma once
// What a snapshot reads from each `*.dist-info` beyond the scan (the RECORD digest, WHEEL tags,
// the direct_url.json origin), cached in `<venv>/.bootstrap/packages.cache` under the RECORD's
// stat stamp. Installers write RECORD last and rewrite it on every (re)install, so an unchanged
// stamp means an unchanged dist-info -- the same trust the journal's stamps place in it. A
// repeated snapshot then reads one file instead of three per package.

#include <filesystem>
#include <map>
#include <string>

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

class PackageCache {
public:
    /// Load `file`; a missing, stale-format or unreadable cache is simply empty.
    [[nodiscard]] static PackageCache load(fs::path file);

    /// The cached facts for a dist-info directory whose RECORD still has `stamp`.
    [[nodiscard]] const CachedPackageFacts* find(const pyenv::Distribution& dist) const;
    void put(const pyenv::Distribution& dist, CachedPackageFacts facts);
    /// Rewrite the file atomically when something was added or is gone, keeping only the
    /// entries looked up or put since load (so uninstalled packages drop out). Best effort.
    void save();

private:
    struct Entry {
        core::FileStamp stamp;
        CachedPackageFacts facts;
        mutable bool used = false;
    };
    fs::path m_file;
    std::map<std::string, Entry> m_entries;  // by dist-info directory path
    bool m_dirty = false;
};

}  // namespace bootstrap::manifest
