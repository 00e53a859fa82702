#pragma once
// A distribution's RECORD (the wheel spec, PEP 376/627): one CSV row per installed file,
// `path,hash,size`, with `hash` written `sha256=<urlsafe base64, no padding>`. The one reader of
// its rows and the one writer of its hash field.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

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

/// A RECORD's text as rows to edit, written back byte for byte as the installer wrote it (its
/// line ends, its row order, its quoting) except where a row is changed.
struct RecordText {
    std::vector<std::string> rows;  // as written, without line ends
    std::string eol = "\n";

    [[nodiscard]] static RecordText parse(std::string_view text);
    [[nodiscard]] std::string text() const;
    /// The row whose path is `path` (compared as written).
    [[nodiscard]] std::optional<size_t> find(std::string_view path) const;
    void erase(std::string_view path);
    /// Set the row for `path` to `content`'s hash and size, or insert it where sorted order
    /// puts it (pip and uv both write RECORD sorted by path).
    void put(const std::string& path, std::string_view content);
};

/// The paths `dist_info`'s RECORD lists, relative to its site-packages, lexically normalised.
[[nodiscard]] Result<std::set<std::string>> record_paths(const std::filesystem::path& dist_info);

/// Drop from `dist_info`'s RECORD the rows for `paths` (spelt as record_paths spells them), so
/// that uninstalling the distribution leaves those files to the one that now owns them too.
/// Returns how many rows went; RECORD is rewritten (atomically) only when some did.
[[nodiscard]] Result<size_t> disown_paths(const std::filesystem::path& dist_info, const std::set<std::string>& paths);

}  // namespace bootstrap::pyenv
