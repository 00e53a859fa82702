#pragma once
// `<venv>/.bootstrap/journal.json`: per step its key, status, timings, log, and the installed
// distributions it owns (the ones it last changed), so a re-run can prove its outcome holds.

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/key.hpp"

namespace bootstrap::state {

namespace fs = std::filesystem;

struct DistRecord {
    std::string version;
    std::string record_sha256;
    core::FileStamp stamp;  // of RECORD when the digest was taken
};

/// The journal's format; a journal of another is refused (not guessed at).
inline constexpr int k_journal_schema = 1;

enum class StepStatus { ok, failed, interrupted };
[[nodiscard]] const char* to_string(StepStatus s);

struct JournalEntry {
    std::string key;
    StepStatus status = StepStatus::ok;
    std::string run_id;
    std::string finished_at;  // ISO 8601 UTC
    double seconds = 0;
    std::string log;
    std::map<std::string, DistRecord> dists;  // normalised name -> record
    /// installed_state() when the step last passed: its verify clauses saw that venv.
    std::string venv_state;
    /// Install steps: the indexes the installer used (credentials redacted), in its order of
    /// precedence; what rollback and lock ask again.
    std::vector<std::string> index_urls;
    /// A failed step: why (its error's one line, redacted), and whether another attempt could
    /// change that (false: an impossible resolution, a missing path, HTTP 4xx, ...). An optional
    /// step that failed for good is skipped while its key holds.
    std::string failure;
    bool retry_can_help = true;
    /// What the key hashed (redacted as the key is): a later key that differs is explained
    /// input by input (core::explain_change). Empty in journals of older bootstraps.
    std::vector<core::KeyInput> inputs;
};

struct Journal {
    std::string recipe;
    std::map<std::string, JournalEntry> steps;  // by step id
    /// The {device.*} facts (cuda_archs, cuda_archs_from, gpus) of the newest run that used
    /// them, whether or not it changed a distribution (a history entry records them only for
    /// runs that did): what doctor's built-for check compares with the node's GPUs.
    std::map<std::string, std::string> device;

    [[nodiscard]] static fs::path path_for(const fs::path& venv);
    /// A missing file is an empty journal; a corrupt one is an error naming the file.
    [[nodiscard]] static Result<Journal> load(const fs::path& venv);
    /// load() on another thread, for a caller with a scan of the venv to do meanwhile (a no-op's
    /// check, `plan`, a snapshot): get() waits for it. A small journal (under 256 KiB), or one
    /// where no thread can be started, is read by get() itself.
    [[nodiscard]] static std::future<Result<Journal>> load_in_background(const fs::path& venv);
    /// Atomic write (temp + rename).
    [[nodiscard]] Status save(const fs::path& venv) const;
};

}  // namespace bootstrap::state
