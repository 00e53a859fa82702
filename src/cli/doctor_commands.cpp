// `bootstrap explain LOG`: known faults in any log. `bootstrap lint CONFIG`: training flags
// against a recipe's [[lint]] rules. `bootstrap perf LOG`: MFU from Megatron's throughput lines.
// `bootstrap doctor`: what is wrong with a venv. `bootstrap relocate`: fix a copied venv's
// paths. `bootstrap launch RECIPE -- CMD`: doctor + lint, then exec CMD in the venv.
//
// Exit codes: explain 0 whether or not a fault matched (1 unreadable log, 2 invalid recipe);
// lint, doctor and launch 3 when a finding has severity error; perf 0 (a drop below the
// baseline is reported, not an exit code); launch otherwise exits with the command's own code
// (it execs it); 2 for usage and invalid input, 1 for other runtime failures.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_device.hpp"
#include "cli/doctor_state.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/flags.hpp"
#include "doctor/knowledge.hpp"
#include "doctor/lint.hpp"
#include "doctor/perf.hpp"
#include "engine/launch.hpp"
#include "engine/plan.hpp"
#include "exec/environment.hpp"
#include "exec/process.hpp"
#include "pyenv/relocate.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

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
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() == '\n' ? 0 : 1);
}

nlohmann::json finding_json(const doctor::Finding& f) {
    return {{"rule", f.rule},       {"severity", recipe::to_string(f.severity)},
            {"message", f.message}, {"evidence", f.evidence},
            {"explain", f.explain}, {"fix", f.fix},
            {"rule_at", f.rule_loc}};
}

/// Lint `config_path` against the recipe; the probe imports in `venv` when one is given.
Result<std::vector<doctor::Finding>> lint_file(const std::string& config_path, const recipe::Recipe& recipe,
                                               const std::string& venv, doctor::TrainingConfig& config_out) {
    BS_TRY(config_out, doctor::read_config(config_path));
    std::unique_ptr<doctor::ImportProbe> probe;
    if (venv.empty()) {
        probe = std::make_unique<doctor::UnknownImportProbe>();
    } else {
        std::error_code ec;
        auto python = std::filesystem::path(venv) / "bin" / "python";
        if (!std::filesystem::exists(python, ec))
            return fail(ErrorCode::usage, fmt::format("--venv {}: no interpreter at {}", venv, python.string()));
        probe = std::make_unique<doctor::VenvImportProbe>(venv);
    }
    return doctor::lint_config(config_out, recipe, *probe, exec::current_environment());
}

std::string lint_summary(const std::vector<doctor::Finding>& findings, const doctor::TrainingConfig& config,
                         size_t rules) {
    auto n = [&](recipe::Severity s) { return doctor::count_severity(findings, s); };
    std::string counts = findings.empty()
                             ? "no findings"
                             : fmt::format("{} error(s), {} warning(s), {} info", n(recipe::Severity::error),
                                           n(recipe::Severity::warning), n(recipe::Severity::info));
    return fmt::format("{}: {} ({} rules, {} flags, {} layout)\n", config.file, counts, rules, config.flags.size(),
                       doctor::to_string(config.format));
}

// ---------------------------------------------------------------- explain

struct ExplainArgs {
    std::string log;
    std::string recipe;
    bool json = false;
};

int execute_explain(const ExplainArgs& args) {
    auto text = core::read_regular_file(args.log, core::k_max_user_input);
    if (!text) return report_error(text.error(), args.json);
    std::vector<doctor::KnownFault> kb = doctor::builtin_faults();
    if (!args.recipe.empty()) {
        auto loaded = steps::load_recipe(args.recipe);
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
        fmt::print("no known fault matched in {} ({} lines, {} known faults)\n", args.log, count_lines(*text),
                   kb.size());
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
    auto loaded = steps::load_recipe(args.recipe);
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
        if (loaded->lint_rules.empty()) fmt::print("warning: {} has no [[lint]] rules\n", loaded->file.string());
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

// ---------------------------------------------------------------- doctor

struct DoctorArgs {
    std::string venv;
    std::string recipe;
    std::string config;
    std::string arch;
    std::string megatron;
    std::vector<std::string> symbols;
    std::vector<std::string> libraries;
    std::vector<std::string> imports;
    bool json = false;
    bool check_files = true;  // launch: false (doctor::DoctorOptions::check_files)
};

/// The venv: --venv, else the recipe's [venv] path. Error (usage) when neither is given.
Result<std::filesystem::path> doctor_venv(const std::string& venv, const std::optional<recipe::Recipe>& loaded) {
    if (!venv.empty()) return std::filesystem::absolute(venv);
    if (!loaded) return fail(ErrorCode::usage, "give --venv DIR or --recipe R (for its [venv] path)");
    BS_TRY(auto pre, engine::gather_facts({}, false));
    return engine::resolve_venv_path(*loaded, engine::PlanOptions{}, pre);
}

/// Does the config choose a non-TE transformer implementation (`--transformer-impl local`)?
bool uses_te_path(const doctor::TrainingConfig& config) {
    bool te = true;
    for (const auto& flag : config.flags)
        if (doctor::normalize_flag(flag.name) == "--transformer-impl" && !flag.values.empty())
            te = flag.values.back() == "transformer_engine";
    return te;
}

std::string doctor_summary(const std::string& what, const std::vector<doctor::Finding>& findings) {
    auto n = [&](recipe::Severity s) { return doctor::count_severity(findings, s); };
    return fmt::format("{}: {} error(s), {} warning(s), {} info\n", what, n(recipe::Severity::error),
                       n(recipe::Severity::warning), n(recipe::Severity::info));
}

struct DoctorRun {
    std::filesystem::path venv;
    std::vector<doctor::Finding> findings;  // doctor's, then lint's
    std::vector<doctor::CheckSummary> checks;
    bool training = false;
    std::string config_file;
};

Result<DoctorRun> run_doctor_and_lint(const DoctorArgs& args, const std::optional<recipe::Recipe>& loaded,
                                      const exec::EnvMap& environment,
                                      const std::optional<doctor::TrainingConfig>& given_config) {
    DoctorRun run;
    BS_TRY(run.venv, doctor_venv(args.venv, loaded));
    if (args.symbols.size() != args.libraries.size())
        return fail(ErrorCode::usage, "every --symbol needs a --library GLOB (in the same order)");
    doctor::DoctorOptions options;
    options.venv = run.venv;
    options.recipe = loaded ? &*loaded : nullptr;
    BS_CHECK(read_venv_state(options));
    options.extra_modules = args.imports;
    options.check_files = args.check_files;
    for (size_t i = 0; i < args.symbols.size(); ++i)
        options.symbols.push_back({args.symbols[i], args.libraries[i], "", ""});
    if (!args.arch.empty()) options.arch = args.arch;
    // What the venv (an image) was built for, and the GPUs here: the "built for" check.
    options.built_for = recorded_arch(run.venv);
    BS_TRY(options.device, node_device(args.arch, options.recipe, environment));
    options.environment = environment;
    if (!args.megatron.empty()) options.megatron_dir = args.megatron;
    else if (auto it = environment.find("MEGATRON_DIR"); it != environment.end() && !it->second.empty())
        options.megatron_dir = it->second;
    std::optional<doctor::TrainingConfig> config = given_config;
    if (!config && !args.config.empty()) {
        BS_TRY(auto read, doctor::read_config(args.config));
        config = std::move(read);
    }
    if (config) options.te_path = uses_te_path(*config);
    auto report = doctor::run_checks(options);
    run.findings = std::move(report.findings);
    if (loaded)
        for (auto& f : recipe_state_findings(*loaded, run.venv)) run.findings.push_back(std::move(f));
    run.checks = std::move(report.checks);
    run.training = report.training;
    if (config && loaded) {
        run.config_file = config->file;
        doctor::VenvImportProbe probe(run.venv);
        for (auto& f : doctor::lint_config(*config, *loaded, probe, environment)) run.findings.push_back(std::move(f));
    }
    return run;
}

int execute_doctor(const DoctorArgs& args) {
    if (!args.config.empty() && args.recipe.empty())
        return report_error(Error{ErrorCode::usage,
                                  "--config needs --recipe (the lint rules come "
                                  "from the recipe)",
                                  ""},
                            args.json);
    std::optional<recipe::Recipe> loaded;
    if (!args.recipe.empty()) {
        auto r = steps::load_recipe(args.recipe);
        if (!r) return report_error(r.error(), args.json);
        loaded = std::move(*r);
    }
    auto run = run_doctor_and_lint(args, loaded, exec::current_environment(), std::nullopt);
    if (!run) return report_error(run.error(), args.json);
    size_t errors = doctor::count_severity(run->findings, recipe::Severity::error);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : run->findings) list.push_back(finding_json(f));
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& c : run->checks) checks.push_back({{"group", c.group}, {"summary", c.line}});
        nlohmann::json j{{"schema", 1},
                         {"ok", errors == 0},
                         {"venv", run->venv.string()},
                         {"recipe", loaded ? loaded->file.string() : ""},
                         {"config", run->config_file},
                         {"scope", run->training ? "training" : "venv"},
                         {"checks", checks},
                         {"findings", list}};
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{}", doctor::format_findings(run->findings));
        if (!run->findings.empty()) fmt::print("\n");
        if (!run->training)
            fmt::print(
                "no recipe and no training stack in the venv: checking what it holds "
                "(--recipe R for a training venv's checks)\n");
        for (const auto& c : run->checks) fmt::print("{}\n", c.line);
        fmt::print("{}", doctor_summary("doctor " + run->venv.string(), run->findings));
    }
    return errors > 0 ? k_exit_lint_errors : 0;
}

// ---------------------------------------------------------------- relocate

struct RelocateArgs {
    std::string venv;
    std::string from;
    bool json = false;
};

int execute_relocate(const RelocateArgs& args) {
    auto report = pyenv::relocate_venv(args.venv, args.from);
    if (!report) return report_error(report.error(), args.json);
    if (args.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& f : report->rewritten) files.push_back(f.string());
        nlohmann::json j{{"schema", 1},
                         {"ok", true},
                         {"venv", std::filesystem::absolute(args.venv).string()},
                         {"from", report->old_prefix.string()},
                         {"rewritten", files}};
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    for (const auto& f : report->rewritten) fmt::print("rewrote {}\n", f.string());
    fmt::print("relocated {} from {}: {} file(s) rewritten\n", args.venv, report->old_prefix.string(),
               report->rewritten.size());
    return 0;
}

// ---------------------------------------------------------------- launch

struct LaunchArgs {
    DoctorArgs doctor;
    std::vector<std::string> command;
    bool force = false;
};

/// The training flags of a launch command: the `--yaml-cfg FILE` it names, else its own args.
Result<doctor::TrainingConfig> launch_config(const std::vector<std::string>& command) {
    for (size_t i = 0; i < command.size(); ++i) {
        if (command[i] == "--yaml-cfg" && i + 1 < command.size()) return doctor::read_config(command[i + 1]);
        if (core::starts_with(command[i], "--yaml-cfg="))
            return doctor::read_config(command[i].substr(std::string("--yaml-cfg=").size()));
    }
    std::string text;
    for (const auto& word : command) text += core::shell_quote(word) + " ";
    return doctor::parse_args(text, "command line");
}

int execute_launch(const LaunchArgs& args) {
    std::optional<recipe::Recipe> loaded;
    if (auto r = steps::load_recipe(args.doctor.recipe); r) loaded = std::move(*r);
    else return report_error(r.error(), false);
    auto venv = doctor_venv(args.doctor.venv, loaded);
    if (!venv) return report_error(venv.error(), false);
    const exec::EnvMap env = engine::launch_environment(*loaded, *venv, exec::current_environment());

    auto config = launch_config(args.command);
    if (!config) return report_error(config.error(), false);
    DoctorArgs doctor_args = args.doctor;
    doctor_args.venv = venv->string();
    doctor_args.check_files = false;
    auto run = run_doctor_and_lint(doctor_args, loaded, env, *config);
    if (!run) return report_error(run.error(), false);
    size_t errors = doctor::count_severity(run->findings, recipe::Severity::error);
    std::vector<doctor::Finding> shown;
    for (const auto& f : run->findings)
        if (f.severity != recipe::Severity::info) shown.push_back(f);
    fmt::print(stderr, "{}", doctor::format_findings(shown));
    fmt::print(stderr, "{}", doctor_summary("launch preflight", run->findings));
    if (errors > 0 && !args.force) {
        fmt::print(stderr, "launch refused: {} error(s); fix them or pass --force\n", errors);
        return k_exit_lint_errors;
    }
    if (errors > 0) fmt::print(stderr, "launching anyway (--force)\n");
    std::fflush(stdout);
    std::fflush(stderr);
    return report_error(engine::launch_command(args.command, env), false);
}

/// Options doctor and launch share.
void add_doctor_options(CLI::App* cmd, DoctorArgs& args) {
    cmd->add_option("--arch", args.arch,
                    "Device arch (\"9.0\") to check built CUDA code and the arch the venv was "
                    "built for against, instead of the GPUs detected here");
    cmd->add_option("--megatron", args.megatron, "Megatron-LM checkout, for helpers_cpp (default: $MEGATRON_DIR)");
    cmd->add_option("--symbol", args.symbols, "Also check that this dynamic symbol is defined (with --library)");
    cmd->add_option("--library", args.libraries,
                    "Library glob for --symbol, under site-packages (\"nvidia/**/libX.so.13\"); "
                    "its file name is looked up on the system when the venv has none; an "
                    "absolute path is that file");
    cmd->add_option("--import", args.imports, "Also check that this module imports");
}

}  // namespace

void set_explain_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<ExplainArgs>();
    auto* cmd =
        app.add_subcommand("explain", "Match a log (a failing step's, or a training log) against the known faults");
    cmd->add_option("log", args->log, "Log file")->required();
    cmd->add_option("--recipe", args->recipe, "Also use this recipe's [[fault]] entries (first)");
    cmd->add_flag("--json", args->json, "Print the matches as JSON");
    cmd->footer("Exit codes: 0 (matched or not), 1 unreadable log, 2 invalid recipe.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_explain(*args); });
}

void set_lint_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LintArgs>();
    auto* cmd = app.add_subcommand("lint", "Check training flags against a recipe's [[lint]] rules");
    cmd->add_option("config", args->config,
                    "Training flags: an args file or shell script, a flat YAML mapping, or "
                    "Megatron's --yaml-cfg file (.yaml/.yml)")
        ->required();
    cmd->add_option("--recipe", args->recipe, "Recipe with the [[lint]] rules")->required();
    cmd->add_option("--venv", args->venv,
                    "The training venv: `unless_import` rules try the import there (without it "
                    "they are reported as not checked)");
    cmd->add_flag("--json", args->json, "Print the findings as JSON");
    cmd->footer(
        "forbid_env rules also look at this shell's environment.\n"
        "Exit codes: 0 no errors, 2 usage or invalid recipe/config, 3 error findings.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_lint(*args); });
}

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

void set_doctor_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<DoctorArgs>();
    auto* cmd =
        app.add_subcommand("doctor", "Check a venv: imports, dependencies, symbols, CUDA code, paths, packages");
    cmd->add_option("--venv", args->venv, "The venv (default: the recipe's [venv] path)");
    cmd->add_option("--recipe", args->recipe,
                    "Recipe: its verify imports, allow_conflicts, installer and [[lint]] rules");
    cmd->add_option("--config", args->config, "Training flags to lint as well (needs --recipe)");
    add_doctor_options(cmd, *args);
    cmd->add_flag("--json", args->json, "Print the findings as JSON");
    cmd->footer(
        "With --recipe, or in a venv holding torch, TransformerEngine, megatron-core or apex, the\n"
        "imports checked are the recipe's and Megatron's defaults (torch, transformer_engine,\n"
        "amp_C, fused_weight_gradient_mlp_cuda, megatron.core); in any other venv they are the\n"
        "top-level modules of what is installed. One summary line per check group says what\n"
        "passed. Without --recipe, a pin the venv's recipe overrides on purpose (allow_conflicts,\n"
        "recorded by its last run in .bootstrap/declared-overrides.txt) is info, as with it.\n"
        "Each fix is a command for the venv examined: `bootstrap run R --venv DIR --only STEP`\n"
        "(the step that provides the module), or the installer command with the version a pin\n"
        "asks for.\n"
        "Exit codes: 0 no errors, 2 usage or invalid recipe/config, 3 error findings.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_doctor(*args); });
}

void set_relocate_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<RelocateArgs>();
    auto* cmd = app.add_subcommand("relocate", "Rewrite a moved or copied venv's bin/ shebangs and activate scripts");
    cmd->add_option("--venv", args->venv, "The venv, at its new place")->required();
    cmd->add_option("--from", args->from, "The old path (default: read from bin/activate's VIRTUAL_ENV= line)");
    cmd->add_flag("--json", args->json, "Print what was rewritten as JSON");
    cmd->footer("Each file is rewritten atomically with its mode kept. Exit codes: 0 ok, 1 failure.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_relocate(*args); });
}

void set_launch_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<LaunchArgs>();
    auto* cmd = app.add_subcommand("launch", "Run doctor and lint, then exec CMD with the venv's environment");
    cmd->add_option("recipe", args->doctor.recipe, "Recipe (venv, [[lint]] rules)")->required();
    cmd->add_option("command", args->command, "The training command, after --")->required();
    cmd->add_option("--venv", args->doctor.venv, "The venv (default: the recipe's [venv] path)");
    add_doctor_options(cmd, args->doctor);
    cmd->add_flag("--force", args->force, "Launch even when doctor or lint report errors");
    cmd->footer(
        "The flags linted are those of the --yaml-cfg FILE in CMD, else CMD's own.\n"
        "CMD gets VENV, VIRTUAL_ENV and PATH (venv's bin first), less the recipe's "
        "[env] unset.\nExit codes: CMD's own, 3 refused, 2 usage, 1 CMD not found.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_launch(*args); });
}

}  // namespace bootstrap::cli
