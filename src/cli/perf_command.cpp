// `bootstrap perf LOG`: MFU from Megatron's throughput lines. Exit 0 (a drop below the baseline is
// reported, not an exit code), 2 for usage and invalid input, 1 for other runtime failures.

#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/flags.hpp"
#include "doctor/lint.hpp"
#include "doctor/perf.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

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
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
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
    auto text = core::read_regular_file(args.log, core::k_max_user_input);
    if (!text) return report_error(text.error(), args.json);
    std::optional<recipe::Recipe> loaded;
    if (!args.recipe.empty()) {
        auto r = steps::load_recipe(args.recipe);
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
        nlohmann::json j{{"schema", 1}, {"ok", true}, {"log", args.log}, {"perf", perf_json(*report)}};
        if (!args.config.empty()) j["lint"] = {{"config", config.file}, {"findings", list}};
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    fmt::print("{}", doctor::format_perf(*report, args.log));
    if (!args.config.empty()) {
        fmt::print("\n{}\n", report->below_baseline ? "lint findings that may explain the drop:"
                                                    : fmt::format("lint findings for {}:", config.file));
        fmt::print("{}", doctor::format_findings(findings));
        fmt::print("{}", lint_summary(findings, config, loaded->lint_rules.size()));
    } else if (report->below_baseline) {
        fmt::print("note: pass --config CONFIG to check the training flags for known causes\n");
    }
    return 0;
}

}  // namespace

void set_perf_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<PerfArgs>();
    auto* cmd =
        app.add_subcommand("perf", "MFU from Megatron's 'throughput per GPU (TFLOP/s/GPU)' lines (--log-throughput)");
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
    cmd->footer(
        "Exit codes: 0 (also on a drop below the baseline), 1 unreadable log, 2 usage or "
        "a log without throughput lines.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_perf(*args); });
}

}  // namespace bootstrap::cli
