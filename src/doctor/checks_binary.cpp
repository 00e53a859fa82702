// Binary checks: the dynamic symbols of the library that will really load (README pitfall P10), and
// the CUDA code of built extensions against the device arch (P15).

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "inspect/elf_symbols.hpp"
#include "inspect/fatbin.hpp"
#include "pyenv/venv_library.hpp"

namespace bootstrap::doctor {

namespace {

using detail::make_finding;
using recipe::Severity;

/// The distribution whose RECORD lists `file` (relative to site-packages), "" if none.
std::string owner_of(const fs::path& venv, const fs::path& site, const fs::path& file) {
    std::string rel = file.lexically_relative(site).generic_string();
    for (const auto& [name, dist] : detail::installed(venv)) {
        std::ifstream record(dist.dist_info() / "RECORD");
        for (std::string line; std::getline(record, line);)
            if (line.substr(0, line.find(',')) == rel) return dist.name + " " + dist.version;
    }
    return {};
}

/// A built-in check of a system library only matters to what loads it: TransformerEngine.
bool uses_transformer_engine(const fs::path& venv) {
    for (const auto& [name, dist] : detail::installed(venv))
        if (core::starts_with(name, "transformer-engine")) return true;
    return false;
}

/// "upgrade nvidia-cublas: re-run step 'cublas' (bootstrap run R --venv V --only cublas) /
/// uv pip install --python V/bin/python --upgrade nvidia-cublas": the step asking for the
/// package (its requirement then no longer holds, so it runs), and the installer command.
std::string upgrade_fix(const DoctorOptions& options, const std::string& package) {
    const std::string command = detail::install_command(options, package, package, detail::InstallMode::upgrade);
    const std::string step = detail::step_installing(options.recipe, package);
    if (step.empty()) return fmt::format("upgrade {}: {}", package, command);
    return fmt::format("upgrade {}: re-run step '{}' ({}) / {}", package, step,
                       detail::run_command(options, "--only " + step), command);
}

/// The finding for one symbol check; `defined` says whether the library that loads has it.
Finding symbol_finding(const DoctorOptions& options, const SymbolCheck& check, bool builtin, bool& defined) {
    defined = false;
    auto site = find_site_packages(options.venv);
    auto loaded = pyenv::find_loaded_library({site}, check.library, options.environment);
    std::string title = fmt::format("{} in {}", check.symbol, check.library);
    if (loaded.file.empty())
        return make_finding(
            "elf-symbol", builtin ? Severity::info : Severity::error,
            fs::path(check.library).is_absolute()
                ? fmt::format("{}: {} is not a file", title, check.library)
                : fmt::format("{}: no library matches {} in the venv or the system", title, check.library),
            {fmt::format("searched: {}", core::join(loaded.searched, ", "))},
            builtin ? "none needed unless the training loads it"
                    : fmt::format("install {}", check.package.empty() ? "the library" : check.package));
    const fs::path& file = loaded.file;
    const std::string& where = loaded.where;
    std::vector<std::string> evidence{fmt::format("checked: {} (from {})", file.string(), where)};
    if (where == "the venv")
        if (auto owner = owner_of(options.venv, site, file); !owner.empty())
            evidence.push_back("installed by: " + owner);
    auto symbols = inspect::read_dynamic_symbols(file);
    if (!symbols)
        return make_finding("elf-symbol", Severity::error, fmt::format("{}: {}", title, symbols.error().message),
                            evidence, "reinstall the package that ships it");
    const auto* s = inspect::find_defined(*symbols, check.symbol);
    defined = s != nullptr;
    if (s)
        return make_finding("elf-symbol", Severity::info,
                            fmt::format("{} defines {}{}", file.filename().string(), check.symbol,
                                        s->version.empty() ? "" : ", version " + s->version),
                            evidence, "none needed");
    if (builtin && where == "the system" && !uses_transformer_engine(options.venv))
        return make_finding(
            "elf-symbol", Severity::info,
            fmt::format("{} does not define {}; it matters once TransformerEngine "
                        "is installed (none is)",
                        file.string(), check.symbol),
            evidence, fmt::format("install {} >= the version that defines it into the venv", check.package), check.why);
    std::string fix =
        check.package.empty() ? "install a build of the library that defines it" : upgrade_fix(options, check.package);
    return make_finding("elf-symbol", Severity::error,
                        fmt::format("{} does not define {} (undefined symbol at import)", file.string(), check.symbol),
                        evidence, fix, check.why);
}

/// The distribution an install step of one package installs ("nvidia-cublas" for
/// "nvidia-cublas>=13.4.1.1"), the fix for its symbol check; "" otherwise.
std::string installed_by(const recipe::Step& step) {
    if (step.kind != "install" || step.packages.size() != 1) return {};
    const std::string& spec = step.packages.front().value;
    std::string name = spec.substr(0, spec.find_first_of("<>=!~[;@ "));
    return name.find('{') == std::string::npos ? name : std::string();
}

}  // namespace

std::vector<detail::CudaLibrary> detail::cuda_libraries(const fs::path& site) {
    std::vector<CudaLibrary> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(site, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        const auto& path = it->path();
        if (!it->is_regular_file(ec) || path.extension() != ".so") continue;
        auto contents = inspect::read_cuda_contents(path);
        if (contents && contents->has_fatbin) out.push_back({path, std::move(contents->entries)});
    }
    std::sort(out.begin(), out.end(), [](const CudaLibrary& a, const CudaLibrary& b) { return a.file < b.file; });
    return out;
}

const std::vector<SymbolCheck>& builtin_symbol_checks() {
    static const std::vector<SymbolCheck> checks{
        {"cublasLtGroupedMatrixLayoutInit_internal", "nvidia/**/libcublasLt.so.13", "nvidia-cublas",
         "TransformerEngine 2.14 built against cuBLAS >= 13.3 calls it; it exists from cuBLAS "
         "13.2, while torch 2.11 pins nvidia-cublas==13.1.0.3 (upgrade to >= 13.4.1.1 knowingly, "
         "allow_conflicts on the step)"},
    };
    return checks;
}

std::vector<Finding> check_symbols(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    size_t checked = 0, defined = 0;
    auto run = [&](const SymbolCheck& check, bool builtin) {
        bool found = false;
        out.push_back(symbol_finding(options, check, builtin, found));
        ++checked;
        defined += found ? 1 : 0;
    };
    // Outside the training scope a built-in check (a library of the training stack) runs only
    // when the venv carries that library.
    const bool training = training_scope(options);
    const auto site = find_site_packages(options.venv);
    // The recipe's `elf_symbol` verify clauses are checked as --symbol is (those with
    // placeholders are left to `run`); a built-in check the recipe repeats runs once, as the
    // recipe's.
    std::vector<SymbolCheck> from_recipe;
    if (options.recipe)
        for (const auto& step : options.recipe->steps)
            for (const auto& clause : step.verify)
                if (clause.required_symbol() && clause.target.value.find('{') == std::string::npos &&
                    clause.library->value.find('{') == std::string::npos)
                    from_recipe.push_back(
                        {clause.target.value, clause.library->value, installed_by(step),
                         fmt::format("the recipe's step '{}' verifies it ({})", step.id, clause.loc.str())});
    auto repeated = [&](const SymbolCheck& check) {
        return std::any_of(from_recipe.begin(), from_recipe.end(), [&](const SymbolCheck& r) {
            return r.symbol == check.symbol && r.library == check.library;
        });
    };
    for (const auto& check : builtin_symbol_checks())
        if (!repeated(check) && (training || (!site.empty() && !pyenv::glob_files(site, check.library).empty())))
            run(check, true);
    for (const auto& check : from_recipe) run(check, false);
    for (const auto& check : options.symbols) run(check, false);
    detail::summarize(summary, "symbols",
                      checked == 0
                          ? "none checked"
                          : fmt::format("{} of {} defined", defined, detail::count_of(checked, "symbol", "symbols")));
    return out;
}

std::vector<Finding> check_cuda_code(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    if (!options.arch) {
        out.push_back(make_finding("cuda-arch", Severity::info,
                                   "CUDA code of built extensions not checked: no device arch", {},
                                   "pass --arch 9.0 (see `bootstrap device`)"));
        detail::summarize(summary, "cuda code", "not checked (no --arch)");
        return out;
    }
    auto site = find_site_packages(options.venv);
    if (site.empty()) {
        detail::summarize(summary, "cuda code", "not checked (no site-packages)");
        return out;
    }
    size_t checked = 0;
    for (const auto& [path, entries] : detail::cuda_libraries(site)) {
        ++checked;
        auto ok = inspect::check_cuda_arch(entries, *options.arch, path.filename().string());
        if (ok) continue;
        out.push_back(make_finding("cuda-arch", Severity::error, ok.error().message,
                                   {fmt::format("{}: {}", path.string(), inspect::summarize(entries))},
                                   fmt::format("rebuild it with TORCH_CUDA_ARCH_LIST=\"{}\" (NVTE_CUDA_ARCHS for "
                                               "TransformerEngine), set explicitly from the device",
                                               *options.arch)));
    }
    const size_t failed = out.size();
    if (out.empty())
        out.push_back(make_finding("cuda-arch", Severity::info,
                                   fmt::format("{} CUDA librar{} in site-packages carry code for {}", checked,
                                               checked == 1 ? "y" : "ies", *options.arch),
                                   {site.string()}, "none needed"));
    detail::summarize(summary, "cuda code",
                      fmt::format("{} of {} carry code for {}", checked - failed,
                                  detail::count_of(checked, "CUDA library", "CUDA libraries"), *options.arch));
    return out;
}

}  // namespace bootstrap::doctor
