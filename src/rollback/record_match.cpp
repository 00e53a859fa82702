#include "rollback/record_match.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"

namespace bootstrap::rollback {

namespace {

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

}  // namespace

Result<bool> match_record(const fs::path& dist_info, const manifest::Package& target) {
    if (target.record_sha256.empty()) return false;
    BS_TRY(auto record_text, core::read_file(dist_info / "RECORD"));
    if (pyenv::record_text_digest(record_text) == target.record_sha256) return true;

    const std::string prefix = dist_info.filename().string() + "/";
    const std::string requested_path = prefix + "REQUESTED";
    const std::string direct_url_path = prefix + "direct_url.json";
    const pyenv::RecordText base = pyenv::RecordText::parse(record_text);
    const bool has_requested = base.find(requested_path).has_value();
    const bool has_direct_url = base.find(direct_url_path).has_value();

    std::optional<std::string> relocated;
    if (!target.origin.url.empty() && has_direct_url) {
        if (auto text = core::read_file(dist_info / "direct_url.json"))
            if (auto moved = replace_url(*text, target.origin.url); moved && *moved != *text) relocated = moved;
    }

    auto render = [&](const Variant& v) {
        pyenv::RecordText r = base;
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
            if (v.requested && !has_requested)
                BS_CHECK(core::write_file_atomic(dist_info / "REQUESTED", "", 0644, core::Durability::unsynced));
            if (!v.requested && has_requested) fs::remove(dist_info / "REQUESTED", ec);
            if (v.url == UrlFix::relocate)
                BS_CHECK(core::write_file_atomic(dist_info / "direct_url.json", *relocated, 0644,
                                                 core::Durability::unsynced));
            if (v.url == UrlFix::drop) fs::remove(dist_info / "direct_url.json", ec);
            BS_CHECK(core::write_file_atomic(dist_info / "RECORD", text, 0644, core::Durability::unsynced));
            return true;
        }
    }
    return false;
}

}  // namespace bootstrap::rollback
