#include "recipe/validate.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "recipe/placeholders.hpp"

namespace bootstrap::recipe::detail {

namespace {

bool is_late(const Placeholder& p) { return p.ns == "venv" || p.ns == "python"; }

/// Checks placeholders against the schema; `m_vars` grows as [vars] is walked in file order,
/// so a variable sees only those defined before it.
class PlaceholderChecker {
public:
    explicit PlaceholderChecker(std::vector<Problem>& problems) : m_problems(problems) {}

    /// The placeholders of `text`, or none after reporting a syntax problem.
    std::vector<Placeholder> placeholders(const Text& text) {
        auto found = find_placeholders(text.value);
        if (found) return std::move(*found);
        report(text.loc, found.error().message);
        return {};
    }

    /// Check one placeholder of a text that may use every variable in m_vars.
    void check(const Placeholder& p, const SourceLoc& loc) {
        std::string shown = to_string(p);
        if (p.default_value && p.ns != "env") {
            report(loc, fmt::format("a default (':-') is allowed only in '{{env.NAME:-default}}', "
                                    "not in '{}'",
                                    shown));
            return;
        }
        if (p.ns == "env") {
            if (!is_env_name(p.name)) report(loc, fmt::format("invalid environment variable name in '{}'", shown));
        } else if (p.ns == "vars") {
            if (!m_vars.contains(p.name)) {
                std::vector<std::string> names;
                for (const auto& [name, late] : m_vars) names.push_back(name);
                std::string near = core::closest_match(p.name, names);
                report(loc, near.empty()
                                ? fmt::format("unknown variable '{}' (not defined in [vars])", shown)
                                : fmt::format("unknown variable '{}' (did you mean '{{vars.{}}}'?)", shown, near));
            }
        } else {
            const auto& known = known_placeholders();
            std::string full = p.ns + "." + p.name;
            if (std::find(known.begin(), known.end(), full) == known.end()) report_unknown(p, loc);
        }
    }

    /// Define a variable; `late` is the first `{venv.*}`/`{python.*}` it uses, even through
    /// other variables ("" when none), so venv.path can refuse it.
    void define(const std::string& name, std::string late) { m_vars[name] = std::move(late); }

    /// The late placeholder a use of `p` depends on, or "" (vars resolved through m_vars).
    std::string late_dependency(const Placeholder& p) const {
        if (is_late(p)) return to_string(p);
        if (p.ns == "vars")
            if (auto it = m_vars.find(p.name); it != m_vars.end()) return it->second;
        return {};
    }

    void report(const SourceLoc& loc, std::string message) { m_problems.push_back({loc, std::move(message)}); }

private:
    void report_unknown(const Placeholder& p, const SourceLoc& loc) {
        // A known namespace with a misspelt name is compared within that namespace only, so
        // `{venv.pyhton}` suggests `{venv.python}`, not an environment variable.
        std::vector<std::string> candidates;
        for (const auto& k : known_placeholders())
            if (core::starts_with(k, p.ns + ".")) candidates.push_back(k);
        if (p.ns == "vars")
            for (const auto& [name, late] : m_vars) candidates.push_back("vars." + name);
        if (candidates.empty()) {
            candidates = known_placeholders();
            for (const auto& [name, late] : m_vars) candidates.push_back("vars." + name);
            // `{evn.HOME}`: a slip of `env` (one edit, or two letters swapped). Any other
            // namespace is no slip of `env` (`{x.__version__}` is not `{env.__version__}`).
            std::string sorted_ns = p.ns, sorted_env = "env";
            std::sort(sorted_ns.begin(), sorted_ns.end());
            std::sort(sorted_env.begin(), sorted_env.end());
            if (core::edit_distance(p.ns, "env") <= 1 || sorted_ns == sorted_env) candidates.push_back("env." + p.name);
            if (core::closest_match(p.ns + "." + p.name, candidates).empty()) {
                // Not one of bootstrap's namespaces, nor a slip of one: most likely text meant
                // literally (a Python f-string's `{x.__version__}`), which doubled braces keep.
                const std::string body = to_string(p).substr(1, to_string(p).size() - 2);
                std::string list = "{env.NAME}, {vars.NAME}";
                for (const auto& k : known_placeholders()) list += ", {" + k + "}";
                report(loc, fmt::format("unknown placeholder '{}' (known: {}); for the literal text, as in a "
                                        "Python f-string, double the braces: '{{{{{}}}}}'",
                                        to_string(p), list, body));
                return;
            }
        }
        std::string near = core::closest_match(p.ns + "." + p.name, candidates);
        if (!near.empty()) {
            report(loc, fmt::format("unknown placeholder '{}' (did you mean '{{{}}}'?)", to_string(p), near));
            return;
        }
        std::string list = "{env.NAME}, {vars.NAME}";
        for (const auto& k : known_placeholders()) list += ", {" + k + "}";
        report(loc, fmt::format("unknown placeholder '{}' (known: {})", to_string(p), list));
    }

    std::vector<Problem>& m_problems;
    std::map<std::string, std::string> m_vars;  // name -> late dependency or ""
};

void check_vars(const Recipe& recipe, PlaceholderChecker& checker) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < recipe.vars.size(); ++i) index.emplace(recipe.vars[i].first, i);
    for (size_t i = 0; i < recipe.vars.size(); ++i) {
        const auto& [name, text] = recipe.vars[i];
        std::string late;
        for (const auto& p : checker.placeholders(text)) {
            auto later = p.ns == "vars" ? index.find(p.name) : index.end();
            if (later != index.end() && later->second == i) {
                checker.report(text.loc, fmt::format("variable '{}' refers to itself", name));
                continue;
            }
            if (later != index.end() && later->second > i) {
                checker.report(text.loc, fmt::format("'{}' refers to a variable defined later in [vars] "
                                                     "(a variable may use only those defined before it)",
                                                     to_string(p)));
                continue;
            }
            checker.check(p, text.loc);
            if (late.empty()) late = checker.late_dependency(p);
        }
        checker.define(name, std::move(late));
    }
}

void check_venv_path(const Text& path, PlaceholderChecker& checker) {
    for (const auto& p : checker.placeholders(path)) {
        checker.check(p, path.loc);
        std::string late = checker.late_dependency(p);
        if (late.empty()) continue;
        std::string used = to_string(p);
        std::string via = late == used ? "" : fmt::format(", which uses '{}'", late);
        checker.report(path.loc, fmt::format("'venv.path' may not use '{}'{} (circular: the "
                                             "venv's path cannot depend on the venv)",
                                             used, via));
    }
}

}  // namespace

bool is_env_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void check_placeholders(const Recipe& recipe, std::vector<Problem>& problems) {
    PlaceholderChecker checker(problems);
    check_vars(recipe, checker);
    check_venv_path(recipe.venv.path, checker);
    // A NUL byte would silently cut a path, an argument or a variable where it reaches the
    // system (C strings end there): refused wherever it is written.
    auto check_nul = [&](const Text& text) {
        if (text.value.find('\0') != std::string::npos)
            problems.push_back({text.loc,
                                "the value contains a NUL byte (\\u0000), which no path, argument or "
                                "environment variable can hold"});
    };
    auto check_text = [&](const Text& text) {
        check_nul(text);
        for (const auto& p : checker.placeholders(text)) checker.check(p, text.loc);
    };
    check_nul(recipe.venv.path);
    for (const auto& [name, text] : recipe.vars) check_nul(text);
    for (const auto& [name, text] : recipe.env_set) check_text(text);
    // Every value a step's keys hold, whichever kind read it (StepReader collects them).
    for (const auto& step : recipe.steps)
        for (const auto& text : step.texts) check_text(text);
}

namespace {
constexpr size_t k_max_problems_shown = 50;
}  // namespace

Error make_recipe_error(std::vector<Problem> problems) {
    std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
        return std::pair(a.loc.line, a.loc.column) < std::pair(b.loc.line, b.loc.column);
    });
    std::vector<std::string> lines;
    for (const auto& p : problems) {
        std::string line = p.loc.str() + ": " + p.message;
        if (lines.empty() || lines.back() != line) lines.push_back(std::move(line));
    }
    std::string first = lines.empty() ? std::string("invalid recipe") : lines.front();
    // A broken or generated file can hold thousands of problems: the first ones say what is
    // wrong, the rest only a count (100,000 unknown keys were 8.6 MB of stderr).
    if (lines.size() > k_max_problems_shown) {
        const size_t more = lines.size() - k_max_problems_shown;
        lines.resize(k_max_problems_shown);
        lines.push_back(fmt::format("... and {} more problem(s) not shown", more));
    }
    return Error{ErrorCode::invalid_recipe, std::move(first), core::join(lines, "\n")};
}

}  // namespace bootstrap::recipe::detail
