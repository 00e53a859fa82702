#include "manifest/package_cache.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::manifest {

namespace {

// Bump when a field is added or the meaning of one changes.
constexpr std::string_view k_header = "bootstrap-packages-cache-v2";
constexpr size_t k_fields = 12;

bool storable(const std::string& s) { return s.find_first_of("\t\n") == std::string::npos; }

} // namespace

PackageCache PackageCache::load(fs::path file) {
    PackageCache cache;
    cache.m_file = std::move(file);
    auto text = core::read_file(cache.m_file);
    if (!text || !core::starts_with(*text, std::string(k_header) + "\n"))
        return cache;
    // One line per dist-info: path, RECORD size, mtime_ns, inode, then the facts.
    for (const auto& line :
         core::split(std::string_view(*text).substr(k_header.size() + 1), '\n')) {
        auto f = core::split(line, '\t');
        if (f.size() != k_fields)
            continue;
        Entry e;
        auto size = core::parse_int<uint64_t>(f[1]);
        auto mtime = core::parse_int<int64_t>(f[2]);
        auto inode = core::parse_int<uint64_t>(f[3]);
        if (!size || !mtime || !inode)
            continue; // a damaged line is a miss
        e.stamp = {*size, *mtime, *inode};
        e.facts.record_sha256 = f[4];
        e.facts.wheel_tag = f[5];
        e.facts.origin.kind = f[6];
        e.facts.origin.url = f[7];
        e.facts.origin.vcs = f[8];
        e.facts.origin.commit = f[9];
        e.facts.origin.archive_hash = f[10];
        e.facts.record_sha256_portable = f[11];
        cache.m_entries.emplace(f[0], std::move(e));
    }
    return cache;
}

const CachedPackageFacts* PackageCache::find(const pyenv::Distribution& dist) const {
    auto it = m_entries.find(dist.dist_info.string());
    // An all-zero stamp is a dist-info without RECORD: nothing vouches for its files.
    if (it == m_entries.end() || dist.record_stamp == pyenv::FileStamp{} ||
        !(it->second.stamp == dist.record_stamp))
        return nullptr;
    it->second.used = true;
    return &it->second.facts;
}

void PackageCache::put(const pyenv::Distribution& dist, CachedPackageFacts facts) {
    const Origin& o = facts.origin;
    const std::string key = dist.dist_info.string();
    if (dist.record_stamp == pyenv::FileStamp{})
        return;
    for (const std::string* s : std::initializer_list<const std::string*>{
             &key, &facts.record_sha256, &facts.wheel_tag, &o.kind, &o.url, &o.vcs, &o.commit,
             &o.archive_hash, &facts.record_sha256_portable})
        if (!storable(*s))
            return;
    m_entries[key] = Entry{dist.record_stamp, std::move(facts), true};
    m_dirty = true;
}

void PackageCache::save() {
    std::string out = std::string(k_header) + "\n";
    bool dropped = false;
    for (const auto& [path, e] : m_entries) {
        if (!e.used) {
            dropped = true;
            continue;
        }
        const Origin& o = e.facts.origin;
        out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", path,
                           e.stamp.size, e.stamp.mtime_ns, e.stamp.inode, e.facts.record_sha256,
                           e.facts.wheel_tag, o.kind, o.url, o.vcs, o.commit, o.archive_hash,
                           e.facts.record_sha256_portable);
    }
    // The cache lives in the venv's own state dir; failing to write it only costs speed.
    if (m_dirty || dropped)
        (void)core::write_file_atomic(m_file, out);
    m_dirty = false;
}

} // namespace bootstrap::manifest
