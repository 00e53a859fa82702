#pragma once
// One home per verify clause. Each clause lives in its own file (steps/verify_<name>.cpp) and
// hands the registry one `Clause`: its TOML keys (read into recipe::VerifyClause, its own keys
// into a recipe::ClauseFields of its own), its expansion into a ResolvedVerify, its description
// (which is also what the step key hashes of it) and its check. Adding a clause is its file plus
// one registration line in steps/verify_clauses.cpp; recipe/, engine/ and doctor/ name none.

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "recipe/clause_reader.hpp"
#include "recipe/recipe.hpp"
#include "steps/executor.hpp"
#include "steps/kind.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// A verify clause: its data and hooks. Plain function pointers: a clause has no state.
struct Clause {
    std::string_view name;  // its key, as a recipe writes it: { import = "torch" }
    /// Read the clause's keys (recipe::ClauseSyntax::parse documents it).
    bool (*parse)(recipe::ClauseReader& rd, recipe::VerifyClause& clause);
    /// Fill `out` (kind set, the rest empty) from the recipe's clause: placeholders expanded
    /// through `ctx` (a value not known yet marks `step` incomplete).
    Status (*expand)(const recipe::VerifyClause& clause, ResolvedVerify& out, ResolvedStep& step, PlanContext& ctx);
    /// "import torch version >=2.11", "file /x": shown by `plan`, logged when it runs, and the
    /// clause's input to the step key.
    std::string (*describe)(const ResolvedVerify& v);
    /// Check the clause in the venv (ctx.venv); a failure names the step and what failed.
    Status (*run)(const ResolvedVerify& v, const ResolvedStep& step, StepContext& ctx);
    /// A table naming no clause but holding another key of this one (may be null):
    /// recipe::ClauseSyntax::claims.
    bool (*claims)(recipe::ClauseReader& rd) = nullptr;
    /// Skip rule: files the clause promises (a stat each decides whether it still holds).
    std::vector<std::string> (*promised_files)(const ResolvedVerify& v) = nullptr;
    /// The plan needs the venv to exist for it (the clause asks the venv's interpreter).
    bool (*needs_venv)(const recipe::VerifyClause& clause) = nullptr;
};

/// The registered clause named `name`, or nullptr.
[[nodiscard]] const Clause* find_clause(std::string_view name);

/// The registered clause named `name`: every clause of a parsed recipe has one; an unknown name
/// is an internal error that stops the process.
[[nodiscard]] const Clause& clause_of(std::string_view name);

/// Every registered clause, in the order they are tried (recipe::ClauseTable).
[[nodiscard]] const std::vector<const Clause*>& clauses();

/// Whether any of `step`'s clauses needs the venv to exist when the plan is made.
[[nodiscard]] bool clauses_need_venv(const recipe::Step& step);

/// Files the step's clauses promise (the skip rule stats them).
[[nodiscard]] std::vector<std::string> clauses_promised_files(const ResolvedStep& step);

/// child_failure with `shown` in place of a probe's argv on the `command:` line (a probe's
/// Python source is not what an error shows).
[[nodiscard]] Error probe_failure(const ResolvedStep& step, const exec::ProcessSpec& spec, const std::string& shown,
                                  const exec::ProcessResult& result, const fs::path& log_path);

}  // namespace bootstrap::steps
