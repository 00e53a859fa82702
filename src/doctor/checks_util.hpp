#pragma once
// Helpers shared by the doctor check files (not a public interface).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/checks.hpp"
#include "inspect/fatbin.hpp"
#include "pyenv/dist_info.hpp"

namespace bootstrap::doctor::detail {

/// How a module's source (and a finding's evidence) reads when an installed distribution's
/// files name it: "installed: click 8.1.7".
inline constexpr std::string_view k_installed_source = "installed: ";

[[nodiscard]] Finding make_finding(std::string rule, recipe::Severity severity, std::string message,
                                   std::vector<std::string> evidence, std::string fix, std::string explain = {});

/// The installed distributions (empty map when site-packages cannot be read).
[[nodiscard]] std::map<std::string, pyenv::Distribution> installed(const fs::path& venv);

/// The recipe step that installs `dist` (normalised name), or "".
[[nodiscard]] std::string step_installing(const recipe::Recipe* recipe, const std::string& dist);

/// The recipe a `bootstrap run` fix names, quoted for a shell: the one doctor was given, else
/// the one the venv was built from (options.recorded_recipe), else the word RECIPE.
[[nodiscard]] std::string recipe_argument(const DoctorOptions& options);

/// "bootstrap run R --venv V ARGS": the recipe's run on the venv doctor examined (never the
/// recipe's default venv), quoted for a shell. `args` ("--only x") may be empty.
[[nodiscard]] std::string run_command(const DoctorOptions& options, const std::string& args);

/// How an installer command treats what is installed already.
enum class InstallMode { plain, reinstall, upgrade };

/// The installer command (the recipe's installer; uv without a recipe) that installs
/// `requirement` ("nvidia-cublas==13.1.0.3", quoted here) into the venv, from the indexes the
/// step owning distribution `dist` used (options.step_indexes; credentials left out).
[[nodiscard]] std::string install_command(const DoctorOptions& options, const std::string& dist,
                                          const std::string& requirement, InstallMode mode = InstallMode::plain);

/// "re-run step 'x' (bootstrap run R --venv V --only x --force) / uv pip install --python
/// V/bin/python --reinstall D": the step when the recipe names the one owning `dist`, and the
/// installer.
[[nodiscard]] std::string reinstall_fix(const DoctorOptions& options, const std::string& dist);

/// The fix for a module that does not import: re-run the step that provides it (a step whose
/// verify clauses import exactly this module, as a build step producing an extension that a
/// package imports does; else the owner of the distribution providing it; else a step whose
/// verify clauses import its top-level package): "re-run step 'apex' (bootstrap run R --venv V
/// --only apex --force)"; without such a step, reinstall the distribution that provides it;
/// when none does, say so (never a made-up distribution name).
[[nodiscard]] std::string module_fix(const DoctorOptions& options, const std::string& module,
                                     const std::map<std::string, pyenv::Distribution>& dists);

/// The step that owns `dist` (options.owners, else step_installing), or "".
[[nodiscard]] std::string step_owning(const DoctorOptions& options, const std::string& dist);

/// "1 module" / "12 modules".
[[nodiscard]] std::string count_of(size_t n, const std::string& singular, const std::string& plural);

/// Fill `summary` (when given) with `group` and "group: text".
void summarize(CheckSummary* summary, const std::string& group, const std::string& text);

/// One shared library of site-packages with a .nv_fatbin section and the code it carries.
struct CudaLibrary {
    fs::path file;
    std::vector<inspect::FatbinEntry> entries;
};

/// Every CUDA library under `site` (recursively), sorted by path.
[[nodiscard]] std::vector<CudaLibrary> cuda_libraries(const fs::path& site);

/// Findings of severity error or warning.
[[nodiscard]] size_t problems(const std::vector<Finding>& findings);

}  // namespace bootstrap::doctor::detail
