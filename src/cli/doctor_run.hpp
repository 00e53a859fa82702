#pragma once
// What doctor, lint and launch share: their findings as JSON and text, linting a config file, and
// the doctor run (venv checks, the recipe's state, lint) that `doctor` prints and `launch` gates on.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "doctor/checks.hpp"
#include "doctor/flags.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::cli {

/// lint, doctor and launch exit with this when a finding has severity error.
inline constexpr int k_exit_lint_errors = 3;

[[nodiscard]] nlohmann::json finding_json(const doctor::Finding& f);

/// Lint `config_path` against the recipe; the probe imports in `venv` when one is given.
[[nodiscard]] Result<std::vector<doctor::Finding>> lint_file(const std::string& config_path,
                                                             const recipe::Recipe& recipe, const std::string& venv,
                                                             doctor::TrainingConfig& config_out);

/// "<file>: 1 error(s), 0 warning(s), 2 info (12 rules, 40 flags, args layout)\n".
[[nodiscard]] std::string lint_summary(const std::vector<doctor::Finding>& findings,
                                       const doctor::TrainingConfig& config, size_t rules);

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

/// Options doctor and launch share.
void add_doctor_options(CLI::App* cmd, DoctorArgs& args);

/// The venv: --venv, else the recipe's [venv] path. Error (usage) when neither is given.
[[nodiscard]] Result<std::filesystem::path> doctor_venv(const std::string& venv,
                                                        const std::optional<recipe::Recipe>& loaded);

/// "<what>: 1 error(s), 2 warning(s), 0 info\n".
[[nodiscard]] std::string doctor_summary(const std::string& what, const std::vector<doctor::Finding>& findings);

struct DoctorRun {
    std::filesystem::path venv;
    std::vector<doctor::Finding> findings;  // doctor's, then lint's
    std::vector<doctor::CheckSummary> checks;
    bool training = false;
    std::string config_file;
};

/// doctor's checks of the venv, the recipe's state findings, then lint of the config (given, or
/// read from args.config) when there is a recipe.
[[nodiscard]] Result<DoctorRun> run_doctor_and_lint(const DoctorArgs& args, const std::optional<recipe::Recipe>& loaded,
                                                    const exec::EnvMap& environment,
                                                    const std::optional<doctor::TrainingConfig>& given_config);

}  // namespace bootstrap::cli
