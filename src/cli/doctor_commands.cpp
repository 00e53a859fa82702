// `bootstrap explain LOG`: known faults in any log. `bootstrap lint CONFIG`: training flags
// against a recipe's [[lint]] rules. `bootstrap perf LOG`: MFU from Megatron's throughput lines.
//
// Exit codes: explain 0 whether or not a fault matched (1 unreadable log, 2 invalid recipe);
// lint 3 when a finding has severity error; perf 0 (a drop below the baseline is reported, not
// an exit code); 2 for usage and invalid input, 1 for other runtime failures.
#include <algorithm>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/flags.hpp"
#include "doctor/knowledge.hpp"
#include "doctor/lint.hpp"
#include "doctor/perf.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::cli {

namespace {

constexpr int k_exit_lint_errors = 3;

int report_error(const Error& e, bool json) {
    TerminalStatus status;
    status.error(e);
    if (json) fmt::print("{}", error_json(e));
    return exit_code_for(e);
}

size_t count_lines(const std::string& text) {
    if (text.empty()) return 0;
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) +
           (text.back() == '\n' ? 0 : 1);
}

nlohmann::json finding_json(const doctor::Finding& f) {
    return {{"rule", f.rule},       {"severity", recipe::to_string(f.severity)},
            {"message", f.message}, {"evidence", f.evidence},
            {"explain", f.explain}, {"fix", f.fix},
            {"rule_at", f.rule_loc}};
}

/// Lint `config_path` against the recipe; the probe imports in `venv` when one is given.
Result<std::vector<doctor::Finding>> lint_file(const std::string& config_path,
                                               const recipe::Recipe& recipe,
                                               const std::string& venv,
                                               doctor::TrainingConfig& config_out) {
    BS_TRY(config_out, doctor::read_config(config_path));
    std::unique_ptr<doctor::ImportProbe> probe;
    if (venv.empty()) {
        probe = std::make_unique<doctor::UnknownImportProbe>();
    } else {
        std::error_code ec;
        auto python = std::filesystem::path(venv) / "bin" / "python";
        if (!std::filesystem::exists(python, ec))
            return fail(ErrorCode::usage,
                        fmt::format("--venv {}: no interpreter at {}", venv, python.string()));
        probe = std::make_unique<doctor::VenvImportProbe>(venv);
    }
    return doctor::lint_config(config_out, recipe, *probe, exec::current_environment());
}

std::string lint_summary(const std::vector<doctor::Finding>& findings,
                         const doctor::TrainingConfig& config, size_t rules) {
    auto n = [&](recipe::Severity s) { return doctor::count_severity(findings, s); };
    std::string counts =
        findings.empty()
            ? "no findings"
            : fmt::format("{} error(s), {} warning(s), {} info", n(recipe::Severity::error),
                          n(recipe::Severity::warning), n(recipe::Severity::info));
    return fmt::format("{}: {} ({} rules, {} flags, {} layout)\n", config.file, counts, rules,
                       config.flags.size(), doctor::to_string(config.format));
}

// ---------------------------------------------------------------- explain

struct ExplainArgs {
    std::string log;
    std::string recipe;
    bool json = false;
};

int execute_explain(const ExplainArgs& args) {
    auto text = core::read_file(args.log);
    if (!text) return report_error(text.error(), args.json);
    std::vector<doctor::KnownFault> kb = doctor::builtin_faults();
    if (!args.recipe.empty()) {
        auto loaded = recipe::load_recipe(args.recipe);
        if (!loaded) return report_error(loaded.error(), args.json);
        kb = doctor::knowledge_for(*loaded);
    }
    auto matches = doctor::match_log(*text, kb);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& m : matches)
            list.push_back({{"id", m.fault->id},
                            {"line", m.line},
                            {"text", m.text},
                            {"count", m.count},
                            {"explain", m.fault->explain},
                            {"fix", m.fault->fix},
                            {"step", m.fault->step},
                            {"source", m.fault->source}});
        nlohmann::json j{{"schema", 1}, {"ok", true}, {"log", args.log}, {"matches", list}};
        fmt::print("{}\n", j.dump(2));
    } else if (matches.empty()) {
        fmt::print("no known fault matched in {} ({} lines, {} known faults)\n", args.log,
                   count_lines(*text), kb.size());
    } else {
        fmt::print("{}", doctor::format_matches(matches, args.log));
    }
    return 0;
}

// ---------------------------------------------------------------- lint

struct LintArgs {
    std::string config;
    std::string recipe;
    std::string venv;
    bool json = false;
};

int execute_lint(const LintArgs& args) {
    auto loaded = recipe::load_recipe(args.recipe);
    if (!loaded) return report_error(loaded.error(), args.json);
    doctor::TrainingConfig config;
    auto findings = lint_file(args.config, *loaded, args.venv, config);
    if (!findings) return report_error(findings.error(), args.json);
    size_t errors = doctor::count_severity(*findings, recipe::Severity::error);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : *findings) list.push_back(finding_json(f));
        nlohmann::json j{{"schema", 1},
                         {"ok", errors == 0},
                         {"config", config.file},
                         {"layout", doctor::to_string(config.format)},
                         {"recipe", loaded->file.string()},
                         {"rules", loaded->lint_rules.size()},
                         {"findings", list}};
        fmt::print("{}\n", j.dump(2));
    } else {
        if (loaded->lint_rules.empty())
            fmt::print("warning: {} has no [[lint]] rules\n", loaded->file.string());
        fmt::print("{}", doctor::format_findings(*findings));
        fmt::print("{}", lint_summary(*findings, config, loaded->lint_rules.size()));
    }
    return errors > 0 ? k_exit_lint_errors : 0;
}

// ---------------------------------------------------------------- perf

struct PerfArgs {
    std::string log;
    std::optional<double> peak;
    std::string gpu;
    std::string recipe;
    std::string config;
    std::string venv;
    bool json = false;
};

nlohmann::json perf_json(const doctor::PerfReport& r) {
    auto opt = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json();
    };
    nlohmann::json j{{"samples", r.samples},
                     {"used", r.used},
                     {"first_line", r.first_line},
                     {"last_line", r.last_line},
                     {"tflops", r.tflops},
                     {"tflops_min", r.tflops_min},
                     {"tflops_max", r.tflops_max},
                     {"peak", r.peak},
                     {"peak_source", r.peak_source},
                     {"mfu", r.mfu},
                     {"log_mfu", opt(r.log_mfu)},
                     {"log_peak", opt(r.log_peak)},
                     {"correction", opt(r.correction)},
                     {"notes", r.notes}};
    if (r.baseline)
        j["baseline"] = {{"tflops", r.baseline->tflops},
                         {"tolerance", r.baseline->tolerance},
                         {"note", r.baseline->note},
                         {"delta", opt(r.baseline_delta)},
                         {"below", r.below_baseline}};
    return j;
}

int execute_perf(const PerfArgs& args) {
    if (!args.config.empty() && args.recipe.empty())
        return report_error(Error{ErrorCode::usage,
                                  "--config needs --recipe (the lint rules "
                                  "come from the recipe)",
                                  ""},
                            args.json);
    auto text = core::read_file(args.log);
    if (!text) return report_error(text.error(), args.json);
    std::optional<recipe::Recipe> loaded;
    if (!args.recipe.empty()) {
        auto r = recipe::load_recipe(args.recipe);
        if (!r) return report_error(r.error(), args.json);
        loaded = std::move(*r);
    }
    doctor::PerfOptions options;
    options.peak = args.peak;
    options.gpu = args.gpu.empty() ? "H200" : args.gpu;
    options.gpu_assumed = args.gpu.empty() && !args.peak;
    if (loaded) options.baseline = loaded->perf_baseline;
    auto report = doctor::analyze_perf(*text, args.log, options);
    if (!report) return report_error(report.error(), args.json);

    std::vector<doctor::Finding> findings;
    doctor::TrainingConfig config;
    if (!args.config.empty()) {
        auto linted = lint_file(args.config, *loaded, args.venv, config);
        if (!linted) return report_error(linted.error(), args.json);
        findings = std::move(*linted);
    }
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : findings) list.push_back(finding_json(f));
        nlohmann::json j{
            {"schema", 1}, {"ok", true}, {"log", args.log}, {"perf", perf_json(*report)}};
        if (!args.config.empty()) j["lint"] = {{"config", config.file}, {"findings", list}};
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    fmt::print("{}", doctor::format_perf(*report, args.log));
    if (!args.config.empty()) {
        fmt::print("\n{}\n", report->below_baseline
                                 ? "lint findings that may explain the drop:"
                                 : fmt::format("lint findings for {}:", config.file));
        fmt::print("{}", doctor::format_findings(findings));
        fmt::print("{}", lint_summary(findings, config, loaded->lint_rules.size()));
    } else if (report->below_baseline) {
        fmt::print("note: pass --config CONFIG to check the training flags for known causes\n");
    }
    return 0;
}

}  // namespace

void set_explain_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<ExplainArgs>();
    auto* cmd = app.add_subcommand(
        "explain", "Match a log (a failing step's, or a training log) against the known faults");
    cmd->add_option("log", args->log, "Log file")->required();
    cmd->add_option("--recipe", args->recipe, "Also use this recipe's [[fault]] entries (first)");
    cmd->add_flag("--json", args->json, "Print the matches as JSON");
    cmd->footer("Exit codes: 0 (matched or not), 1 unreadable log, 2 invalid recipe.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_explain(*args); });
}

void set_lint_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LintArgs>();
    auto* cmd =
        app.add_subcommand("lint", "Check training flags against a recipe's [[lint]] rules");
    cmd->add_option("config", args->config,
                    "Training flags: an args file or shell script, a flat YAML mapping, or "
                    "Megatron's --yaml-cfg file (.yaml/.yml)")
        ->required();
    cmd->add_option("--recipe", args->recipe, "Recipe with the [[lint]] rules")->required();
    cmd->add_option("--venv", args->venv,
                    "The training venv: `unless_import` rules try the import there (without it "
                    "they are reported as not checked)");
    cmd->add_flag("--json", args->json, "Print the findings as JSON");
    cmd->footer("forbid_env rules also look at this shell's environment.\n"
                "Exit codes: 0 no errors, 2 usage or invalid recipe/config, 3 error findings.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_lint(*args); });
}

void set_perf_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<PerfArgs>();
    auto* cmd = app.add_subcommand(
        "perf", "MFU from Megatron's 'throughput per GPU (TFLOP/s/GPU)' lines (--log-throughput)");
    cmd->add_option("log", args->log, "Training log")->required();
    cmd->add_option("--peak", args->peak, "Dense BF16 peak TFLOP/s per GPU (overrides --gpu)");
    cmd->add_option("--gpu", args->gpu,
                    "GPU name as nvidia-smi prints it, for its dense BF16 peak (default: H200, "
                    "said so in the output)");
    cmd->add_option("--recipe", args->recipe, "Recipe with a [perf] baseline and [[lint]] rules");
    cmd->add_option("--config", args->config,
                    "Training flags to lint when looking for the cause of a drop (needs --recipe)");
    cmd->add_option("--venv", args->venv, "The training venv, for the lint's import checks");
    cmd->add_flag("--json", args->json, "Print the report as JSON");
    cmd->footer("Exit codes: 0 (also on a drop below the baseline), 1 unreadable log, 2 usage or "
                "a log without throughput lines.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_perf(*args); });
}

}  // namespace bootstrap::cli
