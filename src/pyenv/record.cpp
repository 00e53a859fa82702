#include "pyenv/record.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"

#include "core/sha256.hpp"
#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

std::string hex_to_bytes(std::string_view hex) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
    return out;
}

std::string base64url_nopad(std::string_view bytes) {
    static constexpr std::string_view k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                     static_cast<unsigned char>(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += k_alphabet[(v >> s) & 63];
    }
    if (size_t rest = bytes.size() - i; rest > 0) {
        unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += k_alphabet[(v >> 18) & 63];
        out += k_alphabet[(v >> 12) & 63];
        if (rest == 2) out += k_alphabet[(v >> 6) & 63];
    }
    return out;
}

}  // namespace

RecordRow parse_record_row(std::string_view row) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (size_t i = 0; i < row.size(); ++i) {
        const char c = row[i];
        if (quoted) {
            if (c != '"') fields.back() += c;
            else if (i + 1 < row.size() && row[i + 1] == '"') fields.back() += '"', ++i;
            else quoted = false;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    RecordRow out;
    out.path = std::move(fields[0]);
    if (fields.size() > 1) out.hash = std::move(fields[1]);
    if (fields.size() > 2)
        if (auto size = core::parse_int<std::uint64_t>(fields[2])) out.size = *size;
    return out;
}

std::vector<RecordRow> parse_record(std::string_view text) {
    std::vector<RecordRow> rows;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (!line.empty()) rows.push_back(parse_record_row(line));
        start = end + 1;
    }
    return rows;
}

std::string record_hash(std::string_view data) { return record_hash_of_hex(core::sha256_hex(data)); }

std::string record_hash_of_hex(std::string_view sha256_hex) {
    return "sha256=" + base64url_nopad(hex_to_bytes(sha256_hex));
}

namespace {

std::string row_path(std::string_view row) { return parse_record_row(row).path; }

std::string normal_path(const std::string& record_path) {
    return std::filesystem::path(record_path).lexically_normal().string();
}

}  // namespace

RecordText RecordText::parse(std::string_view text) {
    RecordText r;
    if (text.find("\r\n") != std::string_view::npos) r.eol = "\r\n";
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(r.eol, start);
        if (end == std::string_view::npos) end = text.size();
        r.rows.emplace_back(text.substr(start, end - start));
        start = end + r.eol.size();
    }
    return r;
}

std::string RecordText::text() const {
    std::string out;
    for (const auto& row : rows) out += row + eol;
    return out;
}

std::optional<size_t> RecordText::find(std::string_view path) const {
    for (size_t i = 0; i < rows.size(); ++i)
        if (row_path(rows[i]) == path) return i;
    return std::nullopt;
}

void RecordText::erase(std::string_view path) {
    if (auto i = find(path)) rows.erase(rows.begin() + static_cast<long>(*i));
}

void RecordText::put(const std::string& path, std::string_view content) {
    std::string row = fmt::format("{},{},{}", path, record_hash(content), content.size());
    if (auto i = find(path)) {
        rows[*i] = row;
        return;
    }
    auto it = rows.begin();
    while (it != rows.end() && row_path(*it) < path) ++it;
    rows.insert(it, row);
}

Result<std::set<std::string>> record_paths(const std::filesystem::path& dist_info) {
    BS_TRY(auto text, core::read_file(dist_info / "RECORD"));
    std::set<std::string> out;
    for (const auto& row : RecordText::parse(text).rows)
        if (auto path = row_path(row); !path.empty()) out.insert(normal_path(path));
    return out;
}

Result<size_t> disown_paths(const std::filesystem::path& dist_info, const std::set<std::string>& paths) {
    BS_TRY(auto text, core::read_file(dist_info / "RECORD"));
    RecordText record = RecordText::parse(text);
    const size_t before = record.rows.size();
    std::erase_if(record.rows, [&](const std::string& row) {
        auto path = row_path(row);
        return !path.empty() && paths.count(normal_path(path)) > 0;
    });
    const size_t dropped = before - record.rows.size();
    if (dropped > 0)
        BS_CHECK(core::write_file_atomic(dist_info / "RECORD", record.text(), 0644, core::Durability::unsynced));
    return dropped;
}

}  // namespace bootstrap::pyenv
