// Verify clause `file`: `{ file = "{venv.path}/lib/libx.so" }` must exist (a relative path is
// taken from the recipe's directory). The skip rule stats it too: a step whose promised file
// is gone runs again.

#include <fmt/format.h>

#include "steps/verify_clause.hpp"

namespace bootstrap::steps {

namespace {

/// The import clause's keys are named as such here, not as typos: `{ file = "x", attr = "y" }`
/// says 'attr' belongs to 'import'.
bool parse(recipe::ClauseReader& rd, recipe::VerifyClause& clause) {
    (void)rd.unknown_keys({"import", "attr", "file", "version", "preload", "equals"});
    for (const char* key : {"attr", "version", "equals", "preload"}) {
        const recipe::Value* v = rd.get(key);
        if (!v) continue;
        rd.report(v->loc, std::string_view(key) == "equals"
                              ? "'equals' needs 'import' and 'attr' in a verify clause (the value "
                                "str(module.attr) must have)"
                              : fmt::format("'{}' is valid only with 'import' in a verify clause", key));
    }
    auto target = rd.text("file");
    if (!target) return false;
    clause.target = std::move(*target);
    return true;
}

Status expand(const recipe::VerifyClause& clause, ResolvedVerify& v, ResolvedStep& step, PlanContext& ctx) {
    BS_TRY(auto target, ctx.text(clause.target, step));
    v.target = ctx.local_path(target);
    return {};
}

std::string describe(const ResolvedVerify& v) { return "file " + v.target; }

Status run(const ResolvedVerify& clause, const ResolvedStep& step, StepContext& ctx) {
    std::error_code ec;
    if (!fs::exists(clause.target, ec))
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {} does not exist", step.id, clause.target));
    log_line(ctx, "verify: " + clause.describe() + " ok");
    return {};
}

std::vector<std::string> promised_files(const ResolvedVerify& v) { return {v.target}; }

}  // namespace

extern const Clause k_file_clause;
const Clause k_file_clause{
    .name = "file",
    .parse = parse,
    .expand = expand,
    .describe = describe,
    .run = run,
    .promised_files = promised_files,
};

}  // namespace bootstrap::steps
