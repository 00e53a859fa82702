#include "pyenv/record.hpp"

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

}  // namespace bootstrap::pyenv
