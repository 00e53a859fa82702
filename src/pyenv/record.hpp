#pragma once
// A distribution's RECORD (the wheel spec, PEP 376/627): one CSV row per installed file,
// `path,hash,size`, with `hash` written `sha256=<urlsafe base64, no padding>`. The one reader of
// its rows and the one writer of its hash field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::pyenv {

struct RecordRow {
    std::string path;                   // relative to site-packages ("../../../bin/x" for scripts)
    std::string hash;                   // "sha256=..."; "" for RECORD itself and unhashed files
    std::optional<std::uint64_t> size;  // absent when the row gives none
};

/// One row's fields, RFC 4180 quoting undone ("a,b.py" quoted, "" for a quote).
[[nodiscard]] RecordRow parse_record_row(std::string_view row);

/// Every non-empty row of a RECORD's text ("\n" or "\r\n" line ends).
[[nodiscard]] std::vector<RecordRow> parse_record(std::string_view text);

/// The RECORD hash field for `data`: "sha256=" + urlsafe base64 without padding.
[[nodiscard]] std::string record_hash(std::string_view data);

/// The same field from a SHA-256 digest given in hex (core::sha256_file's answer).
[[nodiscard]] std::string record_hash_of_hex(std::string_view sha256_hex);

}  // namespace bootstrap::pyenv
