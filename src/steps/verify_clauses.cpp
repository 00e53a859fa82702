// The registry of verify clauses: one line per clause, and what every clause shares (the loop
// that runs a step's clauses, the description, the hooks the engine asks).

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/interrupt.hpp"
#include "core/strings.hpp"
#include "steps/recipe_kinds.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::steps {

// The registered clauses, one line each, in the order they are tried: X(name) stands for
// `const Clause k_<name>_clause`, defined in verify_<name>.cpp. `import` comes first: a table
// naming no clause is read as an import clause missing its key (its keys are the suggestions).
#define BS_REGISTERED_CLAUSES(X) \
    X(import)                    \
    X(file)                      \
    X(cuda_arch)                 \
    X(elf_symbol)                \
    /* one line per clause above */

#define BS_DECLARE_CLAUSE(name) extern const Clause k_##name##_clause;
#define BS_CLAUSE_ADDRESS(name) &k_##name##_clause,
BS_REGISTERED_CLAUSES(BS_DECLARE_CLAUSE)

const std::vector<const Clause*>& clauses() {
    static const std::vector<const Clause*> k_clauses{BS_REGISTERED_CLAUSES(BS_CLAUSE_ADDRESS)};
    return k_clauses;
}

const Clause* find_clause(std::string_view name) {
    for (const Clause* c : clauses())
        if (c->name == name) return c;
    return nullptr;
}

const Clause& clause_of(std::string_view name) {
    if (const Clause* c = find_clause(name)) return *c;
    // A parsed recipe holds only registered clauses (the parser gets them from
    // recipe_clauses()): reaching here is a bug, never a silent default.
    fmt::print(stderr, "bootstrap: internal error: no verify clause named '{}'\n", name);
    std::abort();
}

const recipe::ClauseTable& recipe_clauses() {
    static const recipe::ClauseTable k_table = [] {
        recipe::ClauseTable table;
        for (const Clause* c : clauses()) table.push_back({c->name, c->parse, c->claims});
        return table;
    }();
    return k_table;
}

bool clauses_need_venv(const recipe::Step& step) {
    for (const auto& v : step.verify) {
        const Clause& clause = clause_of(v.kind);
        if (clause.needs_venv && clause.needs_venv(v)) return true;
    }
    return false;
}

std::vector<std::string> clauses_promised_files(const ResolvedStep& step) {
    std::vector<std::string> paths;
    for (const auto& v : step.verify)
        if (const auto promised = clause_of(v.kind).promised_files)
            for (auto& p : promised(v)) paths.push_back(std::move(p));
    return paths;
}

std::string ResolvedVerify::describe() const { return clause_of(kind).describe(*this); }

Error probe_failure(const ResolvedStep& step, const exec::ProcessSpec& spec, const std::string& shown,
                    const exec::ProcessResult& result, const fs::path& log_path) {
    auto err = child_failure(step, spec, result, log_path);
    // The argv line may span lines (the script is quoted whole): cut up to the cwd line.
    if (size_t cwd = err.detail.find("\ncwd: "); core::starts_with(err.detail, "command: ") && cwd != std::string::npos)
        err.detail = "command: " + shown + err.detail.substr(cwd);
    return err;
}

Status verify(const ResolvedStep& step, StepContext& ctx) {
    for (const auto& clause : step.verify) {
        if (core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", step.id));
        BS_CHECK(clause_of(clause.kind).run(clause, step, ctx));
    }
    return {};
}

}  // namespace bootstrap::steps
