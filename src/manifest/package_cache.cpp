#include "manifest/package_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/strings.hpp"
#include "manifest/origin_json.hpp"

namespace bootstrap::manifest {

namespace {

// {"version": 4, "entries": {"<dist-info path>": {"stamp": [size, mtime_ns, inode],
//  "record_sha256": ..., "record_sha256_portable": ..., "wheel_tag": ..., "origin": {...}}}}
// (the origin as manifests write it: origin_json.hpp). Bump when a field is added or the meaning
// of one changes; another version is empty (v2 was tab-separated lines; v3's origin URLs were
// not yet redacted).
constexpr int k_cache_version = 4;

using core::JsonFields;
using nlohmann::json;

/// One entry, or nothing when it is damaged (a damaged entry is a miss, not an error).
std::optional<core::FileStamp> read_stamp(const JsonFields& e) {
    const json* st = e.find("stamp");
    if (!st || !st->is_array() || st->size() != 3 || !(*st)[0].is_number_unsigned() || !(*st)[1].is_number_integer() ||
        !(*st)[2].is_number_unsigned())
        return std::nullopt;
    return core::FileStamp{(*st)[0].get<uint64_t>(), (*st)[1].get<int64_t>(), (*st)[2].get<uint64_t>()};
}

}  // namespace

PackageCache PackageCache::load(fs::path file) {
    PackageCache cache;
    cache.m_file = std::move(file);
    auto text = core::read_file(cache.m_file);
    if (!text) return cache;
    using Entries = std::map<std::string, Entry>;
    auto entries = core::read_json(
        *text,
        [&](const JsonFields& top) -> Result<Entries> {
            if (top.integer("version") != k_cache_version) return fail(ErrorCode::not_found, "another version");
            Entries out;
            for (const auto& [path, e] : top.objects("entries")) {
                auto stamp = read_stamp(e);
                if (!stamp) continue;  // a damaged entry is a miss
                Entry entry;
                entry.stamp = *stamp;
                entry.facts.record_sha256 = e.str("record_sha256");
                entry.facts.record_sha256_portable = e.str("record_sha256_portable");
                entry.facts.wheel_tag = e.str("wheel_tag");
                if (auto o = e.object("origin")) entry.facts.origin = origin_from_json(*o);
                out.emplace(path, std::move(entry));
            }
            return out;
        },
        [](const std::string& why) -> Result<Entries> { return fail(ErrorCode::io, why); });
    if (entries) cache.m_entries = std::move(*entries);
    return cache;
}

const CachedPackageFacts* PackageCache::find(const pyenv::Distribution& dist) const {
    auto it = m_entries.find(dist.dist_info.string());
    // An all-zero stamp is a dist-info without RECORD: nothing vouches for its files.
    if (it == m_entries.end() || dist.record_stamp == core::FileStamp{} || !(it->second.stamp == dist.record_stamp))
        return nullptr;
    it->second.used = true;
    return &it->second.facts;
}

void PackageCache::put(const pyenv::Distribution& dist, CachedPackageFacts facts) {
    if (dist.record_stamp == core::FileStamp{}) return;
    m_entries[dist.dist_info.string()] = Entry{dist.record_stamp, std::move(facts), true};
    m_dirty = true;
}

void PackageCache::save() {
    json entries = json::object();
    bool dropped = false;
    for (const auto& [path, e] : m_entries) {
        if (!e.used) {
            dropped = true;
            continue;
        }
        entries[path] = json{
            {"stamp", {e.stamp.size, e.stamp.mtime_ns, e.stamp.inode}},
            {"record_sha256", e.facts.record_sha256},
            {"record_sha256_portable", e.facts.record_sha256_portable},
            {"wheel_tag", e.facts.wheel_tag},
            {"origin", origin_to_json(e.facts.origin)},
        };
    }
    // The cache lives in the venv's own state dir; failing to write it only costs speed.
    if (m_dirty || dropped) {
        json j{{"version", k_cache_version}, {"entries", std::move(entries)}};
        (void)core::write_file_atomic(m_file, j.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
    }
    m_dirty = false;
}

}  // namespace bootstrap::manifest
