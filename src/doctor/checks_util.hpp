#pragma once
// Helpers shared by the doctor check files (not a public interface).

#include <map>
#include <string>
#include <vector>

#include "doctor/checks.hpp"
#include "inspect/fatbin.hpp"
#include "pyenv/dist_info.hpp"

namespace bootstrap::doctor::detail {

[[nodiscard]] Finding make_finding(std::string rule, recipe::Severity severity, std::string message,
                                   std::vector<std::string> evidence, std::string fix,
                                   std::string explain = {});

/// The installed distributions (empty map when site-packages cannot be read).
[[nodiscard]] std::map<std::string, pyenv::Distribution> installed(const fs::path &venv);

/// The recipe step that installs `dist` (normalised name), or "".
[[nodiscard]] std::string step_installing(const recipe::Recipe *recipe, const std::string &dist);

/// "re-run step 'x' (bootstrap run R --only x) / uv pip install --python V --reinstall D".
[[nodiscard]] std::string reinstall_fix(const DoctorOptions &options, const std::string &dist);

/// The fix for a module that does not import: re-run the step that provides it (the owner of
/// the distribution providing it, else a step whose verify clauses import it):
/// "re-run step 'apex' (bootstrap run R --only apex)"; without such a step, reinstall the
/// distribution that provides it; when none does, say so (never a made-up distribution name).
[[nodiscard]] std::string module_fix(const DoctorOptions &options, const std::string &module,
                                     const std::map<std::string, pyenv::Distribution> &dists);

/// The step that owns `dist` (options.owners, else step_installing), or "".
[[nodiscard]] std::string step_owning(const DoctorOptions &options, const std::string &dist);

/// "1 module" / "12 modules".
[[nodiscard]] std::string count_of(size_t n, const std::string &singular,
                                   const std::string &plural);

/// Fill `summary` (when given) with `group` and "group: text".
void summarize(CheckSummary *summary, const std::string &group, const std::string &text);

/// One shared library of site-packages with a .nv_fatbin section and the code it carries.
struct CudaLibrary {
    fs::path file;
    std::vector<inspect::FatbinEntry> entries;
};

/// Every CUDA library under `site` (recursively), sorted by path.
[[nodiscard]] std::vector<CudaLibrary> cuda_libraries(const fs::path &site);

/// Findings of severity error or warning.
[[nodiscard]] size_t problems(const std::vector<Finding> &findings);

} // namespace bootstrap::doctor::detail
