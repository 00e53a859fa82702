#include "engine/rollback_fixup.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"

namespace bootstrap::engine {

namespace {

/// The path field of a RECORD row.
std::string row_path(const std::string& row) { return pyenv::parse_record_row(row).path; }

struct Record {
    std::vector<std::string> rows;
    std::string eol = "\n";

    static Record parse(const std::string& text) {
        Record r;
        if (text.find("\r\n") != std::string::npos) r.eol = "\r\n";
        size_t start = 0;
        while (start < text.size()) {
            size_t end = text.find(r.eol, start);
            if (end == std::string::npos) end = text.size();
            r.rows.push_back(text.substr(start, end - start));
            start = end + r.eol.size();
        }
        return r;
    }
    [[nodiscard]] std::string text() const {
        std::string out;
        for (const auto& row : rows) out += row + eol;
        return out;
    }
    [[nodiscard]] std::optional<size_t> find(const std::string& path) const {
        for (size_t i = 0; i < rows.size(); ++i)
            if (row_path(rows[i]) == path) return i;
        return std::nullopt;
    }
    void erase(const std::string& path) {
        if (auto i = find(path)) rows.erase(rows.begin() + static_cast<long>(*i));
    }
    /// Replace the row for `path`, or insert it where sorted order puts it (pip and uv both
    /// write RECORD sorted by path).
    void put(const std::string& path, const std::string& content) {
        std::string row = fmt::format("{},{},{}", path, pyenv::record_hash(content), content.size());
        if (auto i = find(path)) {
            rows[*i] = row;
            return;
        }
        auto it = rows.begin();
        while (it != rows.end() && row_path(*it) < path) ++it;
        rows.insert(it, row);
    }
};

/// `text` with the string value of its first "url" key replaced by `url` (JSON-escaped), or
/// nullopt when there is no such value. Textual, so the installer's formatting is kept.
std::optional<std::string> replace_url(const std::string& text, const std::string& url) {
    size_t key = text.find("\"url\"");
    if (key == std::string::npos) return std::nullopt;
    size_t open = text.find('"', text.find(':', key + 5));
    if (open == std::string::npos) return std::nullopt;
    size_t close = open + 1;
    while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
    if (close >= text.size()) return std::nullopt;
    std::string escaped;
    for (char c : url) {
        if (c == '"' || c == '\\') escaped += '\\';
        escaped += c;
    }
    return text.substr(0, open + 1) + escaped + text.substr(close);
}

enum class UrlFix { keep, relocate, drop };

struct Variant {
    bool requested = false;
    UrlFix url = UrlFix::keep;
};

std::string normal_path(const std::string& record_path) { return fs::path(record_path).lexically_normal().string(); }

}  // namespace

Result<bool> match_record(const fs::path& dist_info, const manifest::Package& target) {
    if (target.record_sha256.empty()) return false;
    BS_TRY(auto record_text, core::read_file(dist_info / "RECORD"));
    if (pyenv::record_text_digest(record_text) == target.record_sha256) return true;

    const std::string prefix = dist_info.filename().string() + "/";
    const std::string requested_path = prefix + "REQUESTED";
    const std::string direct_url_path = prefix + "direct_url.json";
    const Record base = Record::parse(record_text);
    const bool has_requested = base.find(requested_path).has_value();
    const bool has_direct_url = base.find(direct_url_path).has_value();

    std::optional<std::string> relocated;
    if (!target.origin.url.empty() && has_direct_url) {
        if (auto text = core::read_file(dist_info / "direct_url.json"))
            if (auto moved = replace_url(*text, target.origin.url); moved && *moved != *text) relocated = moved;
    }

    auto render = [&](const Variant& v) {
        Record r = base;
        if (v.requested && !has_requested) r.put(requested_path, "");
        if (!v.requested) r.erase(requested_path);
        if (v.url == UrlFix::relocate) r.put(direct_url_path, *relocated);
        if (v.url == UrlFix::drop) r.erase(direct_url_path);
        return r.text();
    };

    for (bool requested : {has_requested, !has_requested}) {
        for (UrlFix url : {UrlFix::keep, UrlFix::relocate, UrlFix::drop}) {
            if (url == UrlFix::relocate && !relocated) continue;
            // Only a target installed without a URL lacks direct_url.json.
            if (url == UrlFix::drop && (!has_direct_url || !target.origin.url.empty())) continue;
            Variant v{requested, url};
            std::string text = render(v);
            if (pyenv::record_text_digest(text) != target.record_sha256) continue;
            // Apply: the files first, RECORD last, so an interrupt leaves a RECORD that
            // still does not match and a re-run reinstalls.
            std::error_code ec;
            if (v.requested && !has_requested) BS_CHECK(core::write_file_atomic(dist_info / "REQUESTED", ""));
            if (!v.requested && has_requested) fs::remove(dist_info / "REQUESTED", ec);
            if (v.url == UrlFix::relocate) BS_CHECK(core::write_file_atomic(dist_info / "direct_url.json", *relocated));
            if (v.url == UrlFix::drop) fs::remove(dist_info / "direct_url.json", ec);
            BS_CHECK(core::write_file_atomic(dist_info / "RECORD", text));
            return true;
        }
    }
    return false;
}

Result<std::set<std::string>> record_paths(const fs::path& dist_info) {
    BS_TRY(auto text, core::read_file(dist_info / "RECORD"));
    std::set<std::string> out;
    for (const auto& row : Record::parse(text).rows)
        if (auto path = row_path(row); !path.empty()) out.insert(normal_path(path));
    return out;
}

Result<size_t> disown_paths(const fs::path& dist_info, const std::set<std::string>& paths) {
    BS_TRY(auto text, core::read_file(dist_info / "RECORD"));
    Record record = Record::parse(text);
    const size_t before = record.rows.size();
    std::erase_if(record.rows, [&](const std::string& row) {
        auto path = row_path(row);
        return !path.empty() && paths.count(normal_path(path)) > 0;
    });
    const size_t dropped = before - record.rows.size();
    if (dropped > 0) BS_CHECK(core::write_file_atomic(dist_info / "RECORD", record.text()));
    return dropped;
}

}  // namespace bootstrap::engine
