// Verify clause `import`: `{ import = "torch", attr = "cuda", equals = "13.0", version = ">=2.1",
// preload = ["torch"] }`. The module imports in its own interpreter (pyenv/import_probe.hpp),
// then its distribution must satisfy `version`.

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/import_probe.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/module_owner.hpp"
#include "pyenv/specifier.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::steps {

namespace {

/// What only the import clause keeps (attr and preload are recipe::VerifyClause's: doctor reads
/// them).
struct ImportFields : recipe::ClauseFields {
    /// A PEP 440 specifier (">=2.1") the installed distribution providing the module must
    /// satisfy; checked as a specifier when the plan is made (pyenv owns PEP 440).
    std::optional<recipe::Text> version;
    /// With attr: the value `str(module.attr)` must have (`equals = "13.0"` for
    /// torch.version.cuda).
    std::optional<recipe::Text> equals;
};

/// `version = ">=2.1"`: a non-empty string here; the plan parses it as a PEP 440 specifier.
std::optional<recipe::Text> read_version_specifier(recipe::ClauseReader& rd) {
    auto version = rd.text("version");
    if (version && core::trim(version->value).empty()) {
        rd.report(version->loc, fmt::format("'{}.version' must be a version specifier such as "
                                            "'>=2.1', not empty",
                                            rd.name()));
        return std::nullopt;
    }
    return version;
}

/// Also reads a table that names no clause (the registry's first clause does): its typos are
/// matched against these keys, and the message names every registered clause.
bool parse(recipe::ClauseReader& rd, recipe::VerifyClause& clause) {
    const recipe::Value* import = rd.get("import");
    auto suggested = rd.unknown_keys({"import", "attr", "file", "version", "preload", "equals"});
    if (!import) rd.need_clause(suggested);
    if (import && rd.get("file")) {
        rd.report(clause.loc, "a verify clause takes 'import' or 'file', not both");
        return false;
    }
    auto fields = std::make_shared<ImportFields>();
    if (rd.get("attr")) clause.attr = rd.text("attr");
    if (rd.get("version")) fields->version = read_version_specifier(rd);
    if (const recipe::Value* equals = rd.get("equals")) {  // str(module.attr) must be exactly this
        if (!rd.get("attr"))
            rd.report(equals->loc,
                      "'equals' needs 'import' and 'attr' in a verify clause (the value "
                      "str(module.attr) must have)");
        else fields->equals = rd.text("equals");
    }
    if (const recipe::Value* preload = rd.get("preload")) {  // modules the probe imports first
        for (auto& m : rd.values().nonempty_texts(*preload, rd.name() + ".preload")) {
            if (core::trim(m.value).empty() || m.value.find_first_of(" \t\n,") != std::string::npos)
                rd.report(m.loc,
                          fmt::format("'{}.preload' names modules such as \"torch\", not '{}'", rd.name(), m.value));
            else clause.preload.push_back(std::move(m));
        }
    }
    if (!import) return false;
    auto target = rd.text("import");
    if (!target) return false;
    clause.target = std::move(*target);
    clause.target_is = recipe::VerifyClause::Target::module;
    clause.fields = std::move(fields);
    return true;
}

Status expand(const recipe::VerifyClause& clause, ResolvedVerify& v, ResolvedStep& step, PlanContext& ctx) {
    BS_TRY(v.target, ctx.text(clause.target, step));
    if (clause.attr) {
        BS_TRY(v.attr, ctx.text(*clause.attr, step));
    }
    const auto* fields = clause.fields_as<ImportFields>();
    if (fields && fields->version) {
        // Whether this value is known (not the step's other values) decides the check.
        const bool step_complete = step.complete;
        step.complete = true;
        auto version = ctx.text(*fields->version, step);
        const bool known = step.complete;
        step.complete = step_complete && known;
        if (!version) return tl::unexpected(version.error());
        v.version = *version;
        if (known) {  // checked here, as PEP 440 lives in pyenv, not recipe
            auto specifiers = pyenv::SpecifierSet::parse_detailed(v.version);
            if (!specifiers)
                return fail(ErrorCode::invalid_recipe,
                            fmt::format("{}: invalid version specifier '{}' in verify clause "
                                        "'import {}': {}",
                                        fields->version->loc.str(), v.version, v.target, specifiers.error().what));
            v.version = specifiers->str();
        }
    }
    for (const auto& m : clause.preload) v.preload.push_back(m.value);
    if (fields && fields->equals) {
        BS_TRY(auto expected, ctx.text(*fields->equals, step));
        v.equals = std::move(expected);
    }
    return {};
}

std::string describe(const ResolvedVerify& v) {
    return "import " + v.target + (v.attr.empty() ? "" : "." + v.attr) + (v.equals ? " == '" + *v.equals + "'" : "") +
           (v.path_entry.empty() ? "" : " (from " + v.path_entry + ")") +
           (v.version.empty() ? "" : " version " + v.version) +
           (v.preload.empty() ? "" : " after " + core::join(v.preload, ","));
}

/// Where the probe rule looks for a module's file: PYTHONPATH's entries (a pybind11 output
/// dir first), then site-packages (and its .pth directories), as the interpreter would.
std::vector<fs::path> probe_search_dirs(const fs::path& venv, const exec::EnvMap& env) {
    std::vector<fs::path> dirs;
    if (auto it = env.find("PYTHONPATH"); it != env.end())
        for (const auto& entry : core::split(it->second, ':'))
            if (!entry.empty()) dirs.emplace_back(entry);
    auto facts = pyenv::venv_facts(venv, env);
    if (!facts) return dirs;  // the probe itself will say what is wrong with the interpreter
    for (auto& d : pyenv::module_search_dirs(facts->purelib)) dirs.push_back(std::move(d));
    if (facts->platlib != facts->purelib)
        for (auto& d : pyenv::module_search_dirs(facts->platlib)) dirs.push_back(std::move(d));
    return dirs;
}

/// The version half of `{ import = "x", version = ">=2.1" }`: the distribution whose files
/// provide the module (from the venv's dist-infos; nothing is imported) must satisfy it.
Status verify_version(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    auto specifiers = pyenv::SpecifierSet::parse(clause.version);
    if (!specifiers)  // the plan checks a literal specifier; this one came from a placeholder
        return fail(ErrorCode::invalid_recipe, fmt::format("step '{}': verify clause '{}': {}", step.id,
                                                           clause.describe(), specifiers.error().message));
    BS_TRY(auto facts, pyenv::venv_facts(ctx.venv, step.child_env));
    BS_TRY(auto installed, pyenv::scan_venv_packages(facts));
    auto dist = pyenv::check_module_version(clause.target, *specifiers, installed);
    if (!dist)
        return fail(dist.error().code, fmt::format("step '{}': verify failed: {}", step.id, dist.error().message));
    log_line(ctx, fmt::format("verify: {} ok ({} {})", clause.describe(), dist->name, dist->version));
    return {};
}

/// The module imports in its own interpreter (cwd "/", the step's environment, limits and log);
/// the error shows the real exception the import raised.
Status run(const ResolvedVerify& clause, const ResolvedStep& step, StepContext& ctx) {
    const fs::path python = ctx.venv / "bin" / "python";
    exec::EnvMap env = step.child_env;
    if (!clause.path_entry.empty()) {  // a pybind11 module lives in its output dir
        auto it = env.find("PYTHONPATH");
        env["PYTHONPATH"] =
            clause.path_entry + (it == env.end() || it->second.empty() ? std::string() : ":" + it->second);
    }
    auto preload = pyenv::probe_preload(clause.target, probe_search_dirs(ctx.venv, env), clause.preload);
    // cwd "/" (never import from a project directory by accident), the step's limits and log.
    auto spec = pyenv::import_probe_spec(python, clause.target, clause.attr, env, preload.modules, clause.equals);
    const auto stepwise = child_spec(step, ctx, {});
    spec.timeout = stepwise.timeout;
    spec.log_path = stepwise.log_path;
    spec.on_output = stepwise.on_output;
    if (step.timeout <= 0) spec.timeout = std::chrono::minutes(10);
    log_line(ctx,
             "verify: " + clause.describe() +
                 (preload.reason.empty() || preload.modules.empty()
                      ? ""
                      : fmt::format(" (importing {} first: {})", core::join(preload.modules, ", "), preload.reason)));
    BS_TRY(auto result, ctx.run(spec));
    // An error shows what the probe did, not its Python source.
    const std::string shown = pyenv::describe_probe(python, clause.target, clause.attr, preload.modules, clause.equals);
    if (result.interrupted) return tl::unexpected(probe_failure(step, spec, shown, result, ctx.log_path));
    if (!result.ok()) {
        // The probe's own summary lines name the real exception (and its root cause).
        auto failure = pyenv::parse_import_probe(result.output);
        std::string summary = failure.summary.empty() ? result.describe() : failure.summary;
        auto err = probe_failure(step, spec, shown, result, ctx.log_path);
        err.code = result.timed_out ? ErrorCode::timeout : ErrorCode::step_failed;
        err.message = fmt::format("step '{}': verify failed: {}", step.id, summary);
        return tl::unexpected(err);
    }
    if (!clause.version.empty()) BS_CHECK(verify_version(step, ctx, clause));
    return {};
}

bool needs_venv(const recipe::VerifyClause&) { return true; }

}  // namespace

extern const Clause k_import_clause;
const Clause k_import_clause{
    .name = "import",
    .parse = parse,
    .expand = expand,
    .describe = describe,
    .run = run,
    .needs_venv = needs_venv,
};

}  // namespace bootstrap::steps
