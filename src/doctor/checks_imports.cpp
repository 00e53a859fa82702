// Imports: each module in its own child forked from one interpreter that imported torch once,
// the root cause and the distribution behind a failure named.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "exec/process.hpp"
#include "pyenv/import_probe.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/module_owner.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::doctor {

namespace {

using detail::k_installed_source;
using detail::make_finding;
using recipe::Severity;

/// The training stack's distributions: their presence selects the training scope.
bool is_training_distribution(const std::string& name) {
    return name == "torch" || name == "megatron-core" || name == "apex" ||
           core::starts_with(name, "transformer-engine");
}

/// A name `import NAME` can take, and not a private one (`_distutils_hack`, `__editable___x`),
/// which its package imports itself.
bool is_public_module_name(const std::string& name) {
    if (name.empty() || name.front() == '_' || (name.front() >= '0' && name.front() <= '9')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

}  // namespace

bool training_scope(const DoctorOptions& options) {
    if (options.recipe) return true;
    for (const auto& [name, dist] : detail::installed(options.venv))
        if (is_training_distribution(name)) return true;
    return false;
}

std::vector<ImportCheck> planned_imports(const DoctorOptions& options) {
    std::vector<ImportCheck> out;
    auto add = [&](ImportCheck m) {
        for (auto& existing : out)
            if (existing.module == m.module) {
                existing.required = existing.required || m.required;
                for (auto& p : m.preload)
                    if (std::find(existing.preload.begin(), existing.preload.end(), p) == existing.preload.end())
                        existing.preload.push_back(p);
                if (existing.attr.empty()) existing.attr = m.attr;
                return;
            }
        out.push_back(std::move(m));
    };
    if (options.recipe)
        for (const auto& step : options.recipe->steps)
            for (const auto& clause : step.verify) {
                if (!clause.imported_module()) continue;
                if (clause.target.value.find('{') != std::string::npos) continue;
                ImportCheck check{clause.target.value,
                                  clause.attr ? clause.attr->value : "",
                                  fmt::format("recipe step '{}' ({})", step.id, clause.loc.str()),
                                  true,
                                  {},
                                  step.optional ? step.id : std::string()};
                for (const auto& m : clause.preload) check.preload.push_back(m.value);
                add(std::move(check));
            }
    for (const auto& m : options.extra_modules) add({m, "", "--import", true, {}, {}});
    if (training_scope(options)) {
        // The training stack (apex's modules are top-level extensions, not under `apex.`).
        for (const char* m :
             {"torch", "transformer_engine", "amp_C", "fused_weight_gradient_mlp_cuda", "megatron.core"})
            add({m, "", "default", false, {}, {}});
        return out;
    }
    for (const auto& [name, dist] : detail::installed(options.venv))
        for (const auto& module : pyenv::top_level_modules(dist))
            if (is_public_module_name(module))
                add({module, "", fmt::format("{}{} {}", k_installed_source, dist.name, dist.version), false, {}, {}});
    return out;
}

namespace {

/// Which installed distribution requires the missing module's distribution: {dependent, req}.
std::optional<std::pair<const pyenv::Distribution*, pyenv::Requirement>> who_requires(
    const std::map<std::string, pyenv::Distribution>& dists, const std::string& missing_module,
    const std::string& importing) {
    std::string wanted = pyenv::normalize_name(missing_module);
    std::string importer_top = importing.substr(0, importing.find('.'));
    std::optional<std::pair<const pyenv::Distribution*, pyenv::Requirement>> best;
    for (const auto& [name, dist] : dists) {
        auto reqs = pyenv::read_requires_dist(dist);
        if (!reqs) continue;
        for (const auto& req : *reqs) {
            if (req.normalized_name != wanted || dists.count(req.normalized_name)) continue;
            if (req.marker && req.marker->str().find("extra") != std::string::npos) continue;
            auto tops = pyenv::top_level_modules(dist);
            bool is_importer = std::find(tops.begin(), tops.end(), importer_top) != tops.end();
            if (!best || is_importer) best = std::pair(&dist, req);
            if (is_importer) return best;
        }
    }
    return best;
}

/// The installed distribution that provides top-level module `top` ("amp_C" -> "apex"); the
/// module name normalised when none does.
std::string distribution_of(const std::map<std::string, pyenv::Distribution>& dists, const std::string& top) {
    for (const auto& [name, dist] : dists) {
        auto tops = pyenv::top_level_modules(dist);
        if (std::find(tops.begin(), tops.end(), top) != tops.end()) return name;
    }
    return pyenv::normalize_name(top);
}

/// The installed distribution whose files hold `file` (a root cause's traceback frame): the
/// one providing the module that the path under site-packages names; nullptr elsewhere.
const pyenv::Distribution* distribution_of_file(const DoctorOptions& options,
                                                const std::map<std::string, pyenv::Distribution>& dists,
                                                const std::string& file) {
    auto site = find_site_packages(options.venv);
    if (site.empty() || file.empty()) return nullptr;
    std::error_code ec;
    fs::path rel = fs::path(file).lexically_relative(fs::weakly_canonical(site, ec));
    if (rel.empty() || core::starts_with(rel.string(), "..")) rel = fs::path(file).lexically_relative(site);
    if (rel.empty() || core::starts_with(rel.string(), "..")) return nullptr;
    std::string module = rel.parent_path().string();
    std::replace(module.begin(), module.end(), '/', '.');
    std::string stem = rel.stem().string();
    stem = stem.substr(0, stem.find('.'));
    if (stem != "__init__") module += (module.empty() ? "" : ".") + stem;
    auto providers = pyenv::distributions_providing(module, dists);
    return providers.empty() ? nullptr : providers.front();
}

/// The distribution a failure's root cause points at: the module an ImportError or
/// AttributeError blames, else the file the root exception was raised in.
const pyenv::Distribution* root_cause_distribution(const DoctorOptions& options,
                                                   const std::map<std::string, pyenv::Distribution>& dists,
                                                   const pyenv::ImportFailure& failure) {
    if (!failure.blamed_module.empty()) {
        auto providers = pyenv::distributions_providing(failure.blamed_module, dists);
        if (!providers.empty()) return providers.front();
    }
    std::string at = failure.root_cause_at.substr(0, failure.root_cause_at.rfind(':'));
    return distribution_of_file(options, dists, at);
}

Finding import_finding(const DoctorOptions& options, const ImportCheck& m, const exec::ProcessResult& result,
                       const std::map<std::string, pyenv::Distribution>& dists) {
    auto failure = pyenv::parse_import_probe(result.output);
    std::vector<std::string> evidence{fmt::format("asked for by: {}", m.source)};
    if (!failure.error.empty()) evidence.push_back(failure.error);
    if (failure.root_cause != failure.error) evidence.push_back("root cause: " + failure.root_cause);
    if (!failure.root_cause_at.empty()) evidence.push_back("raised at: " + failure.root_cause_at);
    std::string top = m.module.substr(0, m.module.find('.'));
    if (failure.missing_attribute)
        return make_finding("import", Severity::error, fmt::format("import {}: {}", m.module, failure.summary),
                            evidence, detail::module_fix(options, m.module, dists));
    if (auto owner = core::after_prefix(m.source, k_installed_source); failure.missing_module == top && owner)
        return make_finding("import", Severity::warning,
                            fmt::format("import {}: no such module, though the files of {} "
                                        "name it",
                                        m.module, *owner),
                            evidence, detail::reinstall_fix(options, distribution_of(dists, top)));
    if (failure.missing_module == top && !m.optional_step.empty() && options.recipe)
        return make_finding("import", Severity::warning,
                            fmt::format("{} is not installed: the optional step '{}' is not in "
                                        "this venv",
                                        m.module, m.optional_step),
                            evidence,
                            fmt::format("run it if the training needs it: {}",
                                        detail::run_command(options, "--only " + m.optional_step)),
                            "an optional step that fails (or is skipped) does not stop a run");
    if (failure.missing_module == top && !m.required)
        return make_finding("import", Severity::info,
                            fmt::format("{} is not installed (a default check; the recipe does "
                                        "not ask for it)",
                                        m.module),
                            evidence, "install it if the training needs it");
    if (!failure.missing_module.empty() && failure.missing_module != top) {
        if (auto who = who_requires(dists, failure.missing_module, m.module)) {
            const auto& [dependent, req] = *who;
            return make_finding("import", Severity::error,
                                fmt::format("import {} fails: distribution {} is missing (required by {} {})", m.module,
                                            req.name, dependent->name, dependent->version),
                                evidence, detail::reinstall_fix(options, dependent->normalized_name),
                                "a dependency was removed or never installed; reinstalling the dependent "
                                "brings it back");
        }
    }
    std::string why = failure.root_cause.empty() ? result.describe() : failure.root_cause;
    if (failure.root_cause.empty()) evidence.push_back(std::string(core::trim(core::last_lines(result.output, 3))));
    // Recipe, --import and the training stack's defaults must import; a top-level module found
    // by scanning what is installed may need an optional dependency to.
    const bool installed_scan = core::starts_with(m.source, k_installed_source);
    const Severity severity = installed_scan ? Severity::warning : Severity::error;
    auto own = pyenv::distributions_providing(m.module, dists);
    const pyenv::Distribution* cause = root_cause_distribution(options, dists, failure);
    if (cause && (own.empty() || own.front() != cause)) {
        std::string step = detail::step_owning(options, cause->normalized_name);
        std::string user = own.empty() ? m.module : own.front()->name;
        std::string fix = fmt::format("install a version of {} that {} works with ({} {} is installed){}", cause->name,
                                      user, cause->name, cause->version,
                                      step.empty() || !options.recipe
                                          ? fmt::format(": {}", detail::reinstall_fix(options, cause->normalized_name))
                                          : fmt::format(": change step '{}' and re-run it ({})", step,
                                                        detail::run_command(options, "--only " + step)));
        evidence.push_back(fmt::format("root cause in distribution {} {}", cause->name, cause->version));
        return make_finding(
            "import", severity,
            fmt::format("import {} fails: {} (root cause in {} {})", m.module, why, cause->name, cause->version),
            evidence, fix);
    }
    return make_finding("import", severity, fmt::format("import {} fails: {}", m.module, why), evidence,
                        detail::module_fix(options, m.module, dists));
}

}  // namespace

std::vector<Finding> check_imports(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    auto python = options.venv / "bin" / "python";
    std::error_code ec;
    if (!fs::exists(python, ec)) {
        out.push_back(make_finding("import", Severity::error, fmt::format("no interpreter at {}", python.string()),
                                   {python.string()}, "create the venv: " + detail::run_command(options, "")));
        detail::summarize(summary, "imports", "not checked (no interpreter)");
        return out;
    }
    auto dists = detail::installed(options.venv);
    const auto modules = planned_imports(options);
    // The rule (pyenv::probe_preload) says what each module needs first; the server imports
    // all of that, and torch whenever the venv has it, once: every check is a child forked
    // from it, which is how Megatron's imports see the venv (torch first).
    std::vector<std::filesystem::path> dirs;
    if (auto it = options.environment.find("PYTHONPATH"); it != options.environment.end())
        for (const auto& entry : core::split(it->second, ':'))
            if (!entry.empty()) dirs.emplace_back(entry);
    for (auto& d : pyenv::module_search_dirs(find_site_packages(options.venv))) dirs.push_back(std::move(d));
    std::vector<std::string> preload;
    auto want = [&](const std::string& p) {
        if (std::find(preload.begin(), preload.end(), p) == preload.end()) preload.push_back(p);
    };
    if (dists.count("torch")) want("torch");
    std::vector<pyenv::ProbeRequest> requests;
    for (const auto& m : modules) {
        for (const auto& p : pyenv::probe_preload(m.module, dirs, m.preload).modules) want(p);
        requests.push_back({m.module, m.attr});
    }
    const size_t jobs = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    auto served = pyenv::run_probe_server(python, requests, exec::compose_environment(options.environment, {}, {}),
                                          preload, jobs, options.import_timeout);
    if (!served) {
        out.push_back(make_finding("import", Severity::error,
                                   fmt::format("cannot run {}: {}", python.string(), served.error().message),
                                   {served.error().detail}, "check the venv's interpreter (see venv findings)"));
        detail::summarize(summary, "imports", "not checked (the interpreter does not run)");
        return out;
    }
    size_t ok = 0, absent = 0;
    for (size_t i = 0; i < modules.size(); ++i) {
        const auto& ran = served->results[i];
        if (ran.ok()) {
            ++ok;
            continue;
        }
        out.push_back(import_finding(options, modules[i], ran, dists));
        if (out.back().severity == Severity::info) ++absent;
    }
    std::string text = fmt::format("{} ok", detail::count_of(ok, "module", "modules"));
    if (size_t failed = modules.size() - ok - absent)
        text = fmt::format("{} of {} modules ok, {} failed", ok, modules.size(), failed);
    if (absent) text += fmt::format(", {} not installed", absent);
    if (!training_scope(options))
        text += fmt::format(" (the top-level modules of {} installed)",
                            detail::count_of(dists.size(), "distribution", "distributions"));
    if (!served->preloaded.empty())
        text += fmt::format(" ({} imported first, once)", core::join(served->preloaded, ", "));
    detail::summarize(summary, "imports", text);
    return out;
}

}  // namespace bootstrap::doctor
