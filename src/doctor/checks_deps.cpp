// Dependency consistency like `pip check`, from dist-info metadata (extras followed); a pin the
// recipe overrides on purpose (allow_conflicts) is info, an undeclared one an error.

#include <optional>

#include <fmt/format.h>

#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "exec/process.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/name.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::doctor {

namespace {

using detail::k_installed_source;
using detail::make_finding;
using recipe::Severity;

/// Why an override is declared: "the recipe declares it: step 'cublas' has allow_conflicts =
/// ["demo-torch"]", or, without a recipe, where the venv recorded it.
std::string declared_text(const DoctorOptions& options, const DeclaredOverride& o) {
    std::string declaration = fmt::format("step '{}' has allow_conflicts = [\"{}\"]", o.step, o.dependent);
    if (options.recipe) return "the recipe declares it: " + declaration;
    return fmt::format("the venv's recipe declares it (recorded by its last run in {}): {}",
                       options.recorded_overrides_file.string(), declaration);
}

/// The fix for `dependent`'s pin `req` that `installed` does not satisfy: the installer command
/// that installs what the pin asks for ("nvidia-cublas==13.1.0.3", from the indexes of the step
/// owning it), or declaring the override on the step that installs it.
std::string pin_fix(const DoctorOptions& options, const pyenv::Distribution& dependent, const pyenv::Requirement& req,
                    const pyenv::Distribution& installed) {
    const std::string wanted = req.name + req.specifier.str();
    const std::string step = detail::step_owning(options, installed.normalized_name);
    return fmt::format(
        "install what {} pins ({}): {}; or, if {} {} is installed on purpose, declare it: "
        "allow_conflicts = [\"{}\"] on {} (then run the recipe again)",
        dependent.name, wanted, detail::install_command(options, installed.normalized_name, wanted), installed.name,
        installed.version, dependent.name,
        step.empty() ? fmt::format("the recipe's step that installs {}", installed.name)
                     : fmt::format("step '{}'", step));
}

}  // namespace

std::set<std::pair<std::string, std::string>> recipe_allowed_conflicts(const recipe::Recipe* recipe) {
    std::set<std::pair<std::string, std::string>> out;
    DoctorOptions options;
    options.recipe = recipe;
    for (const auto& o : declared_overrides(options)) out.insert({o.dependent, o.dependency});
    return out;
}

std::vector<DeclaredOverride> declared_overrides(const DoctorOptions& options) {
    if (!options.recipe) return options.recorded_overrides.value_or(std::vector<DeclaredOverride>{});
    std::vector<DeclaredOverride> out;
    for (const auto& step : options.recipe->steps)
        for (const auto& dependent : step.allow_conflicts)
            for (const auto& pkg : step.packages)
                if (auto req = pyenv::Requirement::parse(pkg.value))
                    out.push_back({step.id, pyenv::normalize_name(dependent), req->normalized_name});
    return out;
}

namespace {

/// Who asked a distribution for an extra: `demo-torch` requiring `cuda-toolkit[cublas]`.
struct ExtraRequest {
    std::string asker;       // normalised name ("demo-torch")
    std::string asker_text;  // "demo-torch 2.11.0"
};

using RequiresMap = std::map<std::string, std::vector<pyenv::Requirement>>;
using ExtrasMap = std::map<std::string, std::map<std::string, ExtraRequest>>;

/// Is `req` in force for a distribution asked for `extras` ("" = the base requirements), and
/// through which extra: nullopt when not at all, "" for the base.
std::optional<std::string> active_through(const pyenv::Requirement& req, const pyenv::MarkerEnv& markers,
                                          const std::map<std::string, ExtraRequest>* extras) {
    if (!req.marker || req.marker->evaluate(markers)) return std::string();
    if (!extras) return std::nullopt;
    pyenv::MarkerEnv with = markers;
    for (const auto& [extra, who] : *extras) {
        with["extra"] = extra;
        if (req.marker->evaluate(with)) return extra;
    }
    return std::nullopt;
}

/// The extras each installed distribution is asked for by the others' requirements in force,
/// followed until nothing changes (an extra's requirements can ask for extras in turn).
ExtrasMap requested_extras(const std::map<std::string, pyenv::Distribution>& dists, const RequiresMap& requires_of,
                           const pyenv::MarkerEnv& markers) {
    ExtrasMap out;
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [name, reqs] : requires_of) {
            const auto& dist = dists.at(name);
            auto mine = out.find(name);
            for (const auto& req : reqs) {
                if (req.extras.empty() || !dists.count(req.normalized_name)) continue;
                if (!active_through(req, markers, mine == out.end() ? nullptr : &mine->second)) continue;
                for (const auto& extra : req.extras) {
                    auto& slot = out[req.normalized_name];
                    if (slot.count(extra)) continue;
                    slot[extra] = {name, fmt::format("{} {}", dist.name, dist.version)};
                    changed = true;
                    mine = out.find(name);  // `out` may have grown
                }
            }
        }
    }
    return out;
}

}  // namespace

std::vector<Finding> check_dependencies(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    auto dists = detail::installed(options.venv);
    if (dists.empty()) {
        detail::summarize(summary, "dependencies", "no distributions installed");
        return out;
    }
    auto facts = pyenv::venv_facts(options.venv, exec::compose_environment(options.environment, {}, {}), false);
    if (!facts) {
        out.push_back(make_finding("deps", Severity::warning,
                                   "dependency check skipped: cannot read the interpreter's "
                                   "marker values",
                                   {facts.error().message}, "see the venv findings"));
        detail::summarize(summary, "dependencies", "not checked (no marker values)");
        return out;
    }
    const auto declared = declared_overrides(options);
    auto declaring = [&](const std::string& dependent, const std::string& dependency) -> const DeclaredOverride* {
        for (const auto& o : declared)
            if (o.dependent == dependent && o.dependency == dependency) return &o;
        return nullptr;
    };
    RequiresMap requires_of;
    for (const auto& [name, dist] : dists)
        if (auto reqs = pyenv::read_requires_dist(dist)) requires_of[name] = std::move(*reqs);
    // `cuda-toolkit[cublas]` puts cuda-toolkit's `extra == "cublas"` requirements in force.
    const auto extras = requested_extras(dists, requires_of, facts->markers);
    size_t satisfied = 0, overrides = 0;
    for (const auto& [name, dist] : dists) {
        const size_t problems_before = detail::problems(out);
        const size_t findings_before = out.size();
        auto reqs = requires_of.find(name);
        if (reqs == requires_of.end()) {
            ++satisfied;  // unreadable metadata: nothing to check against (as pip check)
            continue;
        }
        auto asked = extras.find(name);
        const auto* asked_for = asked == extras.end() ? nullptr : &asked->second;
        auto counted = [&] {
            if (detail::problems(out) == problems_before) ++satisfied;
            overrides += out.size() - findings_before - (detail::problems(out) - problems_before);
        };
        for (const auto& req : reqs->second) {
            auto through = active_through(req, facts->markers, asked_for);
            if (!through) continue;
            const ExtraRequest* via = through->empty() ? nullptr : &asked_for->at(*through);
            std::string who = fmt::format("{} {} requires {}", dist.name, dist.version, req.str());
            // "(extra 'cublas', asked for by demo-torch 2.11.0)"
            std::string through_text =
                via ? fmt::format(" (extra '{}', asked for by {})", *through, via->asker_text) : "";
            who += through_text;
            auto dep = dists.find(req.normalized_name);
            if (dep == dists.end()) {
                out.push_back(
                    make_finding("deps", Severity::error,
                                 fmt::format("{} {} requires {}, which is not installed{}", dist.name, dist.version,
                                             req.name, through_text),
                                 {who, fmt::format("{}: Requires-Dist", (dist.dist_info() / "METADATA").string())},
                                 detail::reinstall_fix(options, name)));
                continue;
            }
            auto version = pyenv::Version::parse(dep->second.version);
            if (!version || req.specifier.contains(*version, true)) continue;
            std::vector<std::string> evidence{
                who, fmt::format("{}{} {}", k_installed_source, dep->second.name, dep->second.version)};
            const DeclaredOverride* on_purpose = declaring(name, req.normalized_name);
            if (!on_purpose && via) on_purpose = declaring(via->asker, req.normalized_name);
            if (on_purpose) {
                out.push_back(
                    make_finding("deps", Severity::info,
                                 fmt::format("{} {} is installed over {}'s pin {} on purpose", dep->second.name,
                                             dep->second.version, dist.name, req.specifier.str()),
                                 evidence, "none needed", declared_text(options, *on_purpose)));
                continue;
            }
            out.push_back(
                make_finding("deps", Severity::error,
                             fmt::format("{} {} requires {}, but {} is installed{}", dist.name, dist.version, req.str(),
                                         dep->second.version, through_text),
                             evidence, pin_fix(options, dist, req, dep->second),
                             "an undeclared override: the recipe installed another version than this pin "
                             "allows without saying so (allow_conflicts), or something changed the venv since"));
        }
        counted();
    }
    std::string text = satisfied == dists.size()
                           ? fmt::format("{} satisfied", detail::count_of(satisfied, "distribution", "distributions"))
                           : fmt::format("{} of {} distributions satisfied", satisfied, dists.size());
    if (overrides) text += fmt::format(" ({} declared)", detail::count_of(overrides, "override", "overrides"));
    detail::summarize(summary, "dependencies", text);
    return out;
}

}  // namespace bootstrap::doctor
