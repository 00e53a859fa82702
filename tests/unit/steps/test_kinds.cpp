#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

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

TEST_CASE("what the plan, the run and the lock ask of a step comes from its kind's hooks") {
    steps::ResolvedStep install;
    install.id = "pins";
    install.kind = "install";
    steps::InstallSpec spec;
    spec.requirements.push_back(*pyenv::Requirement::parse("rich==13.7.1"));
    spec.upgrade = true;
    spec.request.index_url = "https://user:token@mirror.example/simple";
    spec.request.extra_index_urls = {"https://extra.example/simple"};
    spec.index_urls = {"https://user:***@mirror.example/simple", "https://extra.example/simple"};
    spec.overrides = {{"cublas", "nvidia-cublas"}};
    spec.request.overrides_file = "/v/.bootstrap/overrides/pins.txt";
    install.spec = spec;

    const auto own = steps::owned_of(install);
    REQUIRE(own.requirements != nullptr);
    CHECK(own.requirements->front().normalized_name == "rich");
    CHECK(own.deliberate);
    CHECK(own.upgrade);
    const auto kept = steps::overrides_of(install);
    REQUIRE(kept.file != nullptr);
    CHECK(kept.file->value() == "/v/.bootstrap/overrides/pins.txt");
    CHECK(kept.earlier->size() == 1);
    CHECK(kept.resolves);
    CHECK(install.index_urls() == spec.index_urls);
    // Credentials stay in the configured URLs (what a fetch may need), never in the shown ones.
    CHECK(steps::configured_index_urls({install}) ==
          std::vector<std::string>{"https://user:token@mirror.example/simple", "https://extra.example/simple"});
    const auto shown = steps::describe_step(install, {});
    REQUIRE(shown.before_argv.size() == 1);
    CHECK(shown.before_argv[0] == "indexes: https://user:***@mirror.example/simple, https://extra.example/simple");
    nlohmann::json js = nlohmann::json::object();
    steps::describe_step_json(install, js);
    CHECK(js["index_urls"].size() == 2);

    // A run step owns no requirements, keeps no overrides, asks no index; it shows its guards.
    steps::ResolvedStep run;
    run.id = "helpers";
    run.kind = "run";
    run.spec = steps::RunSpec{"/v/done", {"test", "-f", "/v/done"}};
    CHECK(steps::owned_of(run).requirements == nullptr);
    CHECK(steps::overrides_of(run).file == nullptr);
    CHECK(steps::index_request_of(run) == nullptr);
    CHECK(run.index_urls().empty());
    CHECK(steps::configured_index_urls({run}).empty());
    CHECK(steps::describe_step(run, {}).after_env ==
          std::vector<std::string>{"creates: /v/done", "unless: test -f /v/done"});

    // A build step keeps overrides but its failure is a compiler's, not a resolution's; with
    // --locked it writes the lock's pins instead.
    steps::ResolvedStep build;
    build.id = "apex";
    build.kind = "build";
    steps::BuildSpec b;
    b.source_kind = steps::BuildSource::Kind::url;
    b.location = "https://example.org/apex.tar.gz";
    b.sha256 = std::string(64, 'a');
    b.home = "/h";
    b.overrides = {{"cublas", "nvidia-cublas"}};
    b.overrides_file = "/v/.bootstrap/overrides/apex.txt";
    b.locked_pins = {"torch==2.11.0"};
    build.spec = b;
    CHECK(steps::owned_of(build).requirements == nullptr);
    CHECK_FALSE(steps::overrides_of(build).resolves);
    REQUIRE(steps::overrides_of(build).locked_pins != nullptr);
    CHECK(steps::describe_step(build, {}).before_argv ==
          std::vector<std::string>{"source: archive https://example.org/apex.tar.gz (sha256 " + std::string(64, 'a') +
                                   ")"});
    const auto archive = steps::archive_of(build);
    REQUIRE(archive);
    CHECK(archive->url == b.location);
    CHECK(archive->sha256 == b.sha256);
    b.location = "<known after step 'src'>";
    build.spec = b;
    CHECK_FALSE(steps::archive_of(build));
    CHECK_FALSE(steps::archive_of(run));
}
