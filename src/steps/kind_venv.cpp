// Step kind `venv`: create the venv with the recipe's Python (or keep the one that has it).

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/interpreter.hpp"
#include "steps/kind.hpp"
#include "steps/venv_swap.hpp"

namespace bootstrap::steps {

namespace {

/// An existing directory that is not a venv (no pyvenv.cfg) and holds someone's files: turning
/// it into a venv would mix the two, so only --recreate may (it replaces them).
/// No keys of its own: the venv comes from [venv].
std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader&) {
    return std::make_shared<recipe::KindFields>();
}

Status check_foreign_directory(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx) {
    std::error_code ec;
    if (!fs::is_directory(ctx.venv, ec)) return {};
    // bootstrap's own state dir does not count: a first run that failed leaves only that.
    std::vector<std::string> names;
    fs::directory_iterator it(ctx.venv, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec))
        if (it->path().filename() != ".bootstrap") names.push_back(it->path().filename().string());
    if (ec)
        return fail(ErrorCode::io, fmt::format("{}: cannot list {}: {}", s.loc.str(),
                                               ctx.venv.string(), ec.message()));
    std::sort(names.begin(), names.end());
    if (names.empty()) return {};
    if (!ctx.recreate) {
        const size_t shown = std::min<size_t>(names.size(), 3);
        std::vector<std::string> some(names.begin(), names.begin() + static_cast<long>(shown));
        return fail(ErrorCode::usage,
                    fmt::format("{}: {} exists and is not a venv (no pyvenv.cfg), but it is not "
                                "empty: it holds {}{}",
                                s.loc.str(), ctx.venv.string(), core::join(some, ", "),
                                names.size() > shown
                                    ? fmt::format(" and {} more", names.size() - shown)
                                    : std::string()),
                    "choose another venv path, or re-run with --recreate to replace the "
                    "directory's contents with a venv (they are deleted)");
    }
    std::get<VenvSpec>(out.spec).recreate = true;
    out.note = "not a venv: its contents are replaced by a new venv (--recreate)";
    return {};
}

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion&) {
    const std::string& want = ctx.recipe->venv.python;
    out.spec = VenvSpec{.recreate = false, .python = want};
    auto cfg = pyenv::read_pyvenv_cfg(ctx.venv);
    if (!cfg) BS_CHECK(check_foreign_directory(s, out, ctx));
    if (cfg) {
        std::string have = pyenv::venv_python_version(*cfg);
        if (pyenv::python_version_matches(have, want) && !ctx.recreate) {
            // The argv stays in the plan (and the key) whether or not it will run, so the
            // key does not depend on the venv existing yet.
            out.kept = true;
            out.note = fmt::format("venv exists (Python {}): kept", have);
        } else if (!ctx.recreate) {
            return fail(ErrorCode::usage,
                        fmt::format("{}: the venv {} has Python {}, but the recipe asks for {}",
                                    s.loc.str(), ctx.venv.string(), have, want),
                        "re-run with --recreate to replace it (its packages are removed; "
                        "bootstrap's journal and logs are kept)");
        } else {
            std::get<VenvSpec>(out.spec).recreate = true;
            out.note = fmt::format("venv has Python {}: recreated with {}", have, want);
        }
    }
    out.argv = ctx.installer->create_venv(ctx.venv, want).argv;
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key) {
    key.add("python", std::get<VenvSpec>(step.spec).python);
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    BS_TRY(bool restored, restore_unfinished_recreate(ctx.venv));
    if (restored) log_line(ctx, "restored the venv whose recreation an earlier run did not finish");
    if (step.kept) return Outcome::kept;
    if (std::get<VenvSpec>(step.spec).recreate)
        BS_CHECK(recreate_venv(ctx.venv, [&] { return run_child(step, ctx, step.argv); }));
    else
        BS_CHECK(run_child(step, ctx, step.argv));
    return Outcome::ran;
}

}  // namespace

extern const Kind k_venv_kind;
const Kind k_venv_kind{
    .name = "venv",
    .parse = parse,
    .spec = k_spec_index<VenvSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .runs_installer = true,
    .makes_venv = true,
};

}  // namespace bootstrap::steps
