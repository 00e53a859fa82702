// Step kind `check`: only verify clauses (run by the engine through steps::verify).

#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

Status expand(const recipe::Step&, ResolvedStep& out, PlanContext&, Expansion&) {
    out.spec = CheckSpec{};
    return {};
}

void key_inputs(const ResolvedStep&, core::KeyBuilder&) {}

Result<Outcome> execute_step(const ResolvedStep&, StepContext&) { return Outcome::ran; }

}  // namespace

extern const Kind k_check_kind;
const Kind k_check_kind{
    .kind = recipe::StepKind::check,
    .spec = k_spec_index<CheckSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .venv_environment = true,
};

}  // namespace bootstrap::steps
