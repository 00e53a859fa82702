#include "engine/fixed_point.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "pyenv/name.hpp"
#include "pyenv/version.hpp"
#include "state/layout.hpp"
#include "steps/kind.hpp"

namespace bootstrap::engine {

namespace {

/// "nvidia-cublas 13.10.0.20 -> 13.1.0.3" for the distributions `why` names whose version
/// differs between `before` and `after`.
std::vector<std::string> changed_in(const std::string& why, const Installed& before, const Installed& after) {
    std::vector<std::string> out;
    for (const auto& [name, was] : before) {
        auto now = after.find(name);
        const std::string now_version = now == after.end() ? std::string("not installed") : now->second.version;
        if (now != after.end() && now->second.version == was.version) continue;
        if (why.find(was.name + " ") == std::string::npos && why.find(name + " ") == std::string::npos) continue;
        out.push_back(fmt::format("{} {} -> {}", was.name, was.version, now_version));
    }
    return out;
}

}  // namespace

std::string overrides_text(const steps::ResolvedStep& step, const Installed& installed) {
    std::string text = fmt::format(
        "# Written by bootstrap before step '{}' runs: versions other steps chose on purpose,\n"
        "# which this step's resolution keeps (uv --override, pip --constraint).\n",
        step.id);
    const auto kept = steps::overrides_of(step);
    if (kept.earlier != nullptr)
        for (const auto& [id, name] : *kept.earlier) {
            auto it = installed.find(name);
            if (it == installed.end()) continue;
            text += fmt::format("# step '{}'\n{}=={}\n", id, it->second.name, it->second.version);
        }
    if (kept.later == nullptr) return text;
    // A later step's deliberate choice, as installed while it holds: this step then needs no
    // other version (none is fetched from this step's indexes, which may not have it).
    for (const auto& o : *kept.later) {
        auto it = installed.find(o.name);
        if (it == installed.end()) continue;
        auto req = pyenv::Requirement::parse(o.requirement);
        auto version = pyenv::Version::parse(it->second.version);
        if (req && version && req->specifier.contains(*version, true))
            text += fmt::format("# step '{}' (later)\n{}=={}\n", o.step, it->second.name, it->second.version);
    }
    return text;
}

std::string override_conflicts(const steps::ResolvedStep& step, const Installed& installed,
                               const pyenv::MarkerEnv& markers) {
    const auto kept = steps::overrides_of(step);
    if (!kept.resolves || kept.earlier == nullptr) return {};
    pyenv::MarkerEnv env = markers;
    if (!env.count("extra")) env["extra"] = "";
    std::vector<std::string> lines;
    for (const auto& [id, name] : *kept.earlier) {
        auto kept = installed.find(name);
        if (kept == installed.end()) continue;
        auto version = pyenv::Version::parse(kept->second.version);
        if (!version) continue;
        for (const auto& [dependent, dist] : installed) {
            auto requires_dist = pyenv::read_requires_dist(dist);
            if (!requires_dist) continue;
            for (const auto& req : *requires_dist) {
                if (req.normalized_name != name || req.specifier.empty()) continue;
                if (req.marker && !req.marker->evaluate(env)) continue;
                if (req.specifier.contains(*version, true)) continue;
                lines.push_back(fmt::format("{} {} requires {}{}; step '{}' keeps {} {}", dist.name, dist.version,
                                            req.name, req.specifier.str(), id, kept->second.name,
                                            kept->second.version));
            }
        }
    }
    return core::join(lines, "\n");
}

Error with_override_note(const steps::ResolvedStep& step, Error error, const Installed& installed,
                         const pyenv::MarkerEnv* markers, const std::string& installer) {
    const auto overrides = steps::overrides_of(step);
    if (!overrides.resolves || overrides.earlier == nullptr || overrides.earlier->empty() || !*overrides.file ||
        error.code == ErrorCode::interrupted)
        return error;
    std::vector<std::string> kept;
    for (const auto& [id, name] : *overrides.earlier)
        if (auto it = installed.find(name); it != installed.end())
            kept.push_back(fmt::format("{} {} (step '{}')", it->second.name, it->second.version, id));
    if (kept.empty()) return error;
    const std::string conflicts = markers ? override_conflicts(step, installed, *markers) : std::string();
    error.detail += fmt::format(
        "{}note: this step's resolution keeps what earlier steps chose on purpose: {} ({}){}{}",
        error.detail.empty() ? "" : "\n", core::join(kept, ", "), overrides.file->value().string(),
        conflicts.empty() ? "" : "; installed pins exclude them:\n" + conflicts,
        installer == "pip" ? "\npip cannot override a dependency's pin (uv can: set `installer = \"uv\"` in "
                             "[venv]), so a dependency pinning another version cannot be installed"
                           : "");
    return error;
}

std::vector<const steps::ResolvedStep*> holding_before(const steps::ResolvedStep& step, const Plan& plan,
                                                       const SkipRule& rule, const Installed& installed) {
    std::vector<const steps::ResolvedStep*> out;
    for (const auto& earlier : plan.steps) {
        if (earlier.index >= step.index) break;
        std::string ignored;
        if (steps::owned_of(earlier).requirements != nullptr && rule.passed(earlier) &&
            rule.own_requirements_hold(earlier, installed, &ignored))
            out.push_back(&earlier);
    }
    return out;
}

std::optional<Error> undone_by(const steps::ResolvedStep& step, const std::vector<const steps::ResolvedStep*>& held,
                               const SkipRule& rule, const Installed& before, const Installed& after) {
    for (const auto* earlier : held) {
        std::string why;
        if (rule.own_requirements_hold(*earlier, after, &why)) continue;
        auto changes = changed_in(why, before, after);
        return Error{
            ErrorCode::step_failed,
            fmt::format("step '{}' undid step '{}': {}{}", step.id, earlier->id, why,
                        changes.empty() ? std::string()
                                        : fmt::format(" ({} when '{}' ran)", core::join(changes, ", "), step.id)),
            fmt::format("every install step's requirements must hold at the end of a run. If step "
                        "'{}' changes that on purpose, list the package in its packages (with "
                        "`upgrade = true`, or the dependent whose pin it overrides in "
                        "`allow_conflicts`): later steps then keep its version. Otherwise make the "
                        "two steps agree, then `bootstrap run --from {}`.",
                        step.id, earlier->id)};
    }
    return std::nullopt;
}

std::optional<Error> fixed_point_error(const std::vector<Unsatisfied>& unsatisfied, const fs::path& recipe_file) {
    if (unsatisfied.empty()) return std::nullopt;
    std::vector<std::string> lines;
    for (const auto& u : unsatisfied) lines.push_back(fmt::format("step '{}': {}", u.step->id, u.why));
    const auto& first = *unsatisfied.front().step;
    return Error{
        ErrorCode::step_failed,
        unsatisfied.size() == 1
            ? fmt::format("the venv no longer satisfies step '{}': {}", first.id, unsatisfied.front().why)
            : fmt::format("the venv no longer satisfies {} steps, the first '{}'", unsatisfied.size(), first.id),
        fmt::format("{}\nre-run them: bootstrap run {} --from {}", core::join(lines, "\n"),
                    core::shell_quote(recipe_file.string()), first.id)};
}

fs::path declared_overrides_path(const fs::path& venv) { return state::Layout(venv).declared_overrides(); }

DeclaredOverrides declared_overrides(const Plan& plan) {
    DeclaredOverrides out;
    if (plan.recipe != nullptr) {
        out.recipe_file = fs::absolute(plan.recipe->file).lexically_normal();
        out.recipe_digest = plan.recipe->source_digest;
    }
    for (const auto& step : plan.steps) {
        const auto own = steps::owned_of(step);
        if (own.requirements == nullptr || step.source == nullptr) continue;
        for (const auto& dependent : step.source->allow_conflicts)
            for (const auto& req : *own.requirements) {
                DeclaredOverride o{step.id, pyenv::normalize_name(dependent), req.normalized_name};
                if (std::find(out.overrides.begin(), out.overrides.end(), o) == out.overrides.end())
                    out.overrides.push_back(std::move(o));
            }
    }
    return out;
}

std::string declared_overrides_text(const DeclaredOverrides& declared) {
    std::string text =
        "# Written by `bootstrap run`: the pins its recipe overrides on purpose (steps'\n"
        "# allow_conflicts), one `override STEP DEPENDENT DEPENDENCY` line each. `bootstrap doctor`\n"
        "# without --recipe reads it: such a conflict is reported as declared, not as an error.\n";
    text += fmt::format("recipe {} {}\n", declared.recipe_digest, declared.recipe_file.string());
    for (const auto& o : declared.overrides)
        text += fmt::format("override {} {} {}\n", o.step, o.dependent, o.dependency);
    return text;
}

Status record_declared_overrides(const Plan& plan) {
    const fs::path path = declared_overrides_path(plan.venv);
    const std::string text = declared_overrides_text(declared_overrides(plan));
    if (auto now = core::read_file(path); now && *now == text) return {};
    return core::write_file_atomic(path, text);
}

Result<std::optional<DeclaredOverrides>> read_declared_overrides(const fs::path& venv) {
    const fs::path path = declared_overrides_path(venv);
    auto text = core::read_file(path);
    if (!text) {
        if (text.error().code == ErrorCode::not_found) return std::optional<DeclaredOverrides>();
        return tl::unexpected(text.error());
    }
    DeclaredOverrides out;
    size_t number = 0;
    for (const auto& line : core::split(*text, '\n')) {
        ++number;
        if (line.empty() || line.front() == '#') continue;
        auto malformed = [&] {
            return fail(ErrorCode::io, fmt::format("{}:{}: malformed line '{}'; remove the file (the next run "
                                                   "of the venv's recipe writes it again)",
                                                   path.string(), number, line));
        };
        auto words = core::split(line, ' ');
        if (words.front() == "recipe") {
            if (words.size() < 3) return malformed();
            out.recipe_digest = words[1];
            out.recipe_file = line.substr(words[0].size() + words[1].size() + 2);
        } else if (words.front() == "override") {
            if (words.size() != 4 || words[1].empty() || words[2].empty() || words[3].empty()) return malformed();
            out.overrides.push_back({words[1], words[2], words[3]});
        }  // another keyword: a newer bootstrap's, left to it
    }
    return std::optional<DeclaredOverrides>(std::move(out));
}

namespace {

/// The version `req` pins exactly (`==V` without a wildcard, `===V`), when it does.
std::optional<pyenv::Version> exact_pin(const pyenv::Requirement& req) {
    for (const auto& spec : req.specifier.specs()) {
        if ((spec.op == "==" && !spec.version.ends_with(".*")) || spec.op == "===") {
            if (auto v = pyenv::Version::parse(spec.version)) return *v;
        }
    }
    return std::nullopt;
}

/// No version satisfies both: one pins a version the other's specifier excludes.
bool disagree(const pyenv::Requirement& a, const pyenv::Requirement& b) {
    if (!a.url.empty() || !b.url.empty()) return false;
    if (auto pin = exact_pin(a); pin && !b.specifier.contains(*pin, true)) return true;
    if (auto pin = exact_pin(b); pin && !a.specifier.contains(*pin, true)) return true;
    return false;
}

bool applies(const pyenv::Requirement& req, const pyenv::MarkerEnv* markers) {
    if (!req.marker) return true;
    return markers != nullptr && req.marker->evaluate(*markers);
}

/// Where `req` (the i-th of `step`'s requirements) is written: the recipe's packages entry.
std::string where(const steps::ResolvedStep& step, size_t i) {
    if (step.source != nullptr && i < step.source->packages.size()) return step.source->packages[i].loc.str();
    return step.source != nullptr ? step.source->loc.str() : std::string();
}

/// A step between plan indexes `from` and `to` (both excluded) overrides `name` on purpose
/// (`upgrade` or `allow_conflicts`, asking for it): the earlier pin was settled there.
bool overridden_between(const Plan& plan, size_t from, size_t to, const std::string& name) {
    for (const auto& step : plan.steps) {
        const auto own = steps::owned_of(step);
        if (step.index <= from || step.index >= to || own.requirements == nullptr || !own.deliberate) continue;
        for (const auto& r : *own.requirements)
            if (r.normalized_name == name) return true;
    }
    return false;
}

}  // namespace

std::vector<Error> pin_conflicts(const Plan& plan, const pyenv::MarkerEnv* markers, std::vector<std::string>& notes) {
    std::vector<Error> out;
    // The applying requirements of the steps so far, by name, in step and list order: each
    // requirement meets only the earlier ones of its own name (a recipe pinning thousands of
    // packages across steps stays linear, not quadratic).
    struct Earlier {
        const steps::ResolvedStep* step;
        size_t j;
    };
    std::unordered_map<std::string, std::vector<Earlier>> earlier_by_name;
    for (const auto& later : plan.steps) {
        const auto own = steps::owned_of(later);
        if (own.requirements == nullptr) continue;
        const bool deliberate = own.deliberate;
        for (size_t i = 0; i < own.requirements->size(); ++i) {
            const auto& req = (*own.requirements)[i];
            if (!applies(req, markers)) continue;
            auto found = earlier_by_name.find(req.normalized_name);
            if (found == earlier_by_name.end()) continue;
            for (const auto& [earlier_step, j] : found->second) {
                const auto& earlier = *earlier_step;
                const auto& old = (*steps::owned_of(earlier).requirements)[j];
                if (!disagree(old, req) || overridden_between(plan, earlier.index, later.index, req.normalized_name))
                    continue;
                if (later.optional && !deliberate) {
                    notes.push_back(
                        fmt::format("{}: optional step '{}' asks for {}, but step '{}' asks for {}: it will fail, or "
                                    "undo step '{}' and fail the run",
                                    where(later, i), later.id, req.str(), earlier.id, old.str(), earlier.id));
                    continue;
                }
                if (deliberate) {
                    notes.push_back(fmt::format(
                        "step '{}' asks for {} and step '{}' for {}: the later one wins ({}), and step '{}' is "
                        "held to the rest of its requirements",
                        earlier.id, old.str(), later.id, req.str(), own.upgrade ? "upgrade = true" : "allow_conflicts",
                        earlier.id));
                    continue;
                }
                out.push_back(
                    Error{ErrorCode::invalid_recipe,
                          fmt::format("{}: step '{}' asks for {}, but step '{}' ({}) asks for {}: no version is both, "
                                      "and the later step would undo the earlier one on every run",
                                      where(later, i), later.id, req.str(), earlier.id, where(earlier, j), old.str()),
                          fmt::format("keep one pin; or, to override step '{}' on purpose, set `upgrade = true` on "
                                      "step '{}'",
                                      earlier.id, later.id)});
            }
        }
        for (size_t j = 0; j < own.requirements->size(); ++j)
            if (applies((*own.requirements)[j], markers))
                earlier_by_name[(*own.requirements)[j].normalized_name].push_back({&later, j});
    }
    return out;
}

Result<std::vector<Extra>> unowned_extras(const Plan& plan, const state::Journal& journal, const Installed& installed,
                                          const pyenv::MarkerEnv& markers) {
    std::set<std::string> accounted;
    for (const auto& step : plan.steps) {
        if (auto it = journal.steps.find(step.id); it != journal.steps.end())
            for (const auto& [name, rec] : it->second.dists) accounted.insert(name);
        if (const auto* own = steps::owned_of(step).requirements) {
            BS_TRY(auto closure, pyenv::installed_closure(*own, installed, markers));
            accounted.insert(closure.begin(), closure.end());
        }
    }
    std::vector<Extra> out;
    for (const auto& [name, dist] : installed) {
        if (accounted.count(name) || name == "pip" || name == "setuptools" || name == "wheel") continue;
        out.push_back(Extra{name, dist.version});
    }
    return out;
}

std::string describe(const std::vector<Extra>& extras) {
    std::vector<std::string> parts;
    for (const auto& e : extras) parts.push_back(e.name + " " + e.version);
    return core::join(parts, ", ");
}

}  // namespace bootstrap::engine
