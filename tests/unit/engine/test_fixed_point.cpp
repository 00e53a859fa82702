#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include "core/fs.hpp"
#include "engine/fixed_point.hpp"
#include "pyenv/requirement.hpp"
#include "recipe/recipe.hpp"
#include "state/journal.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

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

    auto one = engine::fixed_point_error({{&cublas, "nvidia-cublas 13.1.0.3 does not satisfy nvidia-cublas>=13.4.1.1"}},
                                         "/r/recipe.toml");
    REQUIRE(one);
    CHECK(one->code == ErrorCode::step_failed);
    CHECK(
        one->message ==
        "the venv no longer satisfies step 'cublas': nvidia-cublas 13.1.0.3 does not satisfy nvidia-cublas>=13.4.1.1");
    CHECK(one->detail.find("bootstrap run /r/recipe.toml --from cublas") != std::string::npos);

    auto two = engine::fixed_point_error({{&cublas, "a"}, {&nvrtc, "b"}}, "/r/recipe.toml");
    REQUIRE(two);
    CHECK(two->message == "the venv no longer satisfies 2 steps, the first 'cublas'");
    CHECK(two->detail.find("step 'cublas': a\nstep 'nvrtc': b\n") != std::string::npos);
}

TEST_CASE("a run records the recipe's deliberate overrides once, and doctor reads them back") {
    core::TempDir dir("declared");
    recipe::Recipe recipe;
    recipe.file = dir.path() / "r.toml";
    recipe.source_digest = std::string(64, 'a');
    recipe::Step cublas_source;
    cublas_source.id = "cublas";
    cublas_source.allow_conflicts = {"Demo_Torch", "cuda-toolkit"};
    auto cublas = install_step("cublas", {});
    cublas.source = &cublas_source;
    auto req = pyenv::Requirement::parse("Nvidia-CuBLAS>=13.4.1.1");
    REQUIRE(req);
    std::get<steps::InstallSpec>(cublas.spec).requirements.push_back(*req);
    recipe::Step plain_source;
    plain_source.id = "torch";
    auto torch = install_step("torch", {});
    torch.source = &plain_source;
    engine::Plan plan;
    plan.recipe = &recipe;
    plan.venv = dir.path() / "venv";
    plan.steps = {torch, cublas};

    auto declared = engine::declared_overrides(plan);
    CHECK(declared.recipe_file == recipe.file);
    REQUIRE(declared.overrides.size() == 2);
    CHECK(declared.overrides[0] == engine::DeclaredOverride{"cublas", "demo-torch", "nvidia-cublas"});
    CHECK(declared.overrides[1] == engine::DeclaredOverride{"cublas", "cuda-toolkit", "nvidia-cublas"});

    // A venv without the record (an older bootstrap's): nothing, not an error.
    auto none = engine::read_declared_overrides(plan.venv);
    REQUIRE(none);
    CHECK_FALSE(*none);

    REQUIRE(engine::record_declared_overrides(plan));
    const auto path = engine::declared_overrides_path(plan.venv);
    CHECK(path == plan.venv / ".bootstrap" / "declared-overrides.txt");
    auto text = core::read_file(path);
    REQUIRE(text);
    CHECK(text->find("override cublas demo-torch nvidia-cublas\n") != std::string::npos);
    auto read = engine::read_declared_overrides(plan.venv);
    REQUIRE(read);
    REQUIRE(*read);
    CHECK((*read)->recipe_file == recipe.file);
    CHECK((*read)->recipe_digest == recipe.source_digest);
    CHECK((*read)->overrides == declared.overrides);

    // The same plan again (a no-op run) writes nothing.
    const auto written = fs::last_write_time(path);
    fs::last_write_time(path, written - std::chrono::hours(1));
    REQUIRE(engine::record_declared_overrides(plan));
    CHECK(fs::last_write_time(path) == written - std::chrono::hours(1));

    // A recipe without allow_conflicts replaces the record: it declares none.
    cublas_source.allow_conflicts.clear();
    REQUIRE(engine::record_declared_overrides(plan));
    read = engine::read_declared_overrides(plan.venv);
    REQUIRE(read);
    REQUIRE(*read);
    CHECK((*read)->overrides.empty());

    REQUIRE(core::write_file_atomic(path, "recipe x /r.toml\noverride cublas torch\n"));
    auto bad = engine::read_declared_overrides(plan.venv);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find(path.string() + ":2: malformed line 'override cublas torch'") == 0);
}

namespace {

/// An install step `id` (plan index `index`) asking for `requirements`, written at recipe lines
/// 10 * (index + 1) and on.
steps::ResolvedStep asking(const std::string& id, size_t index, const std::vector<std::string>& requirements,
                           recipe::Step& source, bool upgrade = false) {
    auto step = install_step(id, {});
    step.index = index;
    source.id = id;
    source.loc = {"/r/recipe.toml", static_cast<int>(10 * (index + 1)), 1};
    auto& spec = std::get<steps::InstallSpec>(step.spec);
    spec.upgrade = upgrade;
    for (size_t i = 0; i < requirements.size(); ++i) {
        auto req = pyenv::Requirement::parse(requirements[i]);
        REQUIRE(req);
        spec.requirements.push_back(*req);
        source.packages.push_back(
            {requirements[i], {"/r/recipe.toml", static_cast<int>(10 * (index + 1) + i + 1), 12}});
    }
    step.source = &source;
    return step;
}

}  // namespace

TEST_CASE("pins two install steps disagree on are errors at the later one's line, unless it overrides") {
    recipe::Step a, b, c;
    engine::Plan plan;
    plan.steps.push_back(asking("first", 0, {"numpy==2.2.0", "rich>=13"}, a));
    plan.steps.push_back(asking("second", 1, {"rich<14", "numpy==2.1.3"}, b));
    plan.steps.push_back(asking("third", 2, {"numpy>=2.0", "torch; sys_platform == 'darwin'"}, c));
    std::vector<std::string> notes;
    auto conflicts = engine::pin_conflicts(plan, nullptr, notes);
    REQUIRE(conflicts.size() == 1);  // numpy==2.1.3 vs ==2.2.0 (third's >=2.0 agrees with both)
    CHECK(conflicts[0].code == ErrorCode::invalid_recipe);
    CHECK(conflicts[0].message ==
          "/r/recipe.toml:22:12: step 'second' asks for numpy==2.1.3, but step 'first' (/r/recipe.toml:11:12) asks "
          "for numpy==2.2.0: no version is both, and the later step would undo the earlier one on every run");
    CHECK(conflicts[0].detail.find("set `upgrade = true` on step 'second'") != std::string::npos);
    CHECK(notes.empty());

    // A step in between that overrides the name on purpose settled the earlier pin.
    recipe::Step p1, p2, p3;
    engine::Plan settled;
    settled.steps.push_back(asking("pin", 0, {"numpy==1.0"}, p1));
    settled.steps.push_back(asking("up", 1, {"numpy"}, p2, /*upgrade=*/true));
    settled.steps.push_back(asking("again", 2, {"numpy==2.0"}, p3));
    notes.clear();
    CHECK(engine::pin_conflicts(settled, nullptr, notes).empty());
    CHECK(notes.empty());

    // Ranges that meet are no conflict; an exact pin outside a range is.
    recipe::Step d, e;
    engine::Plan ranges;
    ranges.steps.push_back(asking("x", 0, {"rich>=13,<15"}, d));
    ranges.steps.push_back(asking("y", 1, {"rich==15.0.0"}, e, /*upgrade=*/true));
    notes.clear();
    CHECK(engine::pin_conflicts(ranges, nullptr, notes).empty());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] ==
          "step 'x' asks for rich<15,>=13 and step 'y' for rich==15.0.0: the later one wins (upgrade = true), and "
          "step 'x' is held to the rest of its requirements");
}

TEST_CASE("extras are what no step owns and no install step's requirements bring in") {
    core::TempDir tmp("bs-extras");
    auto at = [&](const std::string& name, const std::string& version, const std::string& requires_dist = "") {
        auto d = dist(name, version);
        d.dist_info_path = (tmp.path() / (name + "-" + version + ".dist-info")).native();
        REQUIRE(core::write_file_atomic(
            d.dist_info() / "METADATA",
            "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + requires_dist + "\n"));
        return d;
    };
    recipe::Step a;
    engine::Plan plan;
    plan.steps.push_back(asking("utils", 0, {"demo-utils"}, a));
    state::Journal journal;
    journal.steps["utils"].dists["built-wheel"] = {};
    journal.steps["removed-step"].dists["left-behind"] = {};
    engine::Installed installed{{"demo-utils", at("demo-utils", "1.0", "Requires-Dist: demo-core>=1\n")},
                                {"demo-core", at("demo-core", "2.0")},
                                {"built-wheel", at("built-wheel", "0.1")},
                                {"tqdm", at("tqdm", "4.67.1")},
                                {"left-behind", at("left-behind", "3")},
                                {"pip", at("pip", "25.0")}};
    auto extras = engine::unowned_extras(plan, journal, installed, pyenv::MarkerEnv{});
    REQUIRE(extras);
    CHECK(engine::describe(*extras) == "left-behind 3, tqdm 4.67.1");
}
