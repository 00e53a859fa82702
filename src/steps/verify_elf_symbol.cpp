// Verify clause `elf_symbol`: `{ elf_symbol = "cublasLtX", library = "nvidia/**/libX.so.13" }`:
// the library that will load (the venv's site-packages first, then the system, as
// `doctor --symbol` resolves it: pyenv/venv_library.hpp) must define the symbol.

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "inspect/elf_symbols.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/venv_library.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::steps {

namespace {

bool parse(recipe::ClauseReader& rd, recipe::VerifyClause& clause) {
    auto suggested = rd.unknown_keys({"elf_symbol", "library"});
    if (!rd.get("library")) {
        if (std::find(suggested.begin(), suggested.end(), "library") == suggested.end())
            rd.report(clause.loc,
                      "an 'elf_symbol' verify clause needs 'library' (a glob under "
                      "site-packages such as \"nvidia/**/libcublasLt.so.13\", or an "
                      "absolute path)");
        return false;
    }
    auto symbol = rd.text("elf_symbol");
    auto glob = rd.text("library");
    if (!symbol || !glob) return false;
    bool bad = false;
    if (symbol->value.empty() || symbol->value.find_first_of(" \t\n") != std::string::npos) {
        rd.report(symbol->loc, fmt::format("'{}.elf_symbol' must be a symbol name without spaces, "
                                           "not \"{}\"",
                                           rd.name(), symbol->value));
        bad = true;
    }
    if (core::trim(glob->value).empty()) {
        rd.report(glob->loc, fmt::format("'{}.library' must name a library file, not be empty", rd.name()));
        bad = true;
    }
    if (bad) return false;
    clause.target = std::move(*symbol);
    clause.target_is = recipe::VerifyClause::Target::symbol;
    clause.library = std::move(*glob);
    return true;
}

/// `{ library = "x" }` without `elf_symbol` (or another clause's key).
bool claims(recipe::ClauseReader& rd) {
    if (!rd.get("library")) return false;
    rd.report(rd.loc(), "'library' is valid only with 'elf_symbol' in a verify clause");
    return true;
}

Status expand(const recipe::VerifyClause& clause, ResolvedVerify& v, ResolvedStep& step, PlanContext& ctx) {
    BS_TRY(v.target, ctx.text(clause.target, step));
    // The library stays a glob, resolved when the clause runs (the library that will load:
    // site-packages first, then the system).
    if (clause.library) {
        BS_TRY(v.library, ctx.text(*clause.library, step));
    }
    return {};
}

std::string describe(const ResolvedVerify& v) { return "elf_symbol " + v.target + " in " + v.library; }

/// The messages name the file checked.
Status run(const ResolvedVerify& clause, const ResolvedStep& step, StepContext& ctx) {
    std::vector<fs::path> sites;
    if (!fs::path(clause.library).is_absolute()) {
        BS_TRY(auto facts, pyenv::venv_facts(ctx.venv, step.child_env));
        sites.push_back(facts.purelib);
        if (facts.platlib != facts.purelib) sites.push_back(facts.platlib);
    }
    auto loaded = pyenv::find_loaded_library(sites, clause.library, step.child_env);
    if (loaded.file.empty())
        return fail(ErrorCode::step_failed,
                    fs::path(clause.library).is_absolute()
                        ? fmt::format("step '{}': verify failed: {}: {} is not a file", step.id, clause.describe(),
                                      clause.library)
                        : fmt::format("step '{}': verify failed: {}: no library matches {} in the "
                                      "venv or the system",
                                      step.id, clause.describe(), clause.library),
                    "searched: " + core::join(loaded.searched, ", "));
    const std::string checked = fmt::format("{} (from {})", loaded.file.string(), loaded.where);
    auto symbols = inspect::read_dynamic_symbols(loaded.file);
    if (!symbols)
        return fail(
            ErrorCode::step_failed,
            fmt::format("step '{}': verify failed: {}: {}", step.id, clause.describe(), symbols.error().message),
            "checked: " + checked);
    const auto* found = inspect::find_defined(*symbols, clause.target);
    if (found == nullptr)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {} does not define {} (checked {})", step.id,
                                loaded.file.string(), clause.target, loaded.where),
                    fmt::format("checked: {}\nthe library that loads is the venv's match for {} "
                                "first, then the system's; a process importing a module that "
                                "needs {} fails with 'undefined symbol'",
                                checked, clause.library, clause.target));
    log_line(ctx, fmt::format("verify: {} ok: {} defines it{}", clause.describe(), checked,
                              found->version.empty() ? "" : ", version " + found->version));
    return {};
}

}  // namespace

extern const Clause k_elf_symbol_clause;
const Clause k_elf_symbol_clause{
    .name = "elf_symbol",
    .parse = parse,
    .expand = expand,
    .describe = describe,
    .run = run,
    .claims = claims,
};

}  // namespace bootstrap::steps
