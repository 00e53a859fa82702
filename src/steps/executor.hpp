#pragma once
// One executor per step kind. Executors run what the plan resolved; deciding whether a step
// needs to run at all (journal, satisfied requirements) is the engine's job.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "exec/process.hpp"
#include "pyenv/download_progress.hpp"
#include "steps/child_output.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// The seam to the outside world: tests may replace `run` with a fake.
struct StepContext {
    fs::path venv;
    fs::path log_path;  // this step's log; every child's output is appended to it
    std::function<Result<exec::ProcessResult>(const exec::ProcessSpec&)> run = exec::run_process;
    std::function<void(std::string_view)> on_output;  // live output (may be empty)
    /// An installer's downloads so far, as they change (kinds that show them; may be empty).
    std::function<void(const pyenv::DownloadProgress&)> on_progress;
    std::string note;  // set by an executor: what happened, for the run's report ("build cache hit")
    /// Set when an installer child fails: whether another attempt can change its answer.
    FailureClass failure;
};

enum class Outcome { ran, skipped_creates, skipped_unless, kept };

/// Run the step's action (not its verify clauses). A child that fails, times out or is
/// interrupted becomes an Error (step_failed / timeout / interrupted) whose message names the
/// step, the argv and what happened, and whose detail holds the log tail and the log path. An
/// installer's failure (venv, install, sync, build) is headed by its own cause line
/// (steps::installer_cause), the exit status after it.
[[nodiscard]] Result<Outcome> execute(const ResolvedStep& step, StepContext& ctx);

/// Run every verify clause, each by its registered clause (steps/verify_clause.hpp; defined in
/// verify_clauses.cpp); each import in its own interpreter. The error shows the real
/// exception the import raised. An import clause's `version` is then checked against the
/// distribution that provides the module (pyenv::check_module_version).
[[nodiscard]] Status verify(const ResolvedStep& step, StepContext& ctx);

/// A child of the step: its argv, cwd, complete environment, timeout, log and live output.
[[nodiscard]] exec::ProcessSpec child_spec(const ResolvedStep& step, const StepContext& ctx,
                                           std::vector<std::string> argv);

/// Run a child of the step (in `cwd` when given), logging its argv; a failure becomes the
/// child_failure Error.
[[nodiscard]] Status run_child(const ResolvedStep& step, StepContext& ctx, std::vector<std::string> argv,
                               const fs::path& cwd = {});

/// Append one line to the step's log (nothing when it has none).
void log_line(const StepContext& ctx, const std::string& line);

/// The Error for a child that did not succeed (shared by executors and verify).
[[nodiscard]] Error child_failure(const ResolvedStep& step, const exec::ProcessSpec& spec,
                                  const exec::ProcessResult& result, const fs::path& log_path);

}  // namespace bootstrap::steps
