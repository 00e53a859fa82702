// Helpers shared by the doctor check files: findings, the installed set, and the fixes that
// name a step or an installer command.

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/module_owner.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::doctor::detail {

Finding make_finding(std::string rule, recipe::Severity severity, std::string message,
                     std::vector<std::string> evidence, std::string fix, std::string explain) {
    Finding f;
    f.rule = std::move(rule);
    f.severity = severity;
    f.message = std::move(message);
    f.evidence = std::move(evidence);
    f.fix = std::move(fix);
    f.explain = std::move(explain);
    return f;
}

std::map<std::string, pyenv::Distribution> installed(const fs::path& venv) {
    auto site = find_site_packages(venv);
    if (site.empty()) return {};
    auto scanned = pyenv::scan_site_packages(site);
    return scanned ? *scanned : std::map<std::string, pyenv::Distribution>{};
}

std::string step_installing(const recipe::Recipe* recipe, const std::string& dist) {
    if (!recipe) return {};
    for (const auto& step : recipe->steps)
        for (const auto& pkg : step.packages)
            if (auto req = pyenv::Requirement::parse(pkg.value); req && req->normalized_name == dist) return step.id;
    return {};
}

std::string recipe_argument(const DoctorOptions& options) {
    if (options.recipe) return core::shell_quote(options.recipe->file.string());
    return options.recorded_recipe.empty() ? std::string("RECIPE")
                                           : core::shell_quote(options.recorded_recipe.string());
}

std::string run_command(const DoctorOptions& options, const std::string& args) {
    return fmt::format("bootstrap run {} --venv {}{}{}", recipe_argument(options),
                       core::shell_quote(options.venv.string()), args.empty() ? "" : " ", args);
}

namespace {

/// "--only x --force": the journal may call the step up to date while what it made is broken
/// (a file changed under an unchanged RECORD), so the printed command runs it regardless.
std::string rerun_arguments(const std::string& step) { return fmt::format("--only {} --force", step); }

/// " --index-url U --extra-index-url E" for the indexes the step owning `dist` used (the
/// journal's, default first), with no credentials: the installer finds them where the run did
/// (netrc, keyring, its config), and a printed command must not show them.
std::string index_flags(const DoctorOptions& options, const std::string& dist) {
    auto it = options.step_indexes.find(step_owning(options, dist));
    if (it == options.step_indexes.end() || it->second.empty() || it->second.front().empty()) return {};
    std::string out;
    for (size_t i = 0; i < it->second.size(); ++i)
        out += fmt::format(" {} {}", i == 0 ? "--index-url" : "--extra-index-url",
                           core::shell_quote(pyenv::with_credentials(it->second[i], {})));
    return out;
}

}  // namespace

std::string install_command(const DoctorOptions& options, const std::string& dist, const std::string& requirement,
                            InstallMode mode) {
    const std::string python = core::shell_quote((options.venv / "bin" / "python").string());
    const bool pip = options.recipe && options.recipe->venv.installer == recipe::InstallerKind::pip;
    const char* flag = mode == InstallMode::upgrade ? " --upgrade"
                       : mode == InstallMode::plain ? ""
                       : pip                        ? " --force-reinstall"
                                                    : " --reinstall";
    return pip ? fmt::format("{} -m pip install{}{} {}", python, index_flags(options, dist), flag,
                             core::shell_quote(requirement))
               : fmt::format("uv pip install --python {}{}{} {}", python, index_flags(options, dist), flag,
                             core::shell_quote(requirement));
}

std::string reinstall_fix(const DoctorOptions& options, const std::string& dist) {
    std::string command = install_command(options, dist, dist, InstallMode::reinstall);
    std::string step = step_owning(options, dist);
    if (step.empty() || !options.recipe) return command;
    return fmt::format("re-run step '{}' ({}) / {}", step, run_command(options, rerun_arguments(step)), command);
}

std::string step_owning(const DoctorOptions& options, const std::string& dist) {
    if (auto it = options.owners.find(dist); it != options.owners.end()) return it->second;
    return step_installing(options.recipe, dist);
}

namespace {

/// A recipe step whose verify clauses import `module` (a build or pybind11 step provides the
/// extensions it checks: apex's amp_C), or "".
std::string step_verifying(const recipe::Recipe* recipe, const std::string& module) {
    if (!recipe) return {};
    for (const auto& step : recipe->steps) {
        if (step.kind == "check") continue;  // checks only look; the step to re-run is the one that builds
        for (const auto& clause : step.verify)
            if (const auto* imported = clause.imported_module(); imported && imported->value == module) return step.id;
    }
    return {};
}

}  // namespace

std::string module_fix(const DoctorOptions& options, const std::string& module,
                       const std::map<std::string, pyenv::Distribution>& dists) {
    auto providers = pyenv::distributions_providing(module, dists);
    const pyenv::Distribution* dist = providers.empty() ? nullptr : providers.front();
    const std::string owner = dist ? step_owning(options, dist->normalized_name) : std::string();
    // The step that checks this very module produces what it needs: TransformerEngine's torch
    // extension is built by the step verifying `transformer_engine.pytorch`, though the
    // package's files belong to the step installing transformer_engine.
    std::string step = step_verifying(options.recipe, module);
    if (step.empty()) step = owner;
    if (step.empty()) step = step_verifying(options.recipe, module.substr(0, module.find('.')));
    if (!step.empty() && options.recipe) {
        std::string rerun = fmt::format("re-run step '{}' ({})", step, run_command(options, rerun_arguments(step)));
        return dist && step == owner
                   ? fmt::format("{}; it provides {} through {} {}", rerun, module, dist->name, dist->version)
                   : rerun;
    }
    if (dist) return reinstall_fix(options, dist->normalized_name);
    return fmt::format(
        "no installed distribution provides {}: install or build the package "
        "that does (a recipe step with a verify clause `{{ import = \"{}\" }}` "
        "makes doctor name it)",
        module, module);
}

std::string count_of(size_t n, const std::string& singular, const std::string& plural) {
    return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

void summarize(CheckSummary* summary, const std::string& group, const std::string& text) {
    if (summary) *summary = CheckSummary{group, group + ": " + text};
}

size_t problems(const std::vector<Finding>& findings) {
    return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) {
        return f.severity == recipe::Severity::error || f.severity == recipe::Severity::warning;
    }));
}

}  // namespace bootstrap::doctor::detail
