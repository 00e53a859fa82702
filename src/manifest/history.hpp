#pragma once
// Numbered history of manifests in `<venv>/.bootstrap/history/NNNN-<label>.json`.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

struct HistoryEntry {
    int number = 0;
    fs::path file;
    std::string label;
};

[[nodiscard]] fs::path history_dir(const fs::path& venv);

/// Entries sorted by number (reads only file names).
[[nodiscard]] Result<std::vector<HistoryEntry>> list_history(const fs::path& venv);

/// Append a manifest as the next number; returns the entry.
[[nodiscard]] Result<HistoryEntry> append_history(const fs::path& venv, const Manifest& m);

/// Resolve a user reference: a history number ("3"), "last"/"--last" style handled by the
/// caller, or a file path. The error lists what exists.
[[nodiscard]] Result<Manifest> load_reference(const fs::path& venv, const std::string& ref);

}  // namespace bootstrap::manifest
