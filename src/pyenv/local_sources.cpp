#include "pyenv/local_sources.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"
#include "pyenv/relocate.hpp"

namespace bootstrap::pyenv {

namespace {

constexpr std::uint64_t k_max_import_file = 1 << 20;  // a .pth or finder is a few KiB

/// What a file the install wrote into site-packages says, if it is one that can name the source.
bool names_source(std::string_view rel) {
    if (rel.find('/') != std::string_view::npos) return false;  // top level of site-packages only
    return rel.ends_with(".pth") || (rel.starts_with("__editable__") && rel.ends_with(".py"));
}

/// The absolute directories a .pth file adds to sys.path (lines that are not `import` lines).
std::vector<fs::path> pth_directories(const std::string& text) {
    std::vector<fs::path> out;
    for (const auto& line : core::split(text, '\n')) {
        std::string l(core::trim(line));
        if (l.empty() || l.front() != '/') continue;
        out.emplace_back(l);
    }
    return out;
}

std::optional<fs::path> editable_url_path(const fs::path& dist_info) {
    auto text = core::read_regular_file(dist_info / "direct_url.json", k_max_import_file);
    if (!text) return std::nullopt;
    auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("url") || !j["url"].is_string()) return std::nullopt;
    auto dir = j.find("dir_info");
    if (dir == j.end() || !dir->is_object()) return std::nullopt;
    auto editable = dir->find("editable");
    if (editable == dir->end() || !editable->is_boolean() || !editable->get<bool>()) return std::nullopt;
    return file_url_to_path(j["url"].get<std::string>());
}

bool inside(const fs::path& path, const fs::path& dir) {
    const std::string rel = path.lexically_normal().lexically_relative(dir.lexically_normal()).generic_string();
    return !rel.empty() && !rel.starts_with("..");
}

std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
    auto positions = prefix_positions(text, from);
    std::string out;
    size_t last = 0;
    for (size_t pos : positions) {
        out.append(text, last, pos - last);
        out += to;
        last = pos + from.size();
    }
    out.append(text, last, std::string::npos);
    return out;
}

std::string trimmed_path(const fs::path& p) {
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

}  // namespace

std::optional<fs::path> file_url_to_path(std::string_view url) {
    if (!core::consume_prefix(url, "file://")) return std::nullopt;
    // file://localhost/p and file:///p name the same path; other hosts are not local.
    (void)core::consume_prefix(url, "localhost");
    if (url.empty() || url.front() != '/') return std::nullopt;
    return fs::path(core::percent_decode(url));
}

std::string path_to_file_url(const fs::path& path) {
    std::string out = "file://";
    for (unsigned char c : path.string()) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

Result<std::vector<LocalSource>> find_local_sources(const fs::path& site_packages) {
    BS_TRY(auto dists, scan_site_packages(site_packages));
    // A RECORD is read only where it can matter (torch's has tens of thousands of rows, and
    // doctor and launch ask): an editable direct_url.json, or a .pth naming a directory outside.
    bool outside_pth = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(site_packages, ec)) {
        if (e.path().extension() != ".pth") continue;
        auto text = core::read_regular_file(e.path(), k_max_import_file);
        if (!text) continue;
        for (const auto& dir : pth_directories(*text))
            if (!inside(dir, site_packages)) outside_pth = true;
    }
    std::vector<LocalSource> out;
    for (const auto& [key, dist] : dists) {
        const fs::path dist_info = dist.dist_info();
        std::optional<fs::path> source = editable_url_path(dist_info);
        if (!source && !outside_pth) continue;
        auto rows = record_paths(dist_info);
        if (!rows) continue;
        std::vector<std::pair<std::string, std::string>> texts;  // candidate file -> its text
        for (const auto& rel : *rows) {
            if (!names_source(rel)) continue;
            auto text = core::read_regular_file(site_packages / rel, k_max_import_file);
            if (text) texts.emplace_back(rel, std::move(*text));
        }
        if (!source) {  // no PEP 610 record: a .pth that adds a directory outside site-packages
            for (const auto& [rel, text] : texts) {
                if (!rel.ends_with(".pth")) continue;
                for (const auto& dir : pth_directories(text))
                    if (!inside(dir, site_packages)) {
                        source = dir;
                        break;
                    }
                if (source) break;
            }
        }
        if (!source) continue;
        LocalSource s;
        s.name = dist.name;
        s.normalized_name = dist.normalized_name;
        s.version = dist.version;
        s.path = trimmed_path(*source);
        for (const auto& [rel, text] : texts)
            if (!prefix_positions(text, s.path.string()).empty()) s.files.push_back(rel);
        const std::string direct_url = dist_info.filename().string() + "/direct_url.json";
        if (rows->count(direct_url)) s.files.push_back(direct_url);
        out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](const LocalSource& a, const LocalSource& b) { return a.name < b.name; });
    return out;
}

Result<size_t> repoint_local_source(const fs::path& site_packages, const LocalSource& source, const fs::path& to) {
    const std::string from = trimmed_path(source.path);
    const std::string target = trimmed_path(to);
    if (from == target) return size_t{0};
    fs::path dist_info;
    std::vector<std::pair<std::string, std::string>> changed;  // rel -> new text
    for (const auto& rel : source.files) {
        const fs::path file = site_packages / rel;
        BS_TRY(auto text, core::read_regular_file(file, k_max_import_file));
        std::string now;
        if (rel.ends_with("/direct_url.json")) {
            dist_info = file.parent_path();
            auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
            if (!j.is_object())
                return fail(ErrorCode::io,
                            fmt::format("{} is not a JSON object: cannot point it at {}", file.string(), target));
            j["url"] = path_to_file_url(target);
            now = j.dump();
        } else {
            now = replaced(text, from, target);
        }
        if (now != text) changed.emplace_back(rel, std::move(now));
    }
    if (changed.empty()) return size_t{0};
    if (dist_info.empty()) {  // find the dist-info through the RECORD that lists the files
        BS_TRY(auto dists, scan_site_packages(site_packages, {source.normalized_name}));
        auto it = dists.find(source.normalized_name);
        if (it == dists.end())
            return fail(ErrorCode::not_found, fmt::format("{} {} is not installed in {}", source.name, source.version,
                                                          site_packages.string()));
        dist_info = it->second.dist_info();
    }
    const fs::path record_file = dist_info / "RECORD";
    BS_TRY(auto record_text, core::read_regular_file(record_file, k_max_dist_info_file));
    auto record = RecordText::parse(record_text);
    for (const auto& [rel, text] : changed) {
        const fs::path file = site_packages / rel;
        struct stat st {};
        const unsigned mode = ::stat(file.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
        BS_CHECK(core::write_file_atomic(file, text, mode));
        if (record.find(rel)) record.put(rel, text);
    }
    BS_CHECK(core::write_file_atomic(record_file, record.text()));
    return changed.size();
}

}  // namespace bootstrap::pyenv
