#pragma once
// The run loop: steps in order; a step whose key matches the journal and whose recorded
// outcome still holds is skipped; install steps whose requirements are already satisfied skip
// the installer; failures stop the run (unless optional); an interrupt records the step as
// interrupted so the next run resumes there.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/download_progress.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

class RunWorld;  // engine/run_world.hpp

/// What `--rollback-on-failure` asks for when a step fails: put `venv` back as `target` (the
/// run's before-snapshot) records it. The run holds the venv lock. engine/ knows no rollback:
/// the caller passes rollback::restore_after_failure.
struct RestoreRequest {
    std::filesystem::path venv;
    const manifest::Manifest* target = nullptr;
    std::string run_id;
    pyenv::NetworkOptions net;
    std::string installer;                          // the plan's ("uv" / "pip")
    std::vector<std::string> known_index_urls;      // the install steps' own, credentials and all
    std::function<void(std::string_view)> message;  // one line per phase
};
using RestoreBefore = std::function<Status(const RestoreRequest&)>;

struct RunOptions {
    PlanOptions plan;
    bool force = false;         // run every selected step, whatever the journal says
    bool verify = false;        // re-run verify clauses even for skipped steps
    double lock_timeout = 600;  // seconds
    double backoff_base = 2;    // seconds before the 2nd attempt; doubles each time
    /// Set: restore the before-snapshot when a step fails (`--rollback-on-failure`).
    RestoreBefore rollback_on_failure;
};

/// `verified`: the step's action was up to date, and its verify clauses (which see the whole
/// venv) ran again because something changed since they last passed, and passed.
enum class StepResult { ran, skipped, verified, failed, optional_failed, interrupted, not_selected, not_reached };
[[nodiscard]] const char* to_string(StepResult r);

struct StepReport {
    std::string id;
    std::string kind;
    StepResult result = StepResult::not_reached;
    std::string reason;  // "up to date", "requirements already satisfied", "ran 2 attempts", ...
    double seconds = 0;
    int attempts = 0;
    std::string log;
    std::optional<Error> error;
    /// A run step that failed running a Python other than the venv's: hints that blame the
    /// venv do not apply.
    bool foreign_interpreter = false;
};

struct RunReport {
    std::string run_id;
    std::filesystem::path venv;
    std::vector<StepReport> steps;
    double seconds = 0;
    std::optional<Error> error;                  // what stopped the run
    std::optional<std::int64_t> history_before;  // history entries written by this run
    std::optional<std::int64_t> history_after;
    std::string changes;          // before -> after, one line per change ("" when none)
    std::string changes_summary;  // "2 added, 1 upgraded" / "no change"
    bool rolled_back = false;     // --rollback-on-failure restored the before-snapshot
    std::vector<std::string> warnings;
    [[nodiscard]] bool ok() const { return !error.has_value(); }
};

/// Status sink (the CLI draws a live line on a terminal, plain lines otherwise).
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void step_started(size_t index, size_t total, const steps::ResolvedStep& step) = 0;
    virtual void step_output(std::string_view) {}
    /// The running step's downloads so far, as they change (steps::Kind::shows_downloads).
    virtual void step_progress(const pyenv::DownloadProgress&) {}
    virtual void step_finished(size_t index, size_t total, const StepReport& report) = 0;
    virtual void message(std::string_view text) = 0;
};

/// Run a recipe. Returns the report (with `error` set when the run failed); an Error result
/// only for problems before any step ran (invalid selection, lock timeout, plan errors).
[[nodiscard]] Result<RunReport> run_recipe(const recipe::Recipe& recipe, const RunOptions& options,
                                           RunObserver& observer);

/// The same run in `world` (tests pass a fake: tests/unit/engine/fake_world.hpp).
[[nodiscard]] Result<RunReport> run_recipe(const recipe::Recipe& recipe, const RunOptions& options,
                                           RunObserver& observer, RunWorld& world);

}  // namespace bootstrap::engine
