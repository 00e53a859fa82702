// Lint rule evaluation. Megatron parses flags with argparse: for a repeated flag the last
// occurrence wins, so value conditions look at the last one; presence looks at any.

#include "doctor/lint.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "exec/process.hpp"
#include "pyenv/import_probe.hpp"

namespace bootstrap::doctor {

// ---- aliases ---------------------------------------------------------------------------------

FlagAliases::FlagAliases() {
    add("--enable-hyper-connections", {"--enable-mhc-connections"});
    add("--num-residual-streams", {"--mhc-num-residual-streams"});
    add("--cuda-graph-scope", {"--cuda-graph-modules"});
}

void FlagAliases::add(const std::string& canonical, const std::vector<std::string>& aliases) {
    std::string target = normalize_flag(canonical);
    std::vector<std::string> names{target};
    for (const auto& a : aliases) names.push_back(normalize_flag(a));
    for (const auto& name : names) {
        auto old = m_to_canonical.find(name);
        if (old == m_to_canonical.end() || old->second == target) continue;
        std::string previous = old->second;  // the whole previous group joins this one
        for (auto& [flag, group] : m_to_canonical)
            if (group == previous) group = target;
    }
    for (const auto& name : names) m_to_canonical[name] = target;
}

std::string FlagAliases::canonical(const std::string& flag) const {
    std::string n = normalize_flag(flag);
    auto it = m_to_canonical.find(n);
    return it == m_to_canonical.end() ? n : it->second;
}

std::string FlagAliases::spellings(const std::string& canonical) const {
    std::vector<std::string> others;
    for (const auto& [flag, group] : m_to_canonical)
        if (group == canonical && flag != canonical) others.push_back(flag);
    return core::join(others, ", ");
}

FlagAliases aliases_for(const recipe::Recipe& recipe) {
    FlagAliases aliases;
    for (const auto& [canonical, others] : recipe.flag_aliases) aliases.add(canonical, others);
    return aliases;
}

// ---- import facts ------------------------------------------------------------------------------

namespace {

/// Dotted identifiers ([A-Za-z_][A-Za-z0-9_]* joined by '.'), scanned by hand: a module name
/// comes from a recipe or a config and can be any length, too long for std::regex's recursion.
bool is_module_name(std::string_view m) {
    auto is_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    bool at_start = true;
    for (char c : m) {
        if (at_start) {
            if (!is_start(c)) return false;
            at_start = false;
        } else if (c == '.') {
            at_start = true;
        } else if (!is_start(c) && !(c >= '0' && c <= '9')) {
            return false;
        }
    }
    return !at_start;
}

}  // namespace

ImportFact VenvImportProbe::can_import(const std::string& module) {
    if (auto it = m_cache.find(module); it != m_cache.end()) return it->second;
    ImportFact fact;
    auto python = m_venv / "bin" / "python";
    std::error_code ec;
    if (!is_module_name(module)) {
        fact.detail = fmt::format("'{}' is not a module name", core::clip(module));
    } else if (!std::filesystem::exists(python, ec)) {
        fact.detail = fmt::format("no interpreter at {}", python.string());
    } else {
        auto preload = pyenv::probe_preload(module, pyenv::module_search_dirs(find_site_packages(m_venv)));
        auto spec = pyenv::import_probe_spec(
            python, module, "", exec::compose_environment(exec::current_environment(), {}, {}), preload.modules);
        spec.timeout = std::chrono::milliseconds(120'000);
        auto ran = exec::run_process(spec);
        if (!ran) {
            fact.detail = ran.error().message;
        } else if (ran->ok()) {
            fact.state = ImportFact::State::imports;
        } else if (ran->timed_out || ran->interrupted) {
            fact.detail = fmt::format("`import {}` {}", module, ran->describe());
        } else {
            fact.state = ImportFact::State::fails;
            auto failure = pyenv::parse_import_probe(ran->output);
            fact.detail = failure.root_cause.empty() ? ran->describe() : failure.root_cause;
        }
    }
    m_cache[module] = fact;
    return fact;
}

ImportFact UnknownImportProbe::can_import(const std::string& module) {
    return {ImportFact::State::unknown, fmt::format("no venv given to try `import {}` in", module)};
}

// ---- evaluation --------------------------------------------------------------------------------

namespace {

/// "--flag" or "--flag=value" from a rule, canonicalized.
struct Condition {
    std::string flag;
    std::optional<std::string> value;
    std::string written;
};

Condition parse_condition(const std::string& text, const FlagAliases& aliases) {
    Condition c;
    c.written = text;
    size_t eq = text.find('=');
    c.flag = aliases.canonical(text.substr(0, eq));
    if (eq != std::string::npos) c.value = text.substr(eq + 1);
    return c;
}

bool contains(const std::vector<std::string>& list, const std::string& word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

/// The rule evaluation over one configuration.
class Evaluator {
public:
    explicit Evaluator(const LintInput& input) : m_in(input) {
        for (const auto& flag : m_in.config->flags) m_flags[m_in.aliases->canonical(flag.name)].push_back(&flag);
    }

    std::vector<Finding> run() {
        for (const auto& rule : *m_in.rules) evaluate(rule);
        return std::move(m_findings);
    }

private:
    /// Occurrences that satisfy `c`: all of them for presence, the last for a value.
    std::vector<const Flag*> satisfying(const Condition& c) const {
        auto it = m_flags.find(c.flag);
        if (it == m_flags.end()) return {};
        if (!c.value) return it->second;
        const Flag* last = it->second.back();
        return contains(last->values, *c.value) ? std::vector<const Flag*>{last} : std::vector<const Flag*>{};
    }

    const Flag* last(const std::string& canonical) const {
        auto it = m_flags.find(canonical);
        return it == m_flags.end() ? nullptr : it->second.back();
    }

    static std::string written(const Flag& f) {
        return f.values.empty() ? f.name : fmt::format("{} {}", f.name, core::join(f.values, " "));
    }

    void add(const recipe::LintRule& rule, recipe::Severity severity, std::string message,
             std::vector<std::string> evidence) {
        for (const auto& e : m_context) evidence.push_back(e);
        m_findings.push_back(
            {rule.id, severity, std::move(message), std::move(evidence), rule.explain, rule.fix, rule.loc.str()});
    }

    /// The conditions hold; sets m_when ("with --x and --y=z") and m_context (their evidence).
    bool applies(const recipe::LintRule& rule) {
        m_when.clear();
        m_context.clear();
        std::vector<std::string> parts;
        for (const auto& w : rule.when) {
            Condition c = parse_condition(w.value, *m_in.aliases);
            auto hits = satisfying(c);
            if (hits.empty()) return false;
            parts.push_back(c.value ? fmt::format("{}={}", hits.front()->name, *c.value) : hits.front()->name);
            m_context.push_back(hits.front()->where.str());
        }
        if (!parts.empty()) m_when = " with " + core::join(parts, " and ");
        return true;
    }

    void evaluate(const recipe::LintRule& rule) {
        if (!applies(rule)) return;
        if (rule.unless_import) {
            const std::string& module = rule.unless_import->value;
            ImportFact fact = m_in.imports->can_import(module);
            if (fact.state == ImportFact::State::imports) return;
            if (fact.state == ImportFact::State::unknown) {
                add(rule, recipe::Severity::info,
                    fmt::format("not checked: cannot tell whether `import {}` works ({})", module, fact.detail), {});
                m_findings.back().fix =
                    fmt::format("pass --venv DIR (the training venv) so bootstrap can try `import {}` there", module);
                return;
            }
            m_when += fmt::format("{} `import {}` failing", m_when.empty() ? " with" : " and", module);
            m_context.push_back(fmt::format("python -c 'import {}': {}", module, fact.detail));
        }
        for (const auto& f : rule.forbid) check_forbid(rule, f.value);
        for (const auto& r : rule.require) check_require(rule, r.value);
        if (rule.allowed_flag) check_allowed(rule);
        for (const auto& e : rule.forbid_env) check_env(rule, e.value);
    }

    void check_forbid(const recipe::LintRule& rule, const std::string& text) {
        Condition c = parse_condition(text, *m_in.aliases);
        for (const Flag* hit : satisfying(c))
            add(rule, rule.severity, fmt::format("{} is not allowed{}", written(*hit), m_when), {hit->where.str()});
    }

    void check_require(const recipe::LintRule& rule, const std::string& text) {
        Condition c = parse_condition(text, *m_in.aliases);
        if (!satisfying(c).empty()) return;
        if (const Flag* present = last(c.flag); present && c.value) {
            add(rule, rule.severity,
                fmt::format("{} must be {}{}, not {}", present->name, *c.value, m_when,
                            present->values.empty() ? "empty" : core::join(present->values, " ")),
                {present->where.str()});
            return;
        }
        std::string others = m_in.aliases->spellings(c.flag);
        add(rule, rule.severity,
            fmt::format("{}{} is required{}", c.written, others.empty() ? "" : fmt::format(" (or {})", others), m_when),
            m_context.empty() ? std::vector<std::string>{m_in.config->file} : std::vector<std::string>{});
    }

    void check_allowed(const recipe::LintRule& rule) {
        std::string flag = m_in.aliases->canonical(rule.allowed_flag->value);
        const Flag* present = last(flag);
        if (!present) return;
        std::vector<std::string> allowed;
        for (const auto& v : rule.allowed_values) allowed.push_back(v.value);
        std::vector<std::string> bad;
        for (const auto& v : present->values)
            if (!contains(allowed, v)) bad.push_back(v);
        if (present->values.empty()) bad.push_back("(no value)");
        if (bad.empty()) return;
        add(rule, rule.severity,
            fmt::format("{} {} is not allowed{} (allowed: {})", present->name, core::join(bad, " "), m_when,
                        core::join(allowed, ", ")),
            {present->where.str()});
    }

    void check_env(const recipe::LintRule& rule, const std::string& name) {
        for (const auto& a : m_in.config->env)
            if (a.name == name && !a.value.empty())
                add(rule, rule.severity, fmt::format("{} must not be set{}", name, m_when), {a.where.str()});
        if (auto it = m_in.environment.find(name); it != m_in.environment.end() && !it->second.empty())
            add(rule, rule.severity, fmt::format("{} must not be set{} (it is set in this environment)", name, m_when),
                {fmt::format("environment: {}={}", name, it->second)});
    }

    const LintInput& m_in;
    std::map<std::string, std::vector<const Flag*>> m_flags;  // canonical name -> occurrences
    std::vector<Finding> m_findings;
    std::string m_when;
    std::vector<std::string> m_context;
};

}  // namespace

std::vector<Finding> lint_config(const LintInput& input) { return Evaluator(input).run(); }

std::vector<Finding> lint_config(const TrainingConfig& config, const recipe::Recipe& recipe, ImportProbe& imports,
                                 const exec::EnvMap& environment) {
    FlagAliases aliases = aliases_for(recipe);
    LintInput input{&config, &recipe.lint_rules, &aliases, &imports, environment};
    return lint_config(input);
}

size_t count_severity(const std::vector<Finding>& findings, recipe::Severity severity) {
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; }));
}

std::string format_findings(const std::vector<Finding>& findings) {
    std::string out;
    for (const auto& f : findings) {
        out += fmt::format("{} [{}] {}\n", recipe::to_string(f.severity), f.rule, f.message);
        for (const auto& e : f.evidence) out += fmt::format("  at: {}\n", e);
        if (!f.explain.empty()) out += fmt::format("  why: {}\n", f.explain);
        if (!f.fix.empty()) out += fmt::format("  fix: {}\n", f.fix);
    }
    return out;
}

}  // namespace bootstrap::doctor
