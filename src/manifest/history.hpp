#pragma once
// Numbered history of manifests in `<venv>/.bootstrap/history/NNNN-<label>.json`.
//
// Appending is safe without the venv lock: a number is taken by creating a `.NNNN.claim` file
// with O_EXCL, checking that no entry with that number appeared meanwhile, writing the entry
// exclusively (temp + link(2), which never replaces a file) and removing the claim. A claim left
// by a crash only skips its number.
//
// Numbers have as many digits as they need (at least four); the lister reads any count, so it
// and the writer always agree on the newest entry. Past k_max_history_number the writer
// refuses rather than wrap.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

/// The highest entry number written: 15 digits, exact in a JSON number (a double) as
/// `history --json` prints it.
inline constexpr std::int64_t k_max_history_number = 999'999'999'999'999;

struct HistoryEntry {
    std::int64_t number = 0;
    fs::path file;
    std::string label;
};

[[nodiscard]] fs::path history_dir(const fs::path& venv);

/// A label as it appears in a file name: characters outside [A-Za-z0-9_.-] become '-';
/// "" becomes "snapshot".
[[nodiscard]] std::string sanitize_label(std::string_view label);

/// Entries sorted by number (reads only file names). A name whose number does not fit in 64
/// bits is an error naming it.
[[nodiscard]] Result<std::vector<HistoryEntry>> list_history(const fs::path& venv);

/// Append a manifest as the next number (file label: the manifest's label, sanitised);
/// returns the entry. Past k_max_history_number: an error saying which entry is that high.
[[nodiscard]] Result<HistoryEntry> append_history(const fs::path& venv, const Manifest& m);

/// Resolve a user reference to a file: a history number ("3"), "last" (the newest entry),
/// "last~N" (N before the newest), or a manifest file path. A reference to nothing is a usage
/// error that says what exists. History references need `venv` (empty: a usage error too).
[[nodiscard]] Result<fs::path> resolve_reference(const fs::path& venv, const std::string& ref);

/// resolve_reference, then load_manifest.
[[nodiscard]] Result<Manifest> load_reference(const fs::path& venv, const std::string& ref);

/// One line of `bootstrap history`.
struct HistoryRow {
    HistoryEntry entry;
    std::string time;  // the run block's time, else the file's mtime (ISO 8601 UTC)
    size_t package_count = 0;
    std::string changes;         // diff summary against the previous readable entry; "" for the first
    std::string error;           // the entry could not be read (then only `entry` and `time` are set)
    std::string recipe;          // the recipe's name, when a run wrote the entry
    std::optional<RunInfo> run;  // the manifest's run block: run id, phase, ok (entries by runs
                                 // and rollbacks; not `snapshot --save`)
};

/// Every entry with its time, package count and what changed since the one before. An unreadable
/// entry is reported in its row rather than failing the listing.
[[nodiscard]] Result<std::vector<HistoryRow>> describe_history(const fs::path& venv);

}  // namespace bootstrap::manifest
