#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/plan_options.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/strings.hpp"
#include "doctor/knowledge.hpp"
#include "lockfile/make.hpp"
#include "manifest/lockfile.hpp"
#include "recipe/recipe.hpp"
#include "rollback/rollback.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace fs = std::filesystem;

namespace {

struct RunArgs {
    std::string recipe;
    PlanArgs plan;
    bool force = false;
    bool verify = false;
    bool json = false;
    bool rollback_on_failure = false;
    double lock_timeout = 600;
    int verbose = 0;
};

void add_run_options(CLI::App& cmd, RunArgs& args) {
    add_plan_options(cmd, args.plan);
    cmd.add_flag("--force", args.force, "Run selected steps even when the journal says they are up to date");
    cmd.add_flag("--verify", args.verify, "Re-run verify clauses of steps that are skipped as up to date");
    cmd.add_option("--lock-timeout", args.lock_timeout, "Seconds to wait for another run on the same venv to finish")
        ->capture_default_str();
    cmd.add_flag("--json", args.json, "Print one JSON result document on stdout");
    cmd.add_flag("-v,--verbose", args.verbose,
                 "Stream each step's output to stderr as it arrives (it always goes to the step log); "
                 "-vv also prints the debug log (plan decisions, keys, children's argv and env)");
    cmd.add_flag("--rollback-on-failure", args.rollback_on_failure,
                 "When a step fails, restore the venv to its snapshot from before the run");
}

constexpr std::uint64_t k_fault_log_bytes = 8 * 1024 * 1024;

/// Under a failed step's log tail: the known faults (recipe [[fault]]s, then the built-ins)
/// that its log matches, each with an explanation and a fix.
void print_known_faults(const engine::RunReport& report, const recipe::Recipe& recipe) {
    std::optional<std::vector<doctor::KnownFault>> faults;  // compiled once, only on a failure
    for (const auto& step : report.steps) {
        if (step.log.empty() || step.foreign_interpreter ||
            (step.result != engine::StepResult::failed && step.result != engine::StepResult::optional_failed))
            continue;
        // Its end only: a cause is printed last, and a log may be gigabytes.
        auto text = core::read_file_tail(step.log, 0, k_fault_log_bytes);
        if (!text) continue;
        if (!faults) faults = doctor::knowledge_for(recipe);
        auto matches = doctor::match_log(*text, *faults);
        if (!matches.empty()) fmt::print(stderr, "{}", doctor::format_matches(matches, step.log));
    }
}

int execute_run(const RunArgs& args, Result<recipe::Recipe> loaded) {
    TerminalStatus status(StatusOptions{.verbose = args.verbose});
    // -v: step output streamed and the log's info lines; -vv: its debug lines too.
    if (args.verbose > 0) (void)core::log::configure_console(args.verbose);
    auto report_error = [&](const Error& e) {
        status.error(e);
        if (args.json) fmt::print("{}", error_json(e));
        return exit_code_for(e);
    };
    if (!loaded) return report_error(loaded.error());
    engine::RunOptions options;
    auto plan = plan_options(args.plan, *loaded);
    if (!plan) return report_error(plan.error());
    options.plan = std::move(*plan);
    options.plan.cache_tool_versions = true;
    options.force = args.force;
    options.verify = args.verify;
    options.lock_timeout = args.lock_timeout;
    if (const char* b = std::getenv("BOOTSTRAP_BACKOFF_BASE"))
        options.backoff_base = core::parse_double(b).value_or(options.backoff_base);
    if (args.rollback_on_failure) options.rollback_on_failure = rollback::restore_after_failure;

    auto report = engine::run_recipe(*loaded, options, status);
    if (!report) return report_error(report.error());
    status.summary(*report);
    if (report->error) {
        status.error(*report->error);
        print_known_faults(*report, *loaded);
    }
    if (args.json) fmt::print("{}", run_report_json(*report, loaded->name));
    return report->error ? exit_code_for(*report->error) : 0;
}

}  // namespace

void set_run_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<RunArgs>();
    auto* cmd = app.add_subcommand("run", "Run a recipe's steps in order (skipping what is up to date)");
    cmd->add_option("recipe", args->recipe, "Recipe file (TOML)")->required();
    add_run_options(*cmd, *args);
    cmd->callback([args, &outcome] { outcome.exit_code = execute_run(*args, steps::load_recipe(args->recipe)); });
}

void set_demo_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<RunArgs>();
    auto* cmd = app.add_subcommand("demo",
                                   "Run the embedded demo recipe (offline, against the fixture index in "
                                   "$BOOTSTRAP_DEMO_INDEX; see scripts/demo.sh)");
    add_run_options(*cmd, *args);
    cmd->callback([args, &outcome] {
        outcome.exit_code = execute_run(*args, steps::parse_recipe(embedded_demo_recipe(), "<embedded demo.toml>"));
    });
}

}  // namespace bootstrap::cli
