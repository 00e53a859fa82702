// Imports (each module in its own interpreter, root cause named) and dependency consistency
// (`pip check`, from dist-info metadata).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/module_owner.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "exec/process.hpp"
#include "pyenv/import_probe.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::doctor {

namespace detail {

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

std::map<std::string, pyenv::Distribution> installed(const fs::path &venv) {
    auto site = find_site_packages(venv);
    if (site.empty())
        return {};
    auto scanned = pyenv::scan_site_packages(site);
    return scanned ? *scanned : std::map<std::string, pyenv::Distribution>{};
}

std::string step_installing(const recipe::Recipe *recipe, const std::string &dist) {
    if (!recipe)
        return {};
    for (const auto &step : recipe->steps)
        for (const auto &pkg : step.packages)
            if (auto req = pyenv::Requirement::parse(pkg.value);
                req && req->normalized_name == dist)
                return step.id;
    return {};
}

std::string reinstall_fix(const DoctorOptions &options, const std::string &dist) {
    std::string python = (options.venv / "bin" / "python").string();
    std::string command =
        options.recipe && options.recipe->venv.installer == recipe::InstallerKind::pip
            ? fmt::format("{} -m pip install --force-reinstall {}", python, dist)
            : fmt::format("uv pip install --python {} --reinstall {}", python, dist);
    std::string step = step_installing(options.recipe, dist);
    if (step.empty())
        return command;
    return fmt::format("re-run step '{}' (bootstrap run {} --from {}) / {}", step,
                       options.recipe->file.string(), step, command);
}

std::string count_of(size_t n, const std::string &singular, const std::string &plural) {
    return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

void summarize(CheckSummary *summary, const std::string &group, const std::string &text) {
    if (summary)
        *summary = CheckSummary{group, group + ": " + text};
}

size_t problems(const std::vector<Finding> &findings) {
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [](const Finding &f) {
            return f.severity == recipe::Severity::error || f.severity == recipe::Severity::warning;
        }));
}

} // namespace detail

namespace {

/// How a module's source reads when an installed distribution's files name it.
constexpr std::string_view k_installed_source = "installed: ";


using detail::make_finding;
using recipe::Severity;

/// The training stack's distributions: their presence selects the training scope.
bool is_training_distribution(const std::string &name) {
    return name == "torch" || name == "megatron-core" || name == "apex" ||
           core::starts_with(name, "transformer-engine");
}

/// A name `import NAME` can take, and not a private one (`_distutils_hack`, `__editable___x`),
/// which its package imports itself.
bool is_public_module_name(const std::string &name) {
    if (name.empty() || name.front() == '_' || (name.front() >= '0' && name.front() <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

/// Run the probes up to `jobs` at a time (each is an interpreter start-up); results in order.
std::vector<Result<exec::ProcessResult>> run_probes(const std::vector<exec::ProcessSpec> &specs,
                                                    size_t jobs) {
    std::vector<std::optional<Result<exec::ProcessResult>>> results(specs.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < specs.size(); i = next++)
            results[i] = exec::run_process(specs[i]);
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < std::min(jobs, specs.size()); ++t)
        threads.emplace_back(worker);
    worker();
    for (auto &t : threads)
        t.join();
    std::vector<Result<exec::ProcessResult>> out;
    out.reserve(results.size());
    for (auto &r : results)
        out.push_back(std::move(*r));
    return out;
}

} // namespace

bool training_scope(const DoctorOptions &options) {
    if (options.recipe)
        return true;
    for (const auto &[name, dist] : detail::installed(options.venv))
        if (is_training_distribution(name))
            return true;
    return false;
}

std::vector<ImportCheck> planned_imports(const DoctorOptions &options) {
    std::vector<ImportCheck> out;
    auto add = [&](ImportCheck m) {
        for (auto &existing : out)
            if (existing.module == m.module) {
                existing.required = existing.required || m.required;
                if (existing.attr.empty())
                    existing.attr = m.attr;
                return;
            }
        out.push_back(std::move(m));
    };
    if (options.recipe)
        for (const auto &step : options.recipe->steps)
            for (const auto &clause : step.verify) {
                if (clause.kind != recipe::VerifyClause::Kind::import_module)
                    continue;
                if (clause.target.value.find('{') != std::string::npos)
                    continue;
                add({clause.target.value, clause.attr ? clause.attr->value : "",
                     fmt::format("recipe step '{}' ({})", step.id, clause.loc.str()), true});
            }
    for (const auto &m : options.extra_modules)
        add({m, "", "--import", true});
    if (training_scope(options)) {
        // The training stack (apex's modules are top-level extensions, not under `apex.`).
        for (const char *m : {"torch", "transformer_engine", "amp_C",
                              "fused_weight_gradient_mlp_cuda", "megatron.core"})
            add({m, "", "default", false});
        return out;
    }
    for (const auto &[name, dist] : detail::installed(options.venv))
        for (const auto &module : pyenv::top_level_modules(dist))
            if (is_public_module_name(module))
                add({module, "", fmt::format("{}{} {}", k_installed_source, dist.name, dist.version), false});
    return out;
}

namespace {

/// Which installed distribution requires the missing module's distribution: {dependent, req}.
std::optional<std::pair<const pyenv::Distribution *, pyenv::Requirement>>
who_requires(const std::map<std::string, pyenv::Distribution> &dists,
             const std::string &missing_module, const std::string &importing) {
    std::string wanted = pyenv::normalize_name(missing_module);
    std::string importer_top = importing.substr(0, importing.find('.'));
    std::optional<std::pair<const pyenv::Distribution *, pyenv::Requirement>> best;
    for (const auto &[name, dist] : dists) {
        auto reqs = pyenv::read_requires_dist(dist);
        if (!reqs)
            continue;
        for (const auto &req : *reqs) {
            if (req.normalized_name != wanted || dists.count(req.normalized_name))
                continue;
            if (req.marker && req.marker->str().find("extra") != std::string::npos)
                continue;
            auto tops = pyenv::top_level_modules(dist);
            bool is_importer = std::find(tops.begin(), tops.end(), importer_top) != tops.end();
            if (!best || is_importer)
                best = std::pair(&dist, req);
            if (is_importer)
                return best;
        }
    }
    return best;
}

/// The installed distribution that provides top-level module `top` ("amp_C" -> "apex"); the
/// module name normalised when none does.
std::string distribution_of(const std::map<std::string, pyenv::Distribution> &dists,
                            const std::string &top) {
    for (const auto &[name, dist] : dists) {
        auto tops = pyenv::top_level_modules(dist);
        if (std::find(tops.begin(), tops.end(), top) != tops.end())
            return name;
    }
    return pyenv::normalize_name(top);
}

Finding import_finding(const DoctorOptions &options, const ImportCheck &m,
                       const exec::ProcessResult &result,
                       const std::map<std::string, pyenv::Distribution> &dists) {
    auto failure = pyenv::parse_import_probe(result.output);
    std::vector<std::string> evidence{fmt::format("asked for by: {}", m.source)};
    if (!failure.error.empty())
        evidence.push_back(failure.error);
    if (failure.root_cause != failure.error)
        evidence.push_back("root cause: " + failure.root_cause);
    std::string top = m.module.substr(0, m.module.find('.'));
    if (failure.missing_attribute)
        return make_finding("import", Severity::error,
                            fmt::format("import {}: {}", m.module, failure.summary), evidence,
                            detail::reinstall_fix(options, top));
    if (auto owner = core::after_prefix(m.source, k_installed_source);
        failure.missing_module == top && owner)
        return make_finding("import", Severity::warning,
                            fmt::format("import {}: no such module, though the files of {} "
                                        "name it",
                                        m.module, *owner),
                            evidence, detail::reinstall_fix(options, distribution_of(dists, top)));
    if (failure.missing_module == top && !m.required)
        return make_finding("import", Severity::info,
                            fmt::format("{} is not installed (a default check; the recipe does "
                                        "not ask for it)",
                                        m.module),
                            evidence, "install it if the training needs it");
    if (!failure.missing_module.empty() && failure.missing_module != top) {
        if (auto who = who_requires(dists, failure.missing_module, m.module)) {
            const auto &[dependent, req] = *who;
            return make_finding(
                "import", Severity::error,
                fmt::format("import {} fails: distribution {} is missing (required by {} {})",
                            m.module, req.name, dependent->name, dependent->version),
                evidence, detail::reinstall_fix(options, dependent->normalized_name),
                "a dependency was removed or never installed; reinstalling the dependent "
                "brings it back");
        }
    }
    std::string why = failure.root_cause.empty() ? result.describe() : failure.root_cause;
    if (failure.root_cause.empty())
        evidence.push_back(std::string(core::trim(core::last_lines(result.output, 3))));
    return make_finding("import", m.required ? Severity::error : Severity::warning,
                        fmt::format("import {} fails: {}", m.module, why), evidence,
                        detail::reinstall_fix(options, distribution_of(dists, top)));
}

} // namespace

std::vector<Finding> check_imports(const DoctorOptions &options, CheckSummary *summary) {
    std::vector<Finding> out;
    auto python = options.venv / "bin" / "python";
    std::error_code ec;
    if (!fs::exists(python, ec)) {
        out.push_back(make_finding("import", Severity::error,
                                   fmt::format("no interpreter at {}", python.string()),
                                   {python.string()}, "create the venv: bootstrap run RECIPE"));
        detail::summarize(summary, "imports", "not checked (no interpreter)");
        return out;
    }
    auto dists = detail::installed(options.venv);
    const auto modules = planned_imports(options);
    std::vector<exec::ProcessSpec> specs;
    for (const auto &m : modules) {
        auto spec = pyenv::import_probe_spec(python, m.module, m.attr,
                                             exec::compose_environment(options.environment, {}, {}),
                                             /*preload_torch=*/true);
        spec.timeout = std::chrono::minutes(2);
        specs.push_back(std::move(spec));
    }
    // Each import in its own interpreter, several at a time: a venv of 300 distributions would
    // otherwise wait for 300 start-ups in a row.
    const size_t jobs = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    auto results = run_probes(specs, jobs);
    size_t ok = 0, absent = 0;
    for (size_t i = 0; i < modules.size(); ++i) {
        const auto &ran = results[i];
        if (!ran) {
            out.push_back(
                make_finding("import", Severity::error,
                             fmt::format("cannot run {}: {}", python.string(), ran.error().message),
                             {}, "check the venv's interpreter (see venv findings)"));
            detail::summarize(summary, "imports", "not checked (the interpreter does not run)");
            return out;
        }
        if (ran->ok()) {
            ++ok;
            continue;
        }
        out.push_back(import_finding(options, modules[i], *ran, dists));
        if (out.back().severity == Severity::info)
            ++absent;
    }
    std::string text = fmt::format("{} ok", detail::count_of(ok, "module", "modules"));
    if (size_t failed = modules.size() - ok - absent)
        text = fmt::format("{} of {} modules ok, {} failed", ok, modules.size(), failed);
    if (absent)
        text += fmt::format(", {} not installed", absent);
    if (!training_scope(options))
        text += fmt::format(" (the top-level modules of {} installed)",
                            detail::count_of(dists.size(), "distribution", "distributions"));
    detail::summarize(summary, "imports", text);
    return out;
}

std::set<std::pair<std::string, std::string>>
recipe_allowed_conflicts(const recipe::Recipe *recipe) {
    std::set<std::pair<std::string, std::string>> out;
    if (!recipe)
        return out;
    for (const auto &step : recipe->steps)
        for (const auto &dependent : step.allow_conflicts)
            for (const auto &pkg : step.packages)
                if (auto req = pyenv::Requirement::parse(pkg.value))
                    out.insert({pyenv::normalize_name(dependent), req->normalized_name});
    return out;
}

std::vector<Finding> check_dependencies(const DoctorOptions &options, CheckSummary *summary) {
    std::vector<Finding> out;
    auto dists = detail::installed(options.venv);
    if (dists.empty()) {
        detail::summarize(summary, "dependencies", "no distributions installed");
        return out;
    }
    auto facts = pyenv::venv_facts(options.venv,
                                   exec::compose_environment(options.environment, {}, {}), false);
    if (!facts) {
        out.push_back(make_finding("deps", Severity::warning,
                                   "dependency check skipped: cannot read the interpreter's "
                                   "marker values",
                                   {facts.error().message}, "see the venv findings"));
        detail::summarize(summary, "dependencies", "not checked (no marker values)");
        return out;
    }
    auto allowed = recipe_allowed_conflicts(options.recipe);
    size_t satisfied = 0, overrides = 0;
    for (const auto &[name, dist] : dists) {
        const size_t problems_before = detail::problems(out);
        const size_t findings_before = out.size();
        auto reqs = pyenv::read_requires_dist(dist);
        if (!reqs) {
            ++satisfied; // unreadable metadata: nothing to check against (as pip check)
            continue;
        }
        auto counted = [&] {
            if (detail::problems(out) == problems_before)
                ++satisfied;
            overrides += out.size() - findings_before - (detail::problems(out) - problems_before);
        };
        for (const auto &req : *reqs) {
            if (req.marker && !req.marker->evaluate(facts->markers))
                continue;
            std::string who = fmt::format("{} {} requires {}", dist.name, dist.version, req.str());
            auto dep = dists.find(req.normalized_name);
            if (dep == dists.end()) {
                out.push_back(make_finding(
                    "deps", Severity::error,
                    fmt::format("{} {} requires {}, which is not installed", dist.name,
                                dist.version, req.name),
                    {who, fmt::format("{}: Requires-Dist", (dist.dist_info / "METADATA").string())},
                    detail::reinstall_fix(options, name)));
                continue;
            }
            auto version = pyenv::Version::parse(dep->second.version);
            if (!version || req.specifier.contains(*version, true))
                continue;
            std::vector<std::string> evidence{
                who, fmt::format("{}{} {}", k_installed_source, dep->second.name, dep->second.version)};
            if (allowed.count({name, req.normalized_name})) {
                std::string step = detail::step_installing(options.recipe, req.normalized_name);
                out.push_back(make_finding(
                    "deps", Severity::info,
                    fmt::format("{} {} is installed over {}'s pin {} on purpose", dep->second.name,
                                dep->second.version, dist.name, req.specifier.str()),
                    evidence, "none needed",
                    fmt::format("the recipe declares it: step '{}' has allow_conflicts = [\"{}\"]",
                                step, dist.name)));
                continue;
            }
            out.push_back(make_finding(
                "deps", Severity::error,
                fmt::format("{} {} requires {}, but {} is installed", dist.name, dist.version,
                            req.str(), dep->second.version),
                evidence,
                fmt::format("install a matching {} ({}), or declare the override in the recipe: "
                            "allow_conflicts = [\"{}\"] on the step that installs {}",
                            req.name, detail::reinstall_fix(options, req.normalized_name),
                            dist.name, req.name)));
        }
        counted();
    }
    std::string text =
        satisfied == dists.size()
            ? fmt::format("{} satisfied",
                          detail::count_of(satisfied, "distribution", "distributions"))
            : fmt::format("{} of {} distributions satisfied", satisfied, dists.size());
    if (overrides)
        text += fmt::format(" ({} declared)", detail::count_of(overrides, "override", "overrides"));
    detail::summarize(summary, "dependencies", text);
    return out;
}

} // namespace bootstrap::doctor
