// What doctor, lint and launch share: their findings as JSON and text, linting a config file, and
// the doctor run (venv checks, the recipe's state, lint) that `doctor` prints and `launch` gates on.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/doctor_device.hpp"
#include "cli/doctor_run.hpp"
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
#include "engine/plan.hpp"
#include "exec/environment.hpp"
#include "exec/process.hpp"
#include "manifest/artifacts.hpp"
#include "pyenv/relocate.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

bool uses_te_path(const doctor::TrainingConfig& config) {
    bool te = true;
    for (const auto& flag : config.flags)
        if (doctor::normalize_flag(flag.name) == "--transformer-impl" && !flag.values.empty())
            te = flag.values.back() == "transformer_engine";
    return te;
}

}  // namespace

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

Result<std::filesystem::path> doctor_venv(const std::string& venv, const std::optional<recipe::Recipe>& loaded) {
    if (!venv.empty()) return std::filesystem::absolute(venv);
    if (!loaded) return fail(ErrorCode::usage, "give --venv DIR or --recipe R (for its [venv] path)");
    BS_TRY(auto pre, engine::gather_facts({}, false));
    return engine::resolve_venv_path(*loaded, engine::PlanOptions{}, pre);
}

std::string doctor_summary(const std::string& what, const std::vector<doctor::Finding>& findings) {
    auto n = [&](recipe::Severity s) { return doctor::count_severity(findings, s); };
    return fmt::format("{}: {} error(s), {} warning(s), {} info\n", what, n(recipe::Severity::error),
                       n(recipe::Severity::warning), n(recipe::Severity::info));
}

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
    // The build cache is doctor's to examine, like the files: `launch` gates on the venv only.
    if (args.check_files) {
        options.bootstrap_home = manifest::bootstrap_home(environment);
        if (auto it = environment.find("BOOTSTRAP_TRUSTED_KEYS"); it != environment.end())
            options.trust_env[it->first] = it->second;
    }
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

}  // namespace bootstrap::cli
