#include <catch2/catch.hpp>

#include <set>

#include "steps/kind.hpp"

using namespace bootstrap;

TEST_CASE("every step kind has one home, with its own payload") {
    std::set<size_t> specs;
    for (auto kind : {recipe::StepKind::venv, recipe::StepKind::install, recipe::StepKind::sync,
                      recipe::StepKind::run, recipe::StepKind::check, recipe::StepKind::pybind11,
                      recipe::StepKind::build}) {
        CAPTURE(recipe::to_string(kind));
        const auto& k = steps::kind_of(kind);
        CHECK(k.kind == kind);
        CHECK(k.expand != nullptr);
        CHECK(k.key_inputs != nullptr);
        CHECK(k.execute != nullptr);
        specs.insert(k.spec);
    }
    CHECK(specs.size() == std::variant_size_v<steps::KindSpec>);
    CHECK(steps::kind_of(recipe::StepKind::install).spec == steps::k_spec_index<steps::InstallSpec>);
    CHECK(steps::kind_of(recipe::StepKind::build).spec == steps::k_spec_index<steps::BuildSpec>);
}

TEST_CASE("a step whose payload is not its kind's is refused, not run") {
    steps::ResolvedStep step;
    step.id = "x";
    step.kind = recipe::StepKind::run;
    step.spec = steps::InstallSpec{};
    step.argv = {"/bin/true"};
    steps::StepContext ctx;
    bool ran = false;
    ctx.run = [&](const exec::ProcessSpec&) -> Result<exec::ProcessResult> {
        ran = true;
        exec::ProcessResult result;
        result.exit_code = 0;
        return result;
    };
    auto r = steps::execute(step, ctx);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::internal);
    CHECK_FALSE(ran);

    step.spec = steps::RunSpec{};
    auto ok = steps::execute(step, ctx);
    REQUIRE(ok);
    CHECK(*ok == steps::Outcome::ran);
    CHECK(ran);
}
