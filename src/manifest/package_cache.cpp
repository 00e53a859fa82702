#include "manifest/package_cache.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <vector>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "state/layout.hpp"

namespace bootstrap::manifest {

namespace {

// The file: a first line naming the format, then one line per dist-info, its fields
// tab-separated in k_fields' order, each with `\` `\t` `\n` `\r` escaped as `\\` `\t` `\n`
// `\r`. A line with another field count or a field that does not parse is a miss. Bump the
// version when a field is added or the meaning of one changes; another version is empty (v2
// was tab-separated with RECORD stamps only; v3 and v4 were JSON, read with a DOM: at 3,000
// packages parsing it cost more than the scan it saved; v5 had no Requires-Dist).
constexpr std::string_view k_header = "bootstrap-packages-cache-v6";
constexpr size_t k_fields = 21;

/// Requires-Dist values, each ended by a newline (so no values and one empty value differ).
std::string join_requires(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& value : values) {
        out += value;
        out += '\n';
    }
    return out;
}

std::vector<std::string> split_requires(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        out.emplace_back(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    return out;
}

/// How long after a stamp's time a read is safe from a change landing in the same timestamp
/// tick (which would leave the stamp equal): a time with a sub-second part comes from a
/// filesystem with fine timestamps, whose tick is the kernel's clock tick (at most 10 ms at
/// HZ=100); a whole-second one may come from one that keeps seconds (Lustre, ext3) or two
/// (FAT), so 2 s.
std::int64_t settle_margin_ns(const core::FileStamp& stamp) {
    constexpr std::int64_t second = 1'000'000'000;
    return stamp.mtime_ns % second == 0 ? 2 * second : 50'000'000;
}

void append_escaped(std::string& out, std::string_view value) {
    for (char c : value) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
}

/// Undo append_escaped; false on a dangling or unknown escape.
bool unescape(std::string_view in, std::string& out) {
    size_t first = in.find('\\');
    out.assign(in.substr(0, first));
    if (first == std::string_view::npos) return true;  // the common case: nothing escaped
    for (size_t i = first; i < in.size(); ++i) {
        if (in[i] != '\\') {
            out += in[i];
            continue;
        }
        if (++i == in.size()) return false;
        switch (in[i]) {
            case '\\': out += '\\'; break;
            case 't': out += '\t'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            default: return false;
        }
    }
    return true;
}

template <class Int>
bool parse_int(std::string_view text, Int& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

/// One line's fields split at tabs (escaped tabs are `\t`, never a raw tab).
bool split_fields(std::string_view line, std::array<std::string_view, k_fields>& fields) {
    size_t n = 0, start = 0;
    for (;;) {
        size_t tab = line.find('\t', start);
        if (n == k_fields) return false;
        fields[n++] = line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
        if (tab == std::string_view::npos) break;
        start = tab + 1;
    }
    return n == k_fields;
}

bool parse_stamp(const std::array<std::string_view, k_fields>& x, size_t at, core::FileStamp& stamp) {
    return parse_int(x[at], stamp.size) && parse_int(x[at + 1], stamp.mtime_ns) && parse_int(x[at + 2], stamp.inode);
}

/// The scan's facts of a split line (its stamps too).
bool parse_distribution(const std::array<std::string_view, k_fields>& x, pyenv::Distribution& d) {
    std::string requested, requires_dist;
    return parse_stamp(x, 1, d.dir_stamp) && parse_stamp(x, 4, d.record_stamp) && unescape(x[7], d.name) &&
           unescape(x[8], d.version) && unescape(x[9], d.installer) && unescape(x[10], requested) &&
           (requested == "0" || requested == "1") && (d.requested = requested == "1", true) &&
           unescape(x[19], d.normalized_name) && unescape(x[20], requires_dist) &&
           (d.requires_dist = split_requires(requires_dist), true) && !d.name.empty() && !d.normalized_name.empty() &&
           d.record_stamp != core::FileStamp{};
}

/// The snapshot's facts of a split line.
bool parse_facts(const std::array<std::string_view, k_fields>& x, CachedPackageFacts& f) {
    std::string kind;
    return unescape(x[11], f.record_sha256) && unescape(x[12], f.record_sha256_portable) &&
           unescape(x[13], f.wheel_tag) && unescape(x[14], kind) && (f.origin.kind = parse_origin_kind(kind), true) &&
           unescape(x[15], f.origin.url) && unescape(x[16], f.origin.vcs) && unescape(x[17], f.origin.commit) &&
           unescape(x[18], f.origin.archive_hash);
}

void append_entry(std::string& out, std::string_view path, const pyenv::Distribution& d, const CachedPackageFacts& f) {
    auto field = [&](std::string_view value) {
        append_escaped(out, value);
        out += '\t';
    };
    auto number = [&](auto value) {
        out += std::to_string(value);
        out += '\t';
    };
    field(path);
    number(d.dir_stamp.size);
    number(d.dir_stamp.mtime_ns);
    number(d.dir_stamp.inode);
    number(d.record_stamp.size);
    number(d.record_stamp.mtime_ns);
    number(d.record_stamp.inode);
    field(d.name);
    field(d.version);
    field(d.installer);
    field(d.requested ? "1" : "0");
    field(f.record_sha256);
    field(f.record_sha256_portable);
    field(f.wheel_tag);
    field(to_string(f.origin.kind));
    field(f.origin.url);
    field(f.origin.vcs);
    field(f.origin.commit);
    field(f.origin.archive_hash);
    field(d.normalized_name);
    append_escaped(out, join_requires(d.requires_dist ? *d.requires_dist : std::vector<std::string>{}));
    out += '\n';
}

}  // namespace

PackageCache PackageCache::load(fs::path file) {
    PackageCache cache;
    cache.m_file = std::move(file);
    cache.start_pass();
    auto text = core::read_file(cache.m_file);
    if (!text) return cache;
    cache.m_text = std::make_shared<const std::string>(std::move(*text));
    std::string_view rest = *cache.m_text;
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos || rest.substr(0, nl) != k_header) return cache;
    rest.remove_prefix(nl + 1);
    cache.m_entries.reserve(static_cast<size_t>(std::count(rest.begin(), rest.end(), '\n')) + 1);
    std::string key;
    while (!rest.empty()) {
        nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        // Only the key is read now: the rest of a line is parsed when it is looked up.
        std::string_view escaped = line.substr(0, line.find('\t'));
        if (escaped.size() == line.size() || !unescape(escaped, key)) continue;  // a damaged line is a miss
        std::string_view stored = key == escaped ? escaped : cache.keep_key(key);
        Entry entry;
        entry.line = line;
        entry.settled = true;  // save() writes only settled entries
        cache.m_entries.insert_or_assign(stored, std::move(entry));
    }
    return cache;
}

PackageCache PackageCache::of_venv(const fs::path& venv) { return load(state::Layout(venv).packages_cache()); }

std::string_view PackageCache::keep_key(std::string key) { return m_keys->emplace_back(std::move(key)); }

namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

void PackageCache::start_pass() {
    m_pass_start = now_ns();
    m_settles_at = 0;
    m_unsettled = 0;
}

bool PackageCache::recall(const fs::path& site_packages, std::string_view entry, const core::FileStamp& dir,
                          pyenv::Distribution& out) const {
    // The key as (site_packages / entry).native() spells it, without building a path.
    m_key.assign(site_packages.native());
    if (!m_key.empty() && m_key.back() != '/') m_key += '/';
    m_key.append(entry);
    auto it = m_entries.find(m_key);
    if (it == m_entries.end() || !it->second.settled || it->second.damaged) return false;
    const Entry& e = it->second;
    if (e.put) {
        if (!(e.put->dist.dir_stamp == dir)) return false;
        out = e.put->dist;
    } else {
        std::array<std::string_view, k_fields> x;
        core::FileStamp stamp;
        if (!split_fields(e.line, x) || !parse_stamp(x, 1, stamp)) {
            e.damaged = true;
            return false;
        }
        if (!(stamp == dir)) return false;
        if (!parse_distribution(x, out)) {
            e.damaged = true;
            out = pyenv::Distribution{};
            return false;
        }
    }
    e.used = true;
    return true;
}

std::optional<CachedPackageFacts> PackageCache::find(const pyenv::Distribution& dist) const {
    auto it = m_entries.find(std::string_view(dist.dist_info_path));
    // An all-zero stamp is a dist-info without RECORD: nothing vouches for its files.
    if (it == m_entries.end() || !it->second.settled || it->second.damaged || dist.record_stamp == core::FileStamp{})
        return std::nullopt;
    const Entry& e = it->second;
    if (e.put) {
        if (!(e.put->dist.record_stamp == dist.record_stamp) || !(e.put->dist.dir_stamp == dist.dir_stamp))
            return std::nullopt;
        e.used = true;
        return e.put->facts;
    }
    std::array<std::string_view, k_fields> x;
    core::FileStamp dir, record;
    CachedPackageFacts facts;
    if (!split_fields(e.line, x) || !parse_stamp(x, 1, dir) || !parse_stamp(x, 4, record) || !parse_facts(x, facts)) {
        e.damaged = true;
        return std::nullopt;
    }
    if (!(record == dist.record_stamp) || !(dir == dist.dir_stamp)) return std::nullopt;
    e.used = true;
    return facts;
}

void PackageCache::put(const pyenv::Distribution& dist, CachedPackageFacts facts) {
    if (dist.record_stamp == core::FileStamp{} || !dist.broken.empty() || !dist.requires_dist) return;
    // Read at or after the pass started: settled when both stamps were over by then.
    auto settled = [&](const core::FileStamp& stamp) {
        return stamp.mtime_ns < m_pass_start - settle_margin_ns(stamp);
    };
    bool now_settled = settled(dist.dir_stamp) && settled(dist.record_stamp);
    if (!now_settled) {
        ++m_unsettled;
        m_settles_at = std::max({m_settles_at, dist.dir_stamp.mtime_ns + settle_margin_ns(dist.dir_stamp),
                                 dist.record_stamp.mtime_ns + settle_margin_ns(dist.record_stamp)});
    }
    Entry entry;
    entry.put = std::make_shared<Put>(Put{dist, std::move(facts)});
    entry.used = true;
    entry.settled = now_settled;
    auto it = m_entries.find(std::string_view(dist.dist_info_path));
    if (it != m_entries.end()) it->second = std::move(entry);
    else m_entries.emplace(keep_key(dist.dist_info_path), std::move(entry));
    m_dirty = true;
}

std::int64_t PackageCache::unsettled_wait_ns(size_t at_least) const {
    if (m_settles_at == 0 || m_unsettled < at_least) return 0;
    return std::max<std::int64_t>(m_settles_at - now_ns(), 1);
}

void PackageCache::save() {
    std::vector<const decltype(m_entries)::value_type*> kept;
    kept.reserve(m_entries.size());
    bool dropped = false;
    for (const auto& entry : m_entries) {
        if (entry.second.used && entry.second.settled && !entry.second.damaged) kept.push_back(&entry);
        else dropped = true;
    }
    // The cache lives in the venv's own state dir; failing to write it only costs speed.
    if (!m_dirty && !dropped) return;
    std::sort(kept.begin(), kept.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    std::string out(k_header);
    out += '\n';
    out.reserve(kept.size() * 400);
    for (const auto* entry : kept) {
        const Entry& e = entry->second;
        if (e.put) {
            append_entry(out, entry->first, e.put->dist, e.put->facts);
        } else {  // as loaded: looked up, so its line parsed
            out += e.line;
            out += '\n';
        }
    }
    (void)core::write_file_atomic(m_file, out, 0644, core::Durability::unsynced);
    m_dirty = false;
}

}  // namespace bootstrap::manifest
