// Wrong or missing packages and settings: PyPI's unrelated `apex`, pip missing when a step
// needs it (P13), Megatron's helpers_cpp built for another Python (P14), nvcc vs torch's CUDA
// (apex refuses to build otherwise), variables that must not be set (P5, P20), and install
// steps whose own requirements a later change undid (which step to re-run).

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "exec/process.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/module_owner.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::doctor {

namespace {

using detail::make_finding;
using recipe::Severity;

/// METADATA header `field` ("" when absent); headers end at the first blank line.
std::string metadata_field(const pyenv::Distribution& dist, const std::string& field) {
    std::ifstream in(dist.dist_info() / "METADATA");
    for (std::string line; std::getline(in, line) && !line.empty();)
        if (core::starts_with(line, field + ":")) return std::string(core::trim(line.substr(field.size() + 1)));
    return {};
}

void check_apex(const DoctorOptions& options, const std::map<std::string, pyenv::Distribution>& dists,
                std::vector<Finding>& out) {
    auto it = dists.find("apex");
    if (it == dists.end()) return;
    const auto& dist = it->second;
    auto tops = pyenv::top_level_modules(dist);
    bool has_extensions = std::any_of(tops.begin(), tops.end(), [](const std::string& m) {
        return m == "amp_C" || m == "apex_C" || core::starts_with(m, "fused_");
    });
    std::string summary = metadata_field(dist, "Summary");
    std::string home = metadata_field(dist, "Home-page");
    bool nvidia =
        has_extensions || summary.find("NVIDIA") != std::string::npos || home.find("NVIDIA/apex") != std::string::npos;
    if (nvidia) return;
    out.push_back(make_finding(
        "apex", Severity::error, fmt::format("apex {} is PyPI's unrelated `apex` package, not NVIDIA's", dist.version),
        {fmt::format("{}: Summary: {}", (dist.dist_info() / "METADATA").string(), summary.empty() ? "(none)" : summary),
         fmt::format("Home-page: {}", home.empty() ? "(none)" : home),
         "no amp_C / apex_C / fused_* extension modules in its RECORD"},
        fmt::format("uninstall it (uv pip uninstall --python {} apex) and build NVIDIA apex from "
                    "source: APEX_CPP_EXT=1 APEX_CUDA_EXT=1, --no-build-isolation",
                    core::shell_quote((options.venv / "bin" / "python").string())),
        "NVIDIA apex has no PyPI release; `pip install apex` fetches a web toolkit"));
}

bool recipe_needs_pip(const recipe::Recipe* recipe, std::string* why) {
    if (!recipe) return false;
    if (recipe->venv.installer == recipe::InstallerKind::pip) {
        *why = fmt::format("[venv] installer = \"pip\" ({})", recipe->venv.loc.str());
        return true;
    }
    for (const auto& step : recipe->steps)
        for (size_t i = 0; i + 1 < step.texts.size(); ++i)
            if (step.texts[i].value == "-m" && step.texts[i + 1].value == "pip") {
                *why = fmt::format("step '{}' runs `-m pip` ({})", step.id, step.texts[i].loc.str());
                return true;
            }
    return false;
}

void check_pip(const DoctorOptions& options, const std::map<std::string, pyenv::Distribution>& dists,
               std::vector<Finding>& out) {
    std::string why;
    if (dists.count("pip") || !recipe_needs_pip(options.recipe, &why)) return;
    out.push_back(make_finding(
        "pip", Severity::error, "pip is not installed in the venv, but the recipe needs it",
        {why, fmt::format("no pip-*.dist-info in {}", find_site_packages(options.venv).string())},
        fmt::format("{} (or create the venv with `uv venv --seed`)", detail::install_command(options, "pip", "pip")),
        "uv venvs have no pip (README pitfall P13)"));
}

/// Megatron's helpers_cpp built for this venv's Python; returns what passed ("" when it was not
/// checked or a finding says what is wrong).
std::string check_helpers_cpp(const DoctorOptions& options, std::vector<Finding>& out) {
    if (options.megatron_dir.empty()) return {};
    std::error_code ec;
    fs::path dir = options.megatron_dir / "megatron" / "core" / "datasets";
    if (!fs::is_directory(dir, ec)) {
        out.push_back(make_finding("helpers-cpp", Severity::warning,
                                   fmt::format("{} has no megatron/core/datasets", options.megatron_dir.string()),
                                   {dir.string()}, "pass the Megatron-LM checkout: --megatron DIR"));
        return {};
    }
    auto facts = pyenv::venv_facts(options.venv, exec::compose_environment(options.environment, {}, {}), false);
    if (!facts) return {};  // the import findings already say the interpreter is unusable
    std::vector<fs::path> built;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (core::starts_with(e.path().filename().string(), "helpers_cpp") && e.path().extension() == ".so")
            built.push_back(e.path());
    // pybind11 prints both include directories (Python's and its own) for the venv's Python.
    const std::string quoted_dir = core::shell_quote(dir.string());
    std::string fix = fmt::format(
        "build helpers.cpp with the venv's own EXT_SUFFIX: g++ -O3 -shared -std=c++17 -fPIC "
        "$({} -m pybind11 --includes) {}/helpers.cpp -o {}/helpers_cpp{}",
        core::shell_quote((options.venv / "bin" / "python").string()), quoted_dir, quoted_dir, facts->ext_suffix);
    if (options.recipe)
        for (const auto& step : options.recipe->steps)
            if (step.kind == "pybind11") {  // the recipe's step builds it for the venv
                fix = fmt::format("re-run step '{}' ({}), or {}", step.id,
                                  detail::run_command(options, "--only " + step.id + " --force"), fix);
                break;
            }
    auto wanted = std::find_if(built.begin(), built.end(), [&](const fs::path& p) {
        return p.filename().string() == "helpers_cpp" + facts->ext_suffix;
    });
    if (wanted != built.end())
        return fmt::format("Megatron's helpers_cpp is built for this Python ({})", wanted->string());
    if (built.empty()) {
        out.push_back(make_finding("helpers-cpp", Severity::warning,
                                   "Megatron's helpers_cpp is not built: it would be compiled at start-up with "
                                   "`make`, which needs python3-config (absent from uv venvs)",
                                   {fmt::format("no helpers_cpp*.so in {}", dir.string())}, fix, "README pitfall P14"));
        return {};
    }
    std::vector<std::string> evidence;
    for (const auto& p : built) evidence.push_back(p.string());
    evidence.push_back(fmt::format("this venv's EXT_SUFFIX: {}", facts->ext_suffix));
    out.push_back(make_finding("helpers-cpp", Severity::error,
                               fmt::format("Megatron's helpers_cpp is built for another Python "
                                           "(expected helpers_cpp{})",
                                           facts->ext_suffix),
                               evidence, fix, "an extension is only valid for its EXT_SUFFIX"));
    return {};
}

std::string torch_cuda_version(const fs::path& site) {
    auto text = core::read_file(site / "torch" / "version.py");
    if (!text) return {};
    static const std::regex cuda(R"(^cuda(?:\s*:\s*[^=]+)?\s*=\s*['"]([0-9.]+)['"])");
    for (const auto& line : core::split(*text, '\n')) {
        std::smatch m;
        // std::regex recurses per character: a line that long is no `cuda = '12.8'` anyway.
        if (line.size() <= 4096 && std::regex_search(line, m, cuda)) return m[1];
    }
    return {};
}

/// "12.8" from nvcc --version's "release 12.8," (digits, a dot, digits), or "".
std::string nvcc_release(std::string_view output) {
    auto digits = [&](size_t from) {
        size_t end = from;
        while (end < output.size() && std::isdigit(static_cast<unsigned char>(output[end]))) ++end;
        return end;
    };
    for (size_t at = output.find("release "); at != std::string_view::npos; at = output.find("release ", at + 1)) {
        size_t major = at + 8, dot = digits(major);
        if (dot == major || dot >= output.size() || output[dot] != '.') continue;
        size_t end = digits(dot + 1);
        if (end > dot + 1) return std::string(output.substr(major, end - major));
    }
    return {};
}

void check_nvcc(const DoctorOptions& options, std::vector<Finding>& out) {
    auto site = find_site_packages(options.venv);
    std::string torch_cuda = site.empty() ? "" : torch_cuda_version(site);
    if (torch_cuda.empty()) return;
    fs::path nvcc = exec::find_program("nvcc", options.environment);
    std::error_code ec;
    for (const char* home : {"CUDA_HOME", "CUDA_PATH"})
        if (auto it = options.environment.find(home);
            nvcc.empty() && it != options.environment.end() && fs::exists(fs::path(it->second) / "bin" / "nvcc", ec))
            nvcc = fs::path(it->second) / "bin" / "nvcc";
    if (nvcc.empty() && fs::exists("/usr/local/cuda/bin/nvcc", ec)) nvcc = "/usr/local/cuda/bin/nvcc";
    std::string evidence_torch = fmt::format("{}: cuda = '{}'", (site / "torch" / "version.py").string(), torch_cuda);
    if (nvcc.empty()) {
        out.push_back(make_finding("nvcc", Severity::info, "no nvcc found: CUDA extensions (apex) cannot be built here",
                                   {evidence_torch}, fmt::format("install CUDA {} (nvcc)", torch_cuda)));
        return;
    }
    exec::ProcessSpec spec;
    spec.argv = {nvcc.string(), "--version"};
    spec.env = exec::compose_environment(options.environment, {}, {});
    spec.capture = true;
    spec.timeout = std::chrono::seconds(30);
    auto ran = exec::run_process(spec);
    // "Cuda compilation tools, release 12.8, V12.8.93": scanned by hand, the output is unbounded.
    if (!ran || !ran->ok()) return;
    std::string nvcc_version = nvcc_release(ran->output);
    if (nvcc_version.empty()) return;
    auto major_minor = [](const std::string& v) {
        auto parts = core::split(v, '.');
        return parts.size() >= 2 ? parts[0] + "." + parts[1] : v;
    };
    if (major_minor(torch_cuda) == nvcc_version) return;
    out.push_back(make_finding(
        "nvcc", Severity::warning,
        fmt::format("nvcc is CUDA {} but torch was built with CUDA {}", nvcc_version, torch_cuda),
        {evidence_torch, fmt::format("{} --version: release {}", nvcc.string(), nvcc_version)},
        fmt::format("put CUDA {}'s nvcc first on PATH (or CUDA_HOME) before building extensions", torch_cuda),
        "apex's setup.py refuses to build CUDA extensions when nvcc differs from "
        "torch.version.cuda"));
}

/// A dist-info an install left unusable (no METADATA after a full disk, a METADATA or RECORD
/// that is not a regular file): the installers fail on it, and pip cannot uninstall it.
void check_broken_installs(const DoctorOptions& options, std::vector<Finding>& out) {
    const fs::path site = find_site_packages(options.venv);
    if (site.empty()) return;
    auto dists = pyenv::scan_site_packages(site, {}, /*include_broken=*/true);
    if (!dists) return;
    for (const auto& [name, dist] : *dists) {
        if (dist.broken.empty()) continue;
        std::string fix;
        if (options.recipe) {
            const std::string step = detail::step_installing(options.recipe, name);
            fix = fmt::format(
                "{} removes it first (the dist-info and the files its RECORD lists){}",
                detail::run_command(options, ""),
                step.empty() ? std::string() : fmt::format("; step '{}' then installs {} again", step, name));
        } else {
            fix = fmt::format(
                "bootstrap rollback --venv {} --to N (an entry of `bootstrap history --venv {}`) "
                "removes it and reinstalls {} when the entry has it; a run of the venv's recipe "
                "removes it too ({})",
                core::shell_quote(options.venv.string()), core::shell_quote(options.venv.string()), name,
                detail::run_command(options, ""));
        }
        out.push_back(make_finding(
            "broken-install", Severity::error,
            fmt::format("broken install of {}{}: {}", name, dist.version.empty() ? "" : " " + dist.version,
                        dist.broken),
            {dist.dist_info().string(), "uv fails on it (\"Failed to read metadata\") and pip cannot uninstall it"},
            fix,
            "an install cut short (a full disk, a killed installer) leaves a dist-info without its "
            "METADATA"));
    }
}

/// An install step asks for `nvidia-cublas>=13.4.1.1` and a later step re-resolved it down to
/// torch's pin: the step's own requirement no longer holds, so re-running from it restores it
/// (a run keeps such overrides in later steps; one of an older bootstrap, or by hand, may not).
void check_step_requirements(const DoctorOptions& options, const std::map<std::string, pyenv::Distribution>& dists,
                             std::vector<Finding>& out) {
    if (!options.recipe || dists.empty()) return;
    auto facts = pyenv::venv_facts(options.venv, exec::compose_environment(options.environment, {}, {}), false);
    std::set<std::string> named_later;  // a later step asking for a name decides its version
    std::vector<Finding> found;
    const auto& steps = options.recipe->steps;
    for (auto step_it = steps.rbegin(); step_it != steps.rend(); ++step_it) {
        const auto& step = *step_it;
        if (step.kind != "install") continue;
        std::vector<std::string> names;
        for (const auto& pkg : step.packages) {
            auto req = pyenv::Requirement::parse(pkg.value);
            if (req) names.push_back(req->normalized_name);
            if (!req || pkg.value.find('{') != std::string::npos || !req->url.empty() ||
                named_later.count(req->normalized_name))
                continue;  // a placeholder or a URL (known only to a run), or superseded
            if (req->marker && (!facts || !req->marker->evaluate(facts->markers))) continue;
            auto it = dists.find(req->normalized_name);
            std::string problem;
            if (it == dists.end()) {
                problem = fmt::format("{} is not installed", req->name);
            } else if (auto version = pyenv::Version::parse(it->second.version);
                       version && !req->specifier.empty() && !req->specifier.contains(*version, true)) {
                problem = fmt::format("{} {} is installed", it->second.name, it->second.version);
            }
            if (problem.empty()) continue;
            if (step.optional && it == dists.end()) {
                found.push_back(
                    make_finding("step-requirements", Severity::warning,
                                 fmt::format("optional step '{}' is not in this venv: {}", step.id, problem),
                                 {fmt::format("{}: packages of step '{}'", pkg.loc.str(), step.id)},
                                 fmt::format("run it if the training needs it: {}",
                                             detail::run_command(options, "--only " + step.id)),
                                 "an optional step that fails (or is skipped) does not stop a run"));
                continue;
            }
            found.push_back(make_finding(
                "step-requirements", Severity::error,
                fmt::format("step '{}' asks for {}, but {}", step.id, req->str(), problem),
                {fmt::format("{}: packages of step '{}'", pkg.loc.str(), step.id)},
                fmt::format("re-run from that step: {}", detail::run_command(options, "--from " + step.id)),
                "a later step (or a hand-made install) changed it; a run keeps deliberate overrides "
                "in later steps and fails when a step undoes an earlier one"));
        }
        named_later.insert(names.begin(), names.end());
    }
    out.insert(out.end(), found.rbegin(), found.rend());  // in recipe order
}

void check_variables(const DoctorOptions& options, std::vector<Finding>& out) {
    const auto& env = options.environment;
    if (auto it = env.find("MCORE_DPA_USE_SDPA"); options.te_path && it != env.end())
        out.push_back(make_finding("env", Severity::error,
                                   "MCORE_DPA_USE_SDPA is set, but training uses the "
                                   "TransformerEngine path",
                                   {fmt::format("environment: MCORE_DPA_USE_SDPA={}", it->second)},
                                   "unset MCORE_DPA_USE_SDPA (it belongs to the local/SDPA attention path)",
                                   "README pitfall P20"));
    if (auto it = env.find("UV_PROJECT_ENVIRONMENT"); it != env.end() && fs::path(it->second) != options.venv)
        out.push_back(make_finding(
            "env", Severity::warning, "UV_PROJECT_ENVIRONMENT is set and overrides VIRTUAL_ENV for `uv sync`/`uv run`",
            {fmt::format("environment: UV_PROJECT_ENVIRONMENT={}", it->second)},
            "unset UV_PROJECT_ENVIRONMENT (recipes list it in [env] unset)", "README pitfall P5"));
}

}  // namespace

std::vector<Finding> check_packages(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    auto dists = detail::installed(options.venv);
    check_broken_installs(options, out);
    check_step_requirements(options, dists, out);
    check_apex(options, dists, out);
    check_pip(options, dists, out);
    const std::string helpers = check_helpers_cpp(options, out);
    check_nvcc(options, out);
    check_variables(options, out);
    const size_t n = detail::problems(out);
    std::string text = n == 0 ? "no broken install, known-bad package, build tool or variable"
                              : detail::count_of(n, "problem", "problems");
    if (!helpers.empty()) text += "; " + helpers;
    detail::summarize(summary, "packages", text);
    return out;
}

DoctorReport run_checks(const DoctorOptions& options) {
    DoctorReport report;
    report.training = training_scope(options);
    using Check = std::vector<Finding> (*)(const DoctorOptions&, CheckSummary*);
    for (Check check : {Check{check_venv_integrity}, Check{check_installed_files}, Check{check_imports},
                        Check{check_dependencies}, Check{check_symbols}, Check{check_cuda_code}, Check{check_built_for},
                        Check{check_packages}, Check{check_build_cache}}) {
        CheckSummary summary;
        for (auto& f : check(options, &summary)) report.findings.push_back(std::move(f));
        report.checks.push_back(std::move(summary));
    }
    return report;
}

std::vector<Finding> run_doctor(const DoctorOptions& options) { return run_checks(options).findings; }

}  // namespace bootstrap::doctor
