#pragma once
// A distribution's installed files against its RECORD (the wheel spec: path, sha256, size per
// file): the one checker behind doctor's files check and a run's repair of installs cut short
// (pyenv/broken_install.hpp). A file is reported when it is missing, is no longer a regular
// file, has another size, or (when it is hashed) other content. Rows without a hash (RECORD
// itself, bytecode) and rows leading out of the venv are not checked. A console script whose
// shebang names this venv's interpreter is never reported: `relocate`/`unpack` rewrite it for
// the venv's new path, so it differs from the RECORD written where the venv was built.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "pyenv/dist_info.hpp"

namespace bootstrap::pyenv {

struct RecordFileOptions {
    /// Files of at most this many bytes are hashed; larger ones are compared by size only
    /// (0: sizes only).
    std::uint64_t hash_up_to = std::numeric_limits<std::uint64_t>::max();
    /// A cache of files known to match (doctor's stat cache): asked with the file and its
    /// "STAT HASH" entry before hashing; a true answer skips the hash.
    std::function<bool(const std::filesystem::path& file, const std::string& entry)> known;
    /// Told each file whose hash matched, with its entry.
    std::function<void(const std::filesystem::path& file, std::string entry)> matched;
    /// The venv path a relocated console script's shebang names, when not the venv checked:
    /// `unpack` checks its staging copy, relocated for where it will be renamed to.
    std::filesystem::path scripts_venv;
};

struct RecordFileCheck {
    size_t checked = 0;  // RECORD rows with a hash, inside the venv
    size_t missing = 0;  // of `changed`, the files that are not there
    /// One line per differing file: "pandas/core/frame.py (missing)", "x.so (size 10 bytes,
    /// recorded 12)", "a.py (content differs)", "b (now a directory)".
    std::vector<std::string> changed;
    bool interrupted = false;        // an interrupt stopped the check (what it found so far is kept)
    bool record_unreadable = false;  // no RECORD to check against (the snapshot names it)
};

/// `dist` (installed in `site`, part of the venv at `venv`) against its RECORD.
[[nodiscard]] RecordFileCheck check_record_files(const Distribution& dist, const std::filesystem::path& site,
                                                 const std::filesystem::path& venv,
                                                 const RecordFileOptions& options = {});

}  // namespace bootstrap::pyenv
