// Step kind `check`: only verify clauses (run by the engine through steps::verify).

#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

/// No keys of its own; it cannot do without a verify clause.
std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    const recipe::Value* verify = rd.get("verify");
    rd.need(verify && !(verify->is(recipe::ValueType::array) && verify->array.empty()), "verify",
            rd.label() + " (kind check) needs at least one verify clause");
    return std::make_shared<recipe::KindFields>();
}

Status expand(const recipe::Step&, ResolvedStep& out, PlanContext&, Expansion&) {
    out.spec = CheckSpec{};
    return {};
}

void key_inputs(const ResolvedStep&, core::KeyBuilder&, const ToolName&) {}

Result<Outcome> execute_step(const ResolvedStep&, StepContext&) { return Outcome::ran; }

}  // namespace

extern const Kind k_check_kind;
const Kind k_check_kind{
    .name = "check",
    .parse = parse,
    .spec = k_spec_index<CheckSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .venv_environment = true,
};

}  // namespace bootstrap::steps
