// Step kind `echo` (an example): writes its argv words, expanded, to the step log.

#include "core/strings.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion&) {
    BS_TRY(auto words, ctx.texts(s.argv, out));
    out.spec = EchoSpec{core::join(words, " ")};
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key) {
    key.add("echo", std::get<EchoSpec>(step.spec).line);
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    log_line(ctx, std::get<EchoSpec>(step.spec).line);
    ctx.note = "echoed";
    return Outcome::ran;
}

}  // namespace

extern const Kind k_echo_kind;
const Kind k_echo_kind{
    .kind = recipe::StepKind::echo,
    .spec = k_spec_index<EchoSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
};

}  // namespace bootstrap::steps
