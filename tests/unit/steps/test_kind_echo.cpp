#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "steps/kind.hpp"

using namespace bootstrap;

namespace {

/// A PlanContext whose values are the recipe text itself.
struct LiteralPlan final : steps::PlanContext {
    Result<std::string> text(const recipe::Text& t, steps::ResolvedStep&) override { return t.value; }
    std::string local_path(const std::string& raw) const override { return raw; }
    std::optional<steps::LockedInstall> locked(const recipe::Step&) override { return std::nullopt; }
    void add_note(std::string) override {}
};

}  // namespace

TEST_CASE("the example echo kind: parsed, expanded, keyed and run from its one file") {
    auto r = recipe::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"/v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"hello\"\nkind = \"echo\"\nargv = [\"hello\", \"world\"]\n",
        "t.toml");
    REQUIRE(r);
    const auto& s = r->steps.at(0);
    CHECK(s.kind == recipe::StepKind::echo);
    const auto& kind = steps::kind_of(s.kind);
    REQUIRE(kind.kind == recipe::StepKind::echo);

    LiteralPlan plan;
    steps::ResolvedStep step;
    step.id = s.id;
    step.kind = s.kind;
    steps::Expansion ex;
    REQUIRE(kind.expand(s, step, plan, ex));
    core::KeyBuilder key("test");
    kind.key_inputs(step, key);
    CHECK(key.explain().find("echo: hello world\n") != std::string::npos);

    core::TempDir dir("bs-echo");
    steps::StepContext ctx;
    ctx.log_path = dir.path() / "01-hello.log";
    auto outcome = steps::execute(step, ctx);
    REQUIRE(outcome);
    CHECK(*outcome == steps::Outcome::ran);
    CHECK(ctx.note == "echoed");
    CHECK(*core::read_file(ctx.log_path) == "hello world\n");
}
