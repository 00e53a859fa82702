#pragma once
// Executing a rollback: make a venv match a manifest exactly (names, versions, RECORD digests).
//
// Phases, in order; nothing in the venv changes before phase 4:
//   1. validate the target (names, versions, digests), snapshot the venv and plan
//      (plan_rollback), report the plan
//   2. refuse if any package has no source (the error lists each and why)
//   3. rehash the artifacts the plan uses; dry-run only the install commands after the first
//      that resolve against an index or URL (rollback/batch.hpp: usually there is one
//      command, and none is dry-run). `--dry-run` dry-runs every such command instead of 4-6.
//   4. install (`--no-deps`, exact versions, wheels by path) in as few installer commands as
//      the sources allow; uv and pip resolve and download before they change anything, so a
//      failure of the first command leaves the venv untouched, and a dry run per package then
//      names the packages that cannot be had (refused, as in 3)
//   5. match installer-written metadata to the recorded RECORDs (rollback/record_match.hpp),
//      let extras give up files they share with restored packages, uninstall the extras
//   6. read back the changed dist-infos only, compare with the target, append a "rollback"
//      history entry
// Every phase plans from the venv as it is, so an interrupted rollback re-run to the same
// target finishes the job.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "engine/runner.hpp"
#include "manifest/history.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/installer.hpp"
#include "rollback/plan.hpp"

namespace bootstrap::rollback {

namespace fs = std::filesystem;

struct RollbackOptions {
    std::vector<fs::path> find_links;       // --find-links wheelhouses
    std::optional<std::string> index_url;   // --index-url: replaces recorded index URLs
    std::optional<fs::path> artifact_root;  // default: manifest::artifact_store_root(env)
    std::string installer;                  // "uv", "pip", or "" (auto: see choose_installer)
    bool dry_run = false;                   // plan and check, change nothing
    bool write_history = true;              // append a "rollback" history entry
    double lock_timeout = 600;              // rollback() only
    pyenv::NetworkOptions net;
    std::string run_id;  // logs go to <venv>/.bootstrap/logs/<run_id>/; "" = new
    /// Index URLs with credentials (a recipe's own), to put back into recorded, redacted ones;
    /// the environment's and the installers' configured indexes are always asked too.
    std::vector<std::string> known_index_urls;
};

/// Progress sink; either member may be empty.
struct RollbackObserver {
    std::function<void(const RollbackPlan&)> on_plan;  // once, before any change
    std::function<void(std::string_view)> on_message;  // one line per phase
};

struct RollbackReport {
    std::string run_id;
    fs::path venv;
    RollbackPlan plan;
    fs::path log;  // rollback.log ("" when nothing ran)
    bool dry_run = false;
    bool changed = false;  // the venv was modified
    std::optional<manifest::HistoryEntry> history;
    double seconds = 0;
};

/// Roll `venv` back to `target`, taking the venv lock (waiting up to lock_timeout). Errors:
/// refusal (step_failed: unreachable packages, the venv untouched), an installer failure
/// (step_failed, with the argv, log tail and log path), a verification mismatch after the
/// changes (step_failed, naming the packages), lock_timeout, interrupted.
[[nodiscard]] Result<RollbackReport> rollback(const fs::path& venv, const manifest::Manifest& target,
                                              const RollbackOptions& options, const RollbackObserver& observer = {});

/// The same for a caller that already holds the venv lock (`run --rollback-on-failure`).
[[nodiscard]] Result<RollbackReport> rollback_to(const fs::path& venv, const manifest::Manifest& target,
                                                 const RollbackOptions& options, const RollbackObserver& observer = {});

/// `run --rollback-on-failure`'s restore (engine::RunOptions::rollback_on_failure): rollback_to
/// the request's target with its run id, network settings, installer and index URLs.
[[nodiscard]] Status restore_after_failure(const engine::RestoreRequest& request);

/// The installer a rollback uses by default: `requested` when given; else uv when the venv was
/// made by uv (pyvenv.cfg has a `uv` key) or has no pip, pip otherwise.
[[nodiscard]] std::string choose_installer(const fs::path& venv, const std::string& requested, bool venv_has_pip);

}  // namespace bootstrap::rollback
