// `[[step]]` tables: the common keys, verify clauses, the kind's own keys through its parse
// function, and one generic report of keys nobody asked for.

#include "recipe/step_parser.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
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

/// `{ cuda_arch = "9.0", module = "name" }` or `{ cuda_arch = "9.0", path = "lib/x.so" }`.
void read_cuda_arch_clause(ValueReader& rd, const Value& t, const std::string& name, VerifyClause clause, Step& step) {
    if (const Value* version = t.get("version"))
        rd.report(version->loc, "'version' is valid only with 'import' in a verify clause");
    auto suggested = rd.unknown_keys(t, {"cuda_arch", "module", "path", "version"}, " in verify clause");
    const Value* module = t.get("module");
    const Value* path = t.get("path");
    if (!module && !path) {
        if (contains(suggested, "module") || contains(suggested, "path")) return;
        rd.report(clause.loc,
                  "a 'cuda_arch' verify clause needs 'module' or 'path' (the library "
                  "to inspect)");
        return;
    }
    if (module && path) {
        rd.report(clause.loc, "a 'cuda_arch' verify clause takes 'module' or 'path', not both");
        return;
    }
    auto arch = rd.text(*t.get("cuda_arch"), name + ".cuda_arch");
    auto library = rd.text(module ? *module : *path, name + (module ? ".module" : ".path"));
    if (!arch || !library) return;
    clause.kind = VerifyClause::Kind::cuda_arch;
    clause.target = std::move(*arch);
    clause.library = std::move(*library);
    clause.library_is_module = module != nullptr;
    step.verify.push_back(std::move(clause));
}

/// `{ elf_symbol = "name", library = "nvidia/**/libX.so.13" }`: the library that will load
/// (steps resolve it as `doctor --symbol` does) must define the symbol.
void read_elf_symbol_clause(ValueReader& rd, const Value& t, const std::string& name, VerifyClause clause, Step& step) {
    auto suggested = rd.unknown_keys(t, {"elf_symbol", "library"}, " in verify clause");
    const Value* library = t.get("library");
    if (!library) {
        if (!contains(suggested, "library"))
            rd.report(clause.loc,
                      "an 'elf_symbol' verify clause needs 'library' (a glob under "
                      "site-packages such as \"nvidia/**/libcublasLt.so.13\", or an "
                      "absolute path)");
        return;
    }
    auto symbol = rd.text(*t.get("elf_symbol"), name + ".elf_symbol");
    auto glob = rd.text(*library, name + ".library");
    if (!symbol || !glob) return;
    bool bad = false;
    if (symbol->value.empty() || symbol->value.find_first_of(" \t\n") != std::string::npos) {
        rd.report(symbol->loc, fmt::format("'{}.elf_symbol' must be a symbol name without spaces, "
                                           "not \"{}\"",
                                           name, symbol->value));
        bad = true;
    }
    if (core::trim(glob->value).empty()) {
        rd.report(glob->loc, fmt::format("'{}.library' must name a library file, not be empty", name));
        bad = true;
    }
    if (bad) return;
    clause.kind = VerifyClause::Kind::elf_symbol;
    clause.target = std::move(*symbol);
    clause.library = std::move(*glob);
    step.verify.push_back(std::move(clause));
}

/// `version = ">=2.1"`: a non-empty string here; the plan parses it as a PEP 440 specifier
/// (the recipe module has no PEP 440 parser of its own).
std::optional<Text> read_version_specifier(ValueReader& rd, const Value& n, const std::string& name) {
    auto version = rd.text(n, name + ".version");
    if (version && core::trim(version->value).empty()) {
        rd.report(version->loc, fmt::format("'{}.version' must be a version specifier such as "
                                            "'>=2.1', not empty",
                                            name));
        return std::nullopt;
    }
    return version;
}

void read_verify_clause(ValueReader& rd, const Value& t, const std::string& name, Step& step) {
    VerifyClause clause;
    clause.loc = t.loc;
    const Value* import = t.get("import");
    const Value* file = t.get("file");
    if (!import && !file && t.get("cuda_arch")) {
        read_cuda_arch_clause(rd, t, name, std::move(clause), step);
        return;
    }
    if (!import && !file && t.get("elf_symbol")) {
        read_elf_symbol_clause(rd, t, name, std::move(clause), step);
        return;
    }
    if (!import && !file && t.get("library")) {
        rd.report(clause.loc, "'library' is valid only with 'elf_symbol' in a verify clause");
        return;
    }
    if (!import && !file) {
        for (const auto& entry : t.table) {
            if (contains(k_future_verify, entry.key)) {
                rd.report(clause.loc, fmt::format("verify clause '{}' is not supported by this "
                                                  "version of bootstrap",
                                                  entry.key));
                return;
            }
        }
    }
    auto suggested =
        rd.unknown_keys(t, {"import", "attr", "file", "version", "preload", "equals"}, " in verify clause");
    if (!import && !file && !contains(suggested, "import") && !contains(suggested, "file"))
        rd.report(clause.loc, "a verify clause needs 'import', 'file', 'cuda_arch' or 'elf_symbol'");
    if (import && file) {
        rd.report(clause.loc, "a verify clause takes 'import' or 'file', not both");
        return;
    }
    if (const Value* attr = t.get("attr")) {
        if (file) rd.report(attr->loc, "'attr' is valid only with 'import' in a verify clause");
        else clause.attr = rd.text(*attr, name + ".attr");
    }
    if (const Value* version = t.get("version")) {
        if (file) rd.report(version->loc, "'version' is valid only with 'import' in a verify clause");
        else clause.version = read_version_specifier(rd, *version, name);
    }
    if (const Value* equals = t.get("equals")) {  // str(module.attr) must be exactly this
        if (file || !t.get("attr"))
            rd.report(equals->loc,
                      "'equals' needs 'import' and 'attr' in a verify clause (the value "
                      "str(module.attr) must have)");
        else clause.equals = rd.text(*equals, name + ".equals");
    }
    if (const Value* preload = t.get("preload")) {  // modules the probe imports first
        if (file) rd.report(preload->loc, "'preload' is valid only with 'import' in a verify clause");
        else
            for (auto& m : rd.nonempty_texts(*preload, name + ".preload")) {
                if (core::trim(m.value).empty() || m.value.find_first_of(" \t\n,") != std::string::npos)
                    rd.report(m.loc,
                              fmt::format("'{}.preload' names modules such as \"torch\", not '{}'", name, m.value));
                else clause.preload.push_back(std::move(m));
            }
    }
    if (!import && !file) return;
    clause.kind = import ? VerifyClause::Kind::import_module : VerifyClause::Kind::file;
    auto target = rd.text(import ? *import : *file, name + (import ? ".import" : ".file"));
    if (!target) return;
    clause.target = std::move(*target);
    step.verify.push_back(std::move(clause));
}

void read_verify(ValueReader& rd, const Value& n, Step& step) {
    if (!rd.expect(n, ValueType::array, "verify", "an array of tables")) return;
    for (size_t i = 0; i < n.array.size(); ++i) {
        std::string name = fmt::format("verify[{}]", i);
        if (rd.expect(n.array[i], ValueType::table, name, "a table")) read_verify_clause(rd, n.array[i], name, step);
    }
}

// ---- common keys ----------------------------------------------------------------------------

/// The keys every kind has, read before the kind's own.
void read_common_keys(StepReader& rd, Step& step) {
    (void)rd.get("id");
    (void)rd.get("kind");
    if (const Value* n = rd.get("env")) step.env = rd.values().env_table(*n, "env");
    if (const Value* n = rd.get("env_unset")) step.env_unset = rd.values().env_names(*n, "env_unset");
    // A step that may run longer than 30 days is a mistake, and a larger value overflows the
    // clock a timeout is measured on (1e10 s ran out at once as "timed out (0.00s)").
    step.timeout = rd.positive_number("timeout", k_max_step_timeout_s, "30 days");
    step.attempts = rd.integer("attempts", 1);
    step.optional = rd.flag("optional");
    if (const Value* n = rd.get("verify")) read_verify(rd.values(), *n, step);
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
    read_common_keys(rd, step);
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
                              const KindTable& kinds) {
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
    read_common_keys(srd, step);
    step.fields = kind->parse(srd);
    rd.collect(nullptr);

    auto suggested = report_unasked_keys(rd, t, srd, step, label, kinds);
    for (const auto& need : srd.needs())
        if (!contains(suggested, need.key)) rd.report(step.loc, need.message);
    return step;
}

}  // namespace

void read_steps(ValueReader& rd, const Value& n, const KindTable& kinds, Recipe& out) {
    if (n.is(ValueType::table)) {
        rd.report(n.loc, "'step' must be an array of tables (write [[step]]), not a table");
        return;
    }
    if (!rd.expect(n, ValueType::array, "step", "an array of tables")) return;
    std::map<std::string, SourceLoc> ids;
    for (size_t i = 0; i < n.array.size(); ++i) {
        if (!rd.expect(n.array[i], ValueType::table, fmt::format("step[{}]", i), "a table")) continue;
        if (auto step = read_step(rd, n.array[i], i, ids, kinds)) out.steps.push_back(std::move(*step));
    }
}

}  // namespace bootstrap::recipe::detail
