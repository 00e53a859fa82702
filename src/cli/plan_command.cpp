#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/plan_options.hpp"
#include "cli/status.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/fixed_point.hpp"
#include "engine/install_repair.hpp"
#include "engine/plan.hpp"
#include "engine/skip_rule.hpp"
#include "manifest/package_cache.hpp"
#include "pyenv/interpreter.hpp"
#include "recipe/recipe.hpp"
#include "state/journal.hpp"
#include "state/layout.hpp"
#include "steps/kind.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct PlanCommandArgs {
    std::string recipe;
    PlanArgs plan;
    bool json = false;
    bool explain = false;
    bool check = false;
};

void print_plan(const engine::Plan& plan, const engine::Facts& facts,
                const std::vector<engine::StepDecision>& decisions, bool explain) {
    fmt::print("recipe: {} ({})\n", plan.recipe->name, plan.recipe->file.string());
    if (facts.python) fmt::print("venv: {} (exists, Python {})\n", plan.venv.string(), facts.python->version);
    else fmt::print("venv: {} (does not exist yet)\n", plan.venv.string());
    fmt::print("installer: {} ({})\n", plan.installer->name(), plan.installer->program().string());
    if (auto origin = plan.device_origin(); !origin.empty()) fmt::print("cuda archs: {}\n", origin);
    for (const auto& note : plan.notes) fmt::print("warning: {}\n", note);
    for (const auto& s : plan.steps) {
        fmt::print("\n[{}/{}] {} ({}){}\n", s.index + 1, plan.steps.size(), s.id, s.kind,
                   s.optional ? " optional" : "");
        if (s.index < decisions.size()) {
            const auto& d = decisions[s.index];
            const char* what = d.decision == engine::Decision::run            ? "would run: "
                               : d.decision == engine::Decision::verify_only  ? "would re-verify: "
                               : d.decision == engine::Decision::not_selected ? ""
                                                                              : "would skip: ";
            fmt::print("  {}{}\n", what, d.reason);
            if (explain)  // every input that changed, not only the first
                for (const auto& change : d.changes) fmt::print("    changed: {}\n", change);
        }
        const auto described = steps::describe_step(s, steps::DescribeAsk{explain, plan.venv});
        auto print_lines = [](const std::vector<std::string>& lines) {
            for (const auto& line : lines) fmt::print("  {}\n", line);
        };
        if (!s.note.empty()) fmt::print("  note: {}\n", s.note);
        print_lines(described.before_argv);
        if (!s.argv.empty()) fmt::print("  argv: {}\n", core::redact_text(core::format_argv(s.argv)));
        print_lines(described.after_argv);
        fmt::print("  cwd: {}\n", s.cwd.string());
        for (const auto& [k, v] : s.env_set)
            fmt::print("  env set: {}={}\n", k, core::shown_value(k, v, plan.recipe->env_secret));
        if (!s.env_unset.empty()) fmt::print("  env unset: {}\n", core::join(s.env_unset, " "));
        print_lines(described.after_env);
        if (s.timeout > 0) fmt::print("  timeout: {}s\n", s.timeout);
        if (s.attempts > 1) fmt::print("  attempts: {}\n", s.attempts);
        for (const auto& v : s.verify) fmt::print("  verify: {}\n", v.describe());
        fmt::print("  key: {}\n", s.key.empty() ? "known once the venv exists" : s.key);
        if (explain) {
            for (const auto& line : core::split(s.key_explain, '\n'))
                if (!line.empty()) fmt::print("    | {}\n", line);
            print_lines(described.explain);
        }
    }
}

/// What the venv holds beside the steps: an install cut short, distributions no step accounts for.
Result<PlanState> venv_state(const engine::Plan& plan, const engine::Facts& facts, const state::Journal& journal,
                             const engine::Installed& installed) {
    PlanState state;
    if (!facts.python) return state;
    if (auto marker = engine::read_changing_marker(plan.venv)) {
        state.cut_short = true;
        state.cut_short_note =
            engine::describe(*marker) + ": `run` first checks every installed distribution's files against its RECORD";
    }
    BS_TRY(state.extras, engine::unowned_extras(plan, journal, installed, facts.python->markers));
    return state;
}

/// The journal and what is installed, each read once for the decisions and the state; every
/// unchanged dist-info recalled from the snapshot's package cache (read, never written: `plan`
/// writes nothing).
Result<std::pair<state::Journal, engine::Installed>> read_venv(const engine::Plan& plan, const engine::Facts& facts) {
    auto loading = state::Journal::load_in_background(plan.venv);  // read meanwhile, on another thread
    engine::Installed installed;
    if (facts.python) {
        const auto cache = manifest::PackageCache::of_venv(plan.venv);
        BS_TRY(installed, pyenv::scan_venv_packages(*facts.python, {}, false, &cache));
    }
    BS_TRY(auto journal, loading.get());
    return std::pair{std::move(journal), std::move(installed)};
}

void print_state(const engine::Plan& plan, const PlanState& state) {
    if (state.cut_short) fmt::print("\nwarning: {}\n", state.cut_short_note);
    if (state.extras.empty()) return;
    fmt::print("\nextras: {} (no step installs {}: `run --exact` removes {}; `lock` refuses {})\n",
               engine::describe(state.extras), state.extras.size() == 1 ? "it" : "them",
               state.extras.size() == 1 ? "it" : "them", state.extras.size() == 1 ? "it" : "them");
    (void)plan;
}

int execute_plan(const PlanCommandArgs& args) {
    auto fail_with = [&](const Error& e) { return report_error(e, args.json); };
    auto loaded = steps::load_recipe(args.recipe);
    if (!loaded) return fail_with(loaded.error());
    auto planned = plan_options(args.plan, *loaded);
    if (!planned) return fail_with(planned.error());
    engine::PlanOptions options = std::move(*planned);
    options.dry_run = true;
    auto pre = engine::gather_facts({}, false);
    if (!pre) return fail_with(pre.error());
    auto venv = engine::resolve_venv_path(*loaded, options, *pre);
    if (!venv) return fail_with(venv.error());
    auto facts = engine::gather_facts(*venv, false);
    if (!facts) return fail_with(facts.error());
    auto plan = engine::make_plan(*loaded, options, *facts);
    if (!plan) return fail_with(plan.error());
    auto venv_now = read_venv(*plan, *facts);
    if (!venv_now) return fail_with(venv_now.error());
    auto& [journal, installed] = *venv_now;
    auto state = venv_state(*plan, *facts, journal, installed);
    if (!state) return fail_with(state.error());
    const auto decisions = engine::predict(*plan, *facts, std::move(journal), installed);
    if (args.json) fmt::print("{}", plan_json(*plan, *facts, decisions, *state));
    else {
        print_plan(*plan, *facts, decisions, args.explain);
        print_state(*plan, *state);
    }
    if (!args.check) return 0;
    // --check: a drift gate (CI, fleets): 1 when the run would change anything.
    const bool acts = std::any_of(decisions.begin(), decisions.end(), [](const engine::StepDecision& d) {
        return d.decision == engine::Decision::run || d.decision == engine::Decision::verify_only;
    });
    const bool removes = args.plan.exact && !state->extras.empty();
    return acts || removes || state->cut_short ? 1 : 0;
}

}  // namespace

void set_plan_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<PlanCommandArgs>();
    auto* cmd =
        app.add_subcommand("plan",
                           "Print the resolved plan (argv, cwd, env, keys) and, per step, whether `run` with the "
                           "same options would run, re-verify or skip it, and why; checks the interpreter and "
                           "the project directories the recipe names; changes nothing but caches (a directory "
                           "source's tree stamps; with --explain, torch's facts)");
    cmd->add_option("recipe", args->recipe, "Recipe file (TOML)")->required();
    add_plan_options(*cmd, args->plan);  // as `run` takes them: the plan is that run's
    cmd->add_flag("--json", args->json, "Print the plan as JSON");
    cmd->add_flag("--check", args->check,
                  "Exit 1 when the run would change anything (a step would run or re-verify, an install cut short "
                  "awaits repair, or, with --exact, extras would go), 0 when every step would skip: a drift gate "
                  "for CI and fleets");
    cmd->add_flag(
        "--explain", args->explain,
        "Print every input of each step key, each input that changed since the step last ran, and each build step's cache key (asking torch, nvcc and the compiler)");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_plan(*args); });
}

}  // namespace bootstrap::cli
