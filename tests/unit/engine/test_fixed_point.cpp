#include <catch2/catch.hpp>

#include "engine/fixed_point.hpp"

using namespace bootstrap;

namespace {

steps::ResolvedStep install_step(const std::string& id, std::vector<std::pair<std::string, std::string>> overrides) {
    steps::ResolvedStep step;
    step.id = id;
    step.kind = "install";
    steps::InstallSpec spec;
    spec.overrides = std::move(overrides);
    step.spec = std::move(spec);
    return step;
}

pyenv::Distribution dist(const std::string& name, const std::string& version) {
    pyenv::Distribution d;
    d.name = name;
    d.normalized_name = name;
    d.version = version;
    return d;
}

}  // namespace

TEST_CASE("the overrides file pins what earlier steps chose, as installed now") {
    auto step = install_step("nvrx", {{"cublas", "nvidia-cublas"}, {"cublas", "not-installed"}});
    engine::Installed installed{{"nvidia-cublas", dist("nvidia-cublas", "13.10.0.20")}};
    const std::string text = engine::overrides_text(step, installed);
    CHECK(text.find("before step 'nvrx' runs") != std::string::npos);
    CHECK(text.find("# step 'cublas'\nnvidia-cublas==13.10.0.20\n") != std::string::npos);
    CHECK(text.find("not-installed") == std::string::npos);
}

TEST_CASE("the end-of-run error names every unsatisfied step and the run that fixes them") {
    auto cublas = install_step("cublas", {});
    auto nvrtc = install_step("nvrtc", {});
    CHECK_FALSE(engine::fixed_point_error({}, "/r/recipe.toml"));

    auto one = engine::fixed_point_error(
        {{&cublas, "nvidia-cublas 13.1.0.3 does not satisfy nvidia-cublas>=13.4.1.1"}}, "/r/recipe.toml");
    REQUIRE(one);
    CHECK(one->code == ErrorCode::step_failed);
    CHECK(one->message ==
          "the venv no longer satisfies step 'cublas': nvidia-cublas 13.1.0.3 does not satisfy nvidia-cublas>=13.4.1.1");
    CHECK(one->detail.find("bootstrap run /r/recipe.toml --from cublas") != std::string::npos);

    auto two = engine::fixed_point_error({{&cublas, "a"}, {&nvrtc, "b"}}, "/r/recipe.toml");
    REQUIRE(two);
    CHECK(two->message == "the venv no longer satisfies 2 steps, the first 'cublas'");
    CHECK(two->detail.find("step 'cublas': a\nstep 'nvrtc': b\n") != std::string::npos);
}
