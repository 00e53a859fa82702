// Step kind `run`: a command in the venv's environment, idempotent through `creates` (a path
// that says it is done) and `unless` (a command that says it is done).

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

struct RunFields : recipe::KindFields {
    std::vector<recipe::Text> argv;
    std::optional<recipe::Text> cwd;
    std::optional<recipe::Text> creates;  // skip when this path exists
    std::vector<recipe::Text> unless;     // skip when this argv exits 0
};

std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    auto f = std::make_shared<RunFields>();
    f->argv = rd.nonempty_texts("argv");
    rd.require("argv");
    f->cwd = rd.text("cwd");
    f->creates = rd.text("creates");
    f->unless = rd.nonempty_texts("unless");
    return f;
}

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion&) {
    const auto& f = *s.fields_as<RunFields>();
    RunSpec spec;
    BS_TRY(out.argv, ctx.texts(f.argv, out));
    if (f.cwd) {
        BS_TRY(auto cwd, ctx.text(*f.cwd, out));
        out.cwd = ctx.local_path(cwd);
        add_local_input(out, out.cwd.string(), true, "working directory", f.cwd->loc);
    }
    if (f.creates) {
        BS_TRY(auto c, ctx.text(*f.creates, out));
        spec.creates = ctx.local_path(c);
    }
    BS_TRY(spec.unless, ctx.texts(f.unless, out));
    out.spec = std::move(spec);
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key, const ToolName&) {
    const auto& spec = std::get<RunSpec>(step.spec);
    key.add("creates", spec.creates);
    key.add("unless", spec.unless);
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    const auto& spec = std::get<RunSpec>(step.spec);
    std::error_code ec;
    if (!spec.creates.empty() && fs::exists(spec.creates, ec)) {
        log_line(ctx, fmt::format("skipped: {} exists", spec.creates));
        ctx.note = "creates: " + spec.creates + " exists";
        return Outcome::skipped_creates;
    }
    if (!spec.unless.empty()) {
        auto child = child_spec(step, ctx, spec.unless);
        log_line(ctx, "$ " + core::redact_text(core::format_argv(child.argv)) + "   # unless");
        BS_TRY(auto result, ctx.run(child));
        if (result.interrupted) return tl::unexpected(child_failure(step, child, result, ctx.log_path));
        if (result.ok()) {
            ctx.note = "unless: command succeeded";
            return Outcome::skipped_unless;
        }
    }
    BS_CHECK(run_child(step, ctx, step.argv));
    return Outcome::ran;
}

std::vector<std::string> promised_files(const ResolvedStep& step) {
    const auto& spec = std::get<RunSpec>(step.spec);
    if (spec.creates.empty()) return {};
    return {spec.creates};
}

std::vector<std::string>* other_argv(ResolvedStep& step) { return &std::get<RunSpec>(step.spec).unless; }

void describe(const ResolvedStep& step, const DescribeAsk& /*ask*/, Description& out) {
    const auto& spec = std::get<RunSpec>(step.spec);
    if (!spec.creates.empty()) out.after_env.push_back("creates: " + spec.creates);
    if (!spec.unless.empty()) out.after_env.push_back("unless: " + core::redact_text(core::format_argv(spec.unless)));
}

void describe_json(const ResolvedStep& step, nlohmann::json& out) {
    const auto& spec = std::get<RunSpec>(step.spec);
    if (!spec.creates.empty()) out["creates"] = spec.creates;
    if (!spec.unless.empty()) {
        std::vector<std::string> unless;
        for (const auto& a : spec.unless) unless.push_back(core::redact_text(a));
        out["unless"] = unless;
    }
}

}  // namespace

extern const Kind k_run_kind;
const Kind k_run_kind{
    .name = "run",
    .parse = parse,
    .spec = k_spec_index<RunSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .promised_files = promised_files,
    .describe = describe,
    .describe_json = describe_json,
    .other_argv = other_argv,
    .venv_environment = true,
};

}  // namespace bootstrap::steps
