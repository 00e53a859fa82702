// The recipe sections `doctor` reads: [[lint]] rules, [[fault]] entries, [flag_aliases] and
// [perf]. Same discipline as parser.cpp: every key and type checked, every problem collected.

#include <regex>
#include <set>

#include "recipe/toml_reader.hpp"

namespace bootstrap::recipe {

const char* to_string(Severity severity) {
    switch (severity) {
        case Severity::error: return "error";
        case Severity::warning: return "warning";
        case Severity::info: return "info";
    }
    return "?";
}

namespace detail {

namespace {

const std::vector<std::string> k_lint_keys{"id",      "when",       "unless_import", "forbid", "require",
                                           "allowed", "forbid_env", "explain",       "fix",    "severity"};
const std::vector<std::string> k_lint_checks{"forbid", "require", "allowed", "forbid_env"};
const std::vector<std::string> k_fault_keys{"id", "match", "explain", "fix", "step"};
const std::vector<std::string> k_severities{"error", "warning", "info"};

/// "--name": two dashes, then a letter or digit, then letters, digits, '-' and '_'.
bool is_flag_name(std::string_view s) {
    if (s.size() < 3 || s.substr(0, 2) != "--" || !std::isalnum(static_cast<unsigned char>(s[2]))) return false;
    for (char c : s.substr(2))
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    return true;
}

/// A dotted Python module name: `fused_weight_gradient_mlp_cuda`, `apex.normalization`.
bool is_module_name(std::string_view s) {
    auto parts = core::split(s, '.');
    if (s.empty()) return false;
    for (const auto& p : parts) {
        if (p.empty() || std::isdigit(static_cast<unsigned char>(p[0]))) return false;
        for (char c : p)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    return true;
}

/// Checks a flag written in a recipe; with `with_value`, "--name=value" is accepted too.
bool check_flag(Reader& rd, const Text& t, std::string_view name, bool with_value) {
    std::string_view v = t.value;
    size_t eq = v.find('=');
    bool ok = with_value && eq != std::string_view::npos ? is_flag_name(v.substr(0, eq)) && eq + 1 < v.size()
                                                         : is_flag_name(v);
    if (!ok)
        rd.report(t.loc, fmt::format("'{}' must be a flag like \"--name\"{}, not \"{}\"", name,
                                     with_value ? " or \"--name=value\"" : "", t.value));
    return ok;
}

std::vector<Text> flags(Reader& rd, const toml::node& n, std::string_view name, bool single, bool with_value) {
    std::vector<Text> out;
    auto all = rd.texts(n, name, single);
    for (size_t i = 0; i < all.size(); ++i) {
        std::string item = n.is_array() ? fmt::format("{}[{}]", name, i) : std::string(name);
        if (check_flag(rd, all[i], item, with_value)) out.push_back(std::move(all[i]));
    }
    return out;
}

/// A string that must be present and not empty, for `explain` and `fix`.
std::string required_text(Reader& rd, const toml::table& t, std::string_view key, const SourceLoc& where,
                          const std::string& label, const std::vector<std::string>& suggested) {
    const toml::node* n = t.get(key);
    if (!n) {
        if (!contains(suggested, key)) rd.report(where, fmt::format("{} is missing required key '{}'", label, key));
        return {};
    }
    auto s = rd.string(*n, key);
    if (s && core::trim(*s).empty()) rd.report(rd.loc(*n), fmt::format("'{}' must not be empty", key));
    return s.value_or("");
}

/// The entry's id, checked for form and uniqueness; `label` becomes "<what> 'id'" when valid.
std::string read_id(Reader& rd, const toml::table& t, const SourceLoc& where, std::string& label, std::string_view what,
                    std::map<std::string, SourceLoc>& ids) {
    const toml::node* n = t.get("id");
    if (!n) {
        rd.report(where, fmt::format("{} is missing required key 'id'", label));
        return {};
    }
    auto id = rd.string(*n, "id");
    if (!id) return {};
    if (!is_step_id(*id)) {
        rd.report(rd.loc(*n), fmt::format("{} id '{}' may contain only letters, digits, '_', '.' "
                                          "and '-'",
                                          what, *id));
        return *id;
    }
    label = fmt::format("{} '{}'", what, *id);
    auto [first, fresh] = ids.emplace(*id, rd.loc(*n));
    if (!fresh)
        rd.report(rd.loc(*n),
                  fmt::format("duplicate {} id '{}' (first defined at {})", what, *id, first->second.str()));
    return *id;
}

void read_allowed(Reader& rd, const toml::node& n, LintRule& rule) {
    if (!rd.expect(n, NodeType::table, "allowed", "a table { flag = \"--name\", values = [...] }")) return;
    const toml::table& t = *n.as_table();
    auto suggested = rd.unknown_keys(t, {"flag", "values"}, " in 'allowed'");
    for (std::string_view key : {"flag", "values"})
        if (!t.contains(key) && !contains(suggested, key))
            rd.report(rd.loc(n), fmt::format("'allowed' is missing required key '{}'", key));
    if (const auto* f = t.get("flag"))
        if (auto flag = rd.text(*f, "allowed.flag"))
            if (check_flag(rd, *flag, "allowed.flag", false)) rule.allowed_flag = *flag;
    if (const auto* v = t.get("values")) rule.allowed_values = rd.nonempty_texts(*v, "allowed.values");
}

void read_severity(Reader& rd, const toml::node& n, LintRule& rule) {
    auto s = rd.string(n, "severity");
    if (!s) return;
    if (*s == "error") rule.severity = Severity::error;
    else if (*s == "warning") rule.severity = Severity::warning;
    else if (*s == "info") rule.severity = Severity::info;
    else {
        std::string near = core::closest_match(*s, k_severities);
        rd.report(rd.loc(n), near.empty() ? fmt::format("unknown severity '{}' (expected one of "
                                                        "error, warning, info)",
                                                        *s)
                                          : fmt::format("unknown severity '{}' (did you mean "
                                                        "'{}'?)",
                                                        *s, near));
    }
}

std::optional<LintRule> read_lint_rule(Reader& rd, const toml::table& t, size_t index,
                                       std::map<std::string, SourceLoc>& ids) {
    LintRule rule;
    rule.loc = rd.loc(t);
    std::string label = fmt::format("lint rule #{}", index + 1);
    rule.id = read_id(rd, t, rule.loc, label, "lint rule", ids);
    auto suggested = rd.unknown_keys(t, k_lint_keys, " in " + label);
    if (const auto* n = t.get("when")) rule.when = flags(rd, *n, "when", true, true);
    if (const auto* n = t.get("unless_import")) {
        if (auto m = rd.text(*n, "unless_import")) {
            if (is_module_name(m->value)) rule.unless_import = *m;
            else
                rd.report(m->loc, fmt::format("'unless_import' must be a Python module name like "
                                              "\"fused_weight_gradient_mlp_cuda\", not \"{}\"",
                                              m->value));
        }
    }
    if (const auto* n = t.get("forbid")) rule.forbid = flags(rd, *n, "forbid", true, true);
    if (const auto* n = t.get("require")) rule.require = flags(rd, *n, "require", true, true);
    if (const auto* n = t.get("allowed")) read_allowed(rd, *n, rule);
    if (const auto* n = t.get("forbid_env")) {
        for (auto& name : rd.texts(*n, "forbid_env", true)) {
            if (is_env_name(name.value)) rule.forbid_env.push_back(std::move(name));
            else rd.report(name.loc, fmt::format("'{}' is not a valid environment variable name", name.value));
        }
    }
    if (const auto* n = t.get("severity")) read_severity(rd, *n, rule);
    rule.explain = required_text(rd, t, "explain", rule.loc, label, suggested);
    rule.fix = required_text(rd, t, "fix", rule.loc, label, suggested);
    bool has_check = false;
    for (const auto& key : k_lint_checks) has_check = has_check || t.contains(key) || contains(suggested, key);
    if (!has_check)
        rd.report(rule.loc, fmt::format("{} checks nothing: give it 'forbid', 'require', 'allowed' "
                                        "or 'forbid_env'",
                                        label));
    return rule;
}

std::optional<FaultEntry> read_fault(Reader& rd, const toml::table& t, size_t index,
                                     std::map<std::string, SourceLoc>& ids) {
    FaultEntry fault;
    fault.loc = rd.loc(t);
    std::string label = fmt::format("fault #{}", index + 1);
    fault.id = read_id(rd, t, fault.loc, label, "fault", ids);
    auto suggested = rd.unknown_keys(t, k_fault_keys, " in " + label);
    if (const auto* n = t.get("match")) {
        if (auto m = rd.text(*n, "match")) {
            if (m->value.size() > k_max_fault_pattern) {
                rd.report(m->loc, fmt::format("'match' is {} characters long; a pattern may have "
                                              "at most {}",
                                              m->value.size(), k_max_fault_pattern));
            } else {
                try {
                    // The flags doctor::make_fault compiles with.
                    std::regex re(m->value, std::regex::ECMAScript | std::regex::nosubs);
                    if (m->value.empty()) rd.report(m->loc, "'match' must not be empty");
                } catch (const std::regex_error& e) {
                    rd.report(m->loc, e.code() == std::regex_constants::error_backref
                                          ? std::string("'match' may not use back-references (\\1): "
                                                        "log lines are matched without capture groups")
                                          : fmt::format("'match' is not a valid regular expression ({})", e.what()));
                }
            }
            fault.match = *m;
        }
    } else if (!contains(suggested, "match")) {
        rd.report(fault.loc, fmt::format("{} is missing required key 'match'", label));
    }
    fault.explain = required_text(rd, t, "explain", fault.loc, label, suggested);
    fault.fix = required_text(rd, t, "fix", fault.loc, label, suggested);
    if (const auto* n = t.get("step")) fault.step = rd.text(*n, "step");
    return fault;
}

/// Both [[lint]] and [[fault]] are arrays of tables; `read` reads one element.
template <class T, class ReadOne>
void read_array_of_tables(Reader& rd, const toml::node& n, std::string_view name, std::vector<T>& out, ReadOne read) {
    if (n.is_table()) {
        rd.report(rd.loc(n), fmt::format("'{0}' must be an array of tables (write [[{0}]]), not a "
                                         "table",
                                         name));
        return;
    }
    if (!rd.expect(n, NodeType::array, name, "an array of tables")) return;
    std::map<std::string, SourceLoc> ids;
    const auto& arr = *n.as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
        if (!rd.expect(arr[i], NodeType::table, fmt::format("{}[{}]", name, i), "a table")) continue;
        if (auto item = read(rd, *arr[i].as_table(), i, ids)) out.push_back(std::move(*item));
    }
}

}  // namespace

void read_lint_rules(Reader& rd, const toml::node& n, Recipe& out) {
    read_array_of_tables(rd, n, "lint", out.lint_rules, read_lint_rule);
}

void read_faults(Reader& rd, const toml::node& n, Recipe& out) {
    read_array_of_tables(rd, n, "fault", out.faults, read_fault);
}

void read_flag_aliases(Reader& rd, const toml::node& n, Recipe& out) {
    if (!rd.expect(n, NodeType::table, "flag_aliases", "a table")) return;
    std::map<std::string, std::string> group_of;  // every flag seen -> its canonical flag
    auto claim = [&](const Text& flag, const std::string& canonical) {
        auto [it, fresh] = group_of.emplace(flag.value, canonical);
        if (!fresh)
            rd.report(flag.loc, fmt::format("flag '{}' is already in the alias group of '{}'", flag.value, it->second));
        return fresh;
    };
    for (auto&& [key, value] : *n.as_table()) {
        Text canonical{std::string(key.str()), rd.loc(key)};
        std::string name = "flag_aliases." + canonical.value;
        bool ok = check_flag(rd, canonical, "flag_aliases key", false) && claim(canonical, canonical.value);
        std::vector<std::string> aliases;
        for (auto& alias : flags(rd, value, name, true, false))
            if (claim(alias, canonical.value)) aliases.push_back(alias.value);
        if (ok) out.flag_aliases[canonical.value] = std::move(aliases);
    }
}

void read_perf(Reader& rd, const toml::table& t, Recipe& out) {
    rd.unknown_keys(t, {"baseline"}, " in [perf]");
    const toml::node* n = t.get("baseline");
    if (!n || !rd.expect(*n, NodeType::table, "perf.baseline", "a table { tflops = ..., tolerance = ... }")) return;
    const toml::table& b = *n->as_table();
    PerfBaseline base;
    base.loc = rd.loc(*n);
    auto suggested = rd.unknown_keys(b, {"tflops", "tolerance", "note"}, " in 'perf.baseline'");
    bool ok = true;
    if (const auto* v = b.get("tflops")) {
        auto tflops = rd.positive_number(*v, "perf.baseline.tflops");
        ok = tflops.has_value();
        base.tflops = tflops.value_or(0);
    } else {
        ok = false;
        if (!contains(suggested, "tflops")) rd.report(base.loc, "'perf.baseline' is missing required key 'tflops'");
    }
    if (const auto* v = b.get("tolerance")) {
        if (!v->is_number()) {
            rd.expect(*v, NodeType::floating_point, "perf.baseline.tolerance", "a number");
        } else {
            double tol = v->is_integer() ? static_cast<double>(v->as_integer()->get()) : v->as_floating_point()->get();
            if (tol < 0 || tol >= 1)
                rd.report(rd.loc(*v), fmt::format("'perf.baseline.tolerance' must be a fraction "
                                                  "from 0 up to (not including) 1, not {}",
                                                  tol));
            else base.tolerance = tol;
        }
    }
    if (const auto* v = b.get("note")) base.note = rd.string(*v, "perf.baseline.note").value_or("");
    if (ok) out.perf_baseline = base;
}

void check_fault_steps(Reader& rd, const Recipe& recipe) {
    std::vector<std::string> step_ids;
    for (const auto& s : recipe.steps) step_ids.push_back(s.id);
    for (const auto& f : recipe.faults) {
        if (!f.step || contains(step_ids, f.step->value)) continue;
        std::string near = core::closest_match(f.step->value, step_ids);
        rd.report(f.step->loc,
                  fmt::format("fault '{}' names step '{}', which this recipe does not have{}", f.id, f.step->value,
                              near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    }
}

}  // namespace detail

}  // namespace bootstrap::recipe
