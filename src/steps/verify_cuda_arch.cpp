// Verify clause `cuda_arch`: `{ cuda_arch = "9.0", module = "te" }` or `{ cuda_arch = "9.0",
// path = "lib/x.so" }`: the library (a module's file, located without importing it, or a path
// under the venv) carries code for the arch (inspect/fatbin.hpp).

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "inspect/fatbin.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::steps {

namespace {

// The lines the find-spec probe prints for us.
constexpr std::string_view k_verify_prefix = "bootstrap-verify: ";
constexpr std::string_view k_origin_prefix = "bootstrap-verify-origin: ";

/// The rest of `line` after `prefix`, or nullopt when it does not start with it.
std::optional<std::string> after_prefix(const std::string& line, std::string_view prefix) {
    if (!core::starts_with(line, prefix)) return std::nullopt;
    return line.substr(prefix.size());
}

bool parse(recipe::ClauseReader& rd, recipe::VerifyClause& clause) {
    if (const recipe::Value* version = rd.get("version"))
        rd.report(version->loc, "'version' is valid only with 'import' in a verify clause");
    auto suggested = rd.unknown_keys({"cuda_arch", "module", "path", "version"});
    const recipe::Value* module = rd.get("module");
    const recipe::Value* path = rd.get("path");
    if (!module && !path) {
        if (std::find(suggested.begin(), suggested.end(), "module") != suggested.end() ||
            std::find(suggested.begin(), suggested.end(), "path") != suggested.end())
            return false;
        rd.report(clause.loc,
                  "a 'cuda_arch' verify clause needs 'module' or 'path' (the library "
                  "to inspect)");
        return false;
    }
    if (module && path) {
        rd.report(clause.loc, "a 'cuda_arch' verify clause takes 'module' or 'path', not both");
        return false;
    }
    auto arch = rd.text("cuda_arch");
    auto library = rd.text(module ? "module" : "path");
    if (!arch || !library) return false;
    clause.target = std::move(*arch);
    clause.library = std::move(*library);
    clause.library_is_module = module != nullptr;
    return true;
}

Status expand(const recipe::VerifyClause& clause, ResolvedVerify& v, ResolvedStep& step, PlanContext& ctx) {
    BS_TRY(v.target, ctx.text(clause.target, step));
    if (!clause.library) return {};
    BS_TRY(v.library, ctx.text(*clause.library, step));
    v.library_is_module = clause.library_is_module;
    // A library path is taken from the venv (lib/python3.12/site-packages/...).
    if (!v.library_is_module && !v.library.empty() && v.library.front() != '<' && fs::path(v.library).is_relative())
        v.library = (ctx.venv / v.library).lexically_normal().string();
    return {};
}

std::string describe(const ResolvedVerify& v) {
    return "cuda_arch " + v.target + " in " + (v.library_is_module ? "module " : "") + v.library;
}

// Where a module's file is, without importing it (a CUDA extension may not import on a host
// without a GPU, but its library can still be inspected).
const char* k_find_spec_probe = R"PY(
import importlib.util, sys
spec = importlib.util.find_spec(sys.argv[1])
if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
    print("bootstrap-verify: module %s has no file in this venv" % sys.argv[1])
    sys.exit(3)
print("bootstrap-verify-origin: " + spec.origin)
)PY";

/// The file the clause inspects: the module's origin (asked of the venv's python in its own
/// interpreter) or the clause's path.
Result<fs::path> cuda_library(const ResolvedStep& step, StepContext& ctx, const ResolvedVerify& clause) {
    if (!clause.library_is_module) return fs::path(clause.library);
    auto spec =
        child_spec(step, ctx, {(ctx.venv / "bin" / "python").string(), "-c", k_find_spec_probe, clause.library});
    spec.capture = true;
    spec.cwd = "/";
    if (step.timeout <= 0) spec.timeout = std::chrono::minutes(2);
    BS_TRY(auto result, ctx.run(spec));
    std::string origin, why;
    for (const auto& line : core::split(result.output, '\n')) {
        if (auto rest = after_prefix(line, k_origin_prefix)) origin = *rest;
        if (auto rest = after_prefix(line, k_verify_prefix)) why = *rest;
    }
    if (result.interrupted || (!result.ok() && why.empty()))
        return tl::unexpected(probe_failure(
            step, spec, fmt::format("{} -c <find-spec probe>: locate module {}", spec.argv[0], clause.library), result,
            ctx.log_path));
    if (!result.ok() || origin.empty())
        return fail(ErrorCode::step_failed, fmt::format("step '{}': verify failed: {}", step.id,
                                                        why.empty() ? "cannot locate module " + clause.library : why));
    return fs::path(origin);
}

Status run(const ResolvedVerify& clause, const ResolvedStep& step, StepContext& ctx) {
    BS_TRY(fs::path file, cuda_library(step, ctx, clause));
    auto contents = inspect::read_cuda_contents(file);
    if (!contents)
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {}", step.id, contents.error().message),
                    contents.error().detail);
    std::string what =
        clause.library_is_module ? fmt::format("module {} ({})", clause.library, file.string()) : file.string();
    auto ok = inspect::check_cuda_arch(contents->entries, clause.target, what);
    if (!ok)
        return fail(ok.error().code == ErrorCode::usage ? ErrorCode::usage : ErrorCode::step_failed,
                    fmt::format("step '{}': verify failed: {}", step.id, ok.error().message));
    log_line(ctx, fmt::format("verify: {} ok ({} carries {})", clause.describe(), file.string(),
                              inspect::summarize(contents->entries)));
    return {};
}

/// A module is located by the venv's interpreter.
bool needs_venv(const recipe::VerifyClause& clause) { return clause.library_is_module; }

}  // namespace

extern const Clause k_cuda_arch_clause;
const Clause k_cuda_arch_clause{
    .name = "cuda_arch",
    .parse = parse,
    .expand = expand,
    .describe = describe,
    .run = run,
    .needs_venv = needs_venv,
};

}  // namespace bootstrap::steps
