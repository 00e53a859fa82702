#include <catch2/catch.hpp>

#include <set>

#include "steps/kind.hpp"

using namespace bootstrap;

TEST_CASE("every step kind has one home, with its own payload") {
    std::set<size_t> specs;
    std::set<std::string> names;
    for (const steps::Kind* k : steps::kinds()) {
        CAPTURE(k->name);
        CHECK(&steps::kind_of(k->name) == k);
        CHECK(k->parse != nullptr);
        CHECK(k->expand != nullptr);
        CHECK(k->key_inputs != nullptr);
        CHECK(k->execute != nullptr);
        // A kind added later shares OtherSpec; the built-in ones each have their own.
        if (k->spec != steps::k_spec_index<steps::OtherSpec>) CHECK(specs.insert(k->spec).second);
        CHECK(names.insert(std::string(k->name)).second);
    }
    for (const char* name : {"venv", "install", "sync", "run", "check", "pybind11", "build"})
        CHECK(steps::kind_of(name).name == name);
    CHECK(specs.size() == std::variant_size_v<steps::KindSpec> - 1);
    CHECK(steps::kind_of("install").spec == steps::k_spec_index<steps::InstallSpec>);
    CHECK(steps::kind_of("build").spec == steps::k_spec_index<steps::BuildSpec>);
}

TEST_CASE("the recipe parser gets the registered kinds, names and parse functions") {
    const auto& table = steps::recipe_kinds();
    REQUIRE(table.size() == steps::kinds().size());
    for (size_t i = 0; i < table.size(); ++i) {
        CHECK(table[i].name == steps::kinds()[i]->name);
        CHECK(table[i].parse == steps::kinds()[i]->parse);
    }
}

TEST_CASE("an OtherSpec payload is read back as its own type only") {
    struct Payload : steps::KindPayload {
        int n = 7;
    };
    struct Another : steps::KindPayload {};
    steps::ResolvedStep step;
    step.spec = steps::OtherSpec{std::make_shared<Payload>()};
    REQUIRE(step.payload<Payload>() != nullptr);
    CHECK(step.payload<Payload>()->n == 7);
    CHECK(step.payload<Another>() == nullptr);
    step.spec = steps::RunSpec{};
    CHECK(step.payload<Payload>() == nullptr);
}

TEST_CASE("a step whose payload is not its kind's is refused, not run") {
    steps::ResolvedStep step;
    step.id = "x";
    step.kind = "run";
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
