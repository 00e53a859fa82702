// `[[step]]` tables: the common keys, verify clauses, the kind's own keys through its parse
// function, and one generic report of keys nobody asked for.

#include "recipe/step_parser.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "recipe/clause_reader.hpp"
#include "recipe/meaning.hpp"
#include "recipe/step_reader.hpp"

namespace bootstrap::recipe::detail {

namespace {

constexpr double k_max_step_timeout_s = 30.0 * 24 * 3600;

bool contains(const std::vector<std::string>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

/// Kinds and verify clauses of later schema releases: named as unsupported, not as typos.
const std::vector<std::string> k_future_kinds{"fetch", "patch", "download", "cmake", "wheel"};
const std::vector<std::string> k_future_verify{"command"};

// ---- verify clauses -------------------------------------------------------------------------

/// One `verify` entry, read by the registered clause whose key it holds (steps/verify_<name>.cpp
/// reads the keys; here only which clause reads them).
void read_verify_clause(ValueReader& rd, const Value& t, const std::string& name, const ClauseTable& clauses,
                        Step& step) {
    VerifyClause clause;
    clause.loc = t.loc;
    if (clauses.empty()) {
        rd.report(clause.loc, "no verify clause is known to this parser");
        return;
    }
    ClauseReader crd(t, name, rd, clauses);
    const ClauseSyntax* syntax = nullptr;
    for (const auto& c : clauses)
        if (t.get(c.name)) {
            syntax = &c;
            break;
        }
    if (!syntax) {
        for (const auto& c : clauses)
            if (c.claims && c.claims(crd)) return;
        for (const auto& entry : t.table) {
            if (contains(k_future_verify, entry.key)) {
                rd.report(clause.loc, fmt::format("verify clause '{}' is not supported by this "
                                                  "version of bootstrap",
                                                  entry.key));
                return;
            }
        }
        syntax = &clauses.front();  // reads a table naming no clause: its keys are the suggestions
    }
    clause.kind = std::string(syntax->name);
    if (syntax->parse(crd, clause)) step.verify.push_back(std::move(clause));
}

void read_verify(ValueReader& rd, const Value& n, const ClauseTable& clauses, Step& step) {
    if (!rd.expect(n, ValueType::array, "verify", "an array of tables")) return;
    for (size_t i = 0; i < n.array.size(); ++i) {
        std::string name = fmt::format("verify[{}]", i);
        if (rd.expect(n.array[i], ValueType::table, name, "a table"))
            read_verify_clause(rd, n.array[i], name, clauses, step);
    }
}

// ---- common keys ----------------------------------------------------------------------------

/// The keys every kind has, read before the kind's own.
void read_common_keys(StepReader& rd, const ClauseTable& clauses, Step& step) {
    (void)rd.get("id");
    (void)rd.get("kind");
    if (const Value* n = rd.get("env")) step.env = rd.values().env_table(*n, "env");
    if (const Value* n = rd.get("env_unset")) step.env_unset = rd.values().env_names(*n, "env_unset");
    // A step that may run longer than 30 days is a mistake, and a larger value overflows the
    // clock a timeout is measured on (1e10 s ran out at once as "timed out (0.00s)").
    step.timeout = rd.positive_number("timeout", k_max_step_timeout_s, "30 days");
    step.attempts = rd.integer("attempts", 1);
    step.optional = rd.flag("optional");
    if (const Value* n = rd.get("verify")) read_verify(rd.values(), *n, clauses, step);
}

/// The step's id, checked for form and uniqueness; `label` becomes "step 'id'" when valid.
void read_step_id(ValueReader& rd, const Value& t, Step& step, std::string& label,
                  std::map<std::string, SourceLoc>& ids) {
    const Value* n = t.get("id");
    if (!n) {
        rd.report(step.loc, fmt::format("{} is missing required key 'id'", label));
        return;
    }
    auto id = rd.string(*n, "id");
    if (!id) return;
    step.id = *id;
    if (!is_step_id(*id)) {
        rd.report(n->loc, fmt::format("step id '{}' may contain only letters, digits, '_', "
                                      "'.' and '-'",
                                      *id));
        return;
    }
    label = fmt::format("step '{}'", *id);
    auto [first, fresh] = ids.emplace(*id, n->loc);
    if (!fresh)
        rd.report(n->loc, fmt::format("duplicate step id '{}' (first defined at {})", *id, first->second.str()));
}

const KindSyntax* read_step_kind(ValueReader& rd, const Value& t, const Step& step, const std::string& label,
                                 const KindTable& kinds) {
    const Value* n = t.get("kind");
    if (!n) {
        rd.report(step.loc, fmt::format("{} is missing required key 'kind'", label));
        return nullptr;
    }
    auto name = rd.string(*n, "kind");
    if (!name) return nullptr;
    for (const auto& kind : kinds)
        if (kind.name == *name) return &kind;
    if (contains(k_future_kinds, *name)) {
        rd.report(n->loc, fmt::format("step kind '{}' is not supported by this version of "
                                      "bootstrap",
                                      *name));
        return nullptr;
    }
    std::vector<std::string> names;
    for (const auto& kind : kinds) names.emplace_back(kind.name);
    std::string near = core::closest_match(*name, names);
    rd.report(n->loc, near.empty()
                          ? fmt::format("unknown step kind '{}' (expected one of {})", *name, core::join(names, ", "))
                          : fmt::format("unknown step kind '{}' (did you mean '{}'?)", *name, near));
    return nullptr;
}

// ---- the keys each kind knows -----------------------------------------------------------------

/// The keys a kind asks for: its parse function run on an empty table (problems dropped).
std::vector<std::string> keys_of(const KindSyntax& kind) {
    Value empty;
    Step step;
    step.kind = std::string(kind.name);
    std::vector<Problem> dropped;
    ValueReader values(dropped);
    StepReader rd(empty, step, "", values);
    read_common_keys(rd, {}, step);
    (void)kind.parse(rd);
    return rd.asked();
}

/// Every kind's keys, common ones first, each once, in table order.
std::vector<std::string> all_keys(const KindTable& kinds) {
    std::vector<std::string> out;
    for (const auto& kind : kinds)
        for (auto& key : keys_of(kind))
            if (!contains(out, key)) out.push_back(std::move(key));
    return out;
}

/// Report the keys of `t` that the kind did not ask for; returns the suggestions made.
std::vector<std::string> report_unasked_keys(ValueReader& rd, const Value& t, const StepReader& srd, const Step& step,
                                             const std::string& label, const KindTable& kinds) {
    std::vector<std::string> suggested;  // a typo of a required key already says it is missing
    const auto& known = srd.asked();
    std::vector<std::string> every;
    for (const auto& entry : t.table) {
        if (contains(known, entry.key)) continue;
        if (every.empty()) every = all_keys(kinds);
        if (contains(every, entry.key)) {
            rd.report(entry.key_loc,
                      fmt::format("key '{}' is not valid for a step of kind '{}'", entry.key, step.kind));
            continue;
        }
        const auto& candidates = core::closest_match(entry.key, known).empty() ? every : known;
        suggested.push_back(rd.unknown_key(entry, candidates, " in " + label));
    }
    return suggested;
}

std::optional<Step> read_step(ValueReader& rd, const Value& t, size_t index, std::map<std::string, SourceLoc>& ids,
                              const KindTable& kinds, const ClauseTable& clauses) {
    Step step;
    step.loc = t.loc;
    std::string label = fmt::format("step #{}", index + 1);
    read_step_id(rd, t, step, label, ids);
    // Without a kind the valid keys are unknown; a later-release kind's keys would be noise.
    const KindSyntax* kind = read_step_kind(rd, t, step, label, kinds);
    if (!kind) return std::nullopt;
    step.kind = std::string(kind->name);

    rd.collect(&step.texts);
    StepReader srd(t, step, label, rd);
    read_common_keys(srd, clauses, step);
    step.fields = kind->parse(srd);
    rd.collect(nullptr);
    step.written = written_inputs(t);

    auto suggested = report_unasked_keys(rd, t, srd, step, label, kinds);
    for (const auto& need : srd.needs())
        if (!contains(suggested, need.key)) rd.report(step.loc, need.message);
    return step;
}

}  // namespace

void read_steps(ValueReader& rd, const Value& n, const KindTable& kinds, const ClauseTable& clauses, Recipe& out) {
    if (n.is(ValueType::table)) {
        rd.report(n.loc, "'step' must be an array of tables (write [[step]]), not a table");
        return;
    }
    if (!rd.expect(n, ValueType::array, "step", "an array of tables")) return;
    std::map<std::string, SourceLoc> ids;
    for (size_t i = 0; i < n.array.size(); ++i) {
        if (!rd.expect(n.array[i], ValueType::table, fmt::format("step[{}]", i), "a table")) continue;
        if (auto step = read_step(rd, n.array[i], i, ids, kinds, clauses)) out.steps.push_back(std::move(*step));
    }
}

}  // namespace bootstrap::recipe::detail
