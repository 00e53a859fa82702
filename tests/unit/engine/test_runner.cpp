// The run loop (engine::run_recipe) against a fake world (fake_world.hpp): which steps run,
// what the journal keeps, and what a second run does, with no Python, installer or sleep.

#include <catch2/catch.hpp>

#include "core/interrupt.hpp"
#include "engine/run_world.hpp"
#include "engine/runner.hpp"
#include "fake_world.hpp"
#include "state/layout.hpp"

using namespace bootstrap;
using bootstrap::test::RunBench;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

// venv, two install steps, and a run step whose argv needs the venv's facts.
const std::string k_steps = R"(
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "torch"
kind = "install"
packages = ["torch==2.1.0"]
[[step]]
id = "numpy"
kind = "install"
packages = ["numpy==1.26.0"]
[[step]]
id = "stamp"
kind = "run"
argv = ["tool", "x{python.ext_suffix}"]
verify = [{ import = "numpy" }]
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

const engine::StepReport& step_of(const engine::RunReport& report, const std::string& id) {
    for (const auto& s : report.steps)
        if (s.id == id) return s;
    FAIL("no step " << id);
    return report.steps.front();
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("run of a new venv runs every step and journals what each installed") {
    RunBench b;
    auto report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"venv", "torch", "numpy", "stamp"});
    CHECK(b.world.verifies == Strings{"stamp"});
    for (const auto& s : report.steps) CHECK(s.result == engine::StepResult::ran);
    CHECK(step_of(report, "torch").reason == "first run");
    CHECK(report.seconds == Approx(2.0));  // four actions of 0.5 s on the fake clock

    auto journal = b.journal();
    REQUIRE(journal.steps.size() == 4);
    for (const auto& [id, entry] : journal.steps) {
        CHECK(entry.status == state::StepStatus::ok);
        CHECK(entry.run_id == report.run_id);
        CHECK_FALSE(entry.key.empty());
    }
    CHECK(journal.steps.at("torch").dists.count("torch") == 1);
    CHECK(journal.steps.at("numpy").dists.at("numpy").version == "1.26.0");
    // The history has the run's "after" (the venv did not exist before).
    CHECK(report.history_after.has_value());
}

TEST_CASE("run a second time runs nothing and writes nothing") {
    RunBench b;
    REQUIRE(b.run(k_steps).ok());
    const auto before = b.state_files();
    auto report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions.empty());
    CHECK(b.world.verifies.empty());
    for (const auto& s : report.steps) CHECK(s.result == engine::StepResult::skipped);
    CHECK(step_of(report, "numpy").reason == "up to date");
    CHECK_FALSE(report.history_before.has_value());
    CHECK(b.state_files() == before);
}

TEST_CASE("run after a step's packages changed runs that step and re-verifies the later ones") {
    RunBench b;
    REQUIRE(b.run(k_steps).ok());
    const auto first = b.journal();
    auto report = b.run(replaced(k_steps, "numpy==1.26.0", "numpy==1.26.1"));
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"numpy"});
    CHECK(b.world.verifies == Strings{"stamp"});
    CHECK(step_of(report, "torch").result == engine::StepResult::skipped);
    CHECK(step_of(report, "numpy").result == engine::StepResult::ran);
    CHECK_THAT(step_of(report, "numpy").reason, StartsWith("step changed") && Contains("numpy==1.26.1"));
    CHECK(step_of(report, "stamp").result == engine::StepResult::verified);
    CHECK(step_of(report, "stamp").reason == "an earlier step ran: re-verifying");

    auto journal = b.journal();
    CHECK(journal.steps.at("numpy").dists.at("numpy").version == "1.26.1");
    CHECK(journal.steps.at("numpy").key != first.steps.at("numpy").key);
    CHECK(journal.steps.at("torch").run_id == first.steps.at("torch").run_id);
    CHECK(report.history_before.has_value());
    CHECK(report.changes_summary != "no change");
}

TEST_CASE("run after the venv drifted runs the step that owns the changed package") {
    RunBench b;
    REQUIRE(b.run(k_steps).ok());
    b.world.install("numpy", "1.25.0");  // behind the journal's back
    auto report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"numpy"});
    CHECK(step_of(report, "numpy").reason == "numpy is now 1.25.0 (was 1.26.0)");
    CHECK(b.world.packages.at("numpy").version == "1.26.0");
    CHECK(b.journal().steps.at("numpy").dists.at("numpy").version == "1.26.0");

    // The same version with other files (its RECORD's digest changed): the step's record no
    // longer holds, but the venv satisfies it, so the installer is not run and the journal
    // takes the new digest.
    const auto digest = b.journal().steps.at("numpy").dists.at("numpy").record_sha256;
    b.world.install("numpy", "1.26.0", {"torch"});
    report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions.empty());
    CHECK(step_of(report, "numpy").reason == "requirements already satisfied");
    CHECK(b.journal().steps.at("numpy").dists.at("numpy").record_sha256 != digest);
}

TEST_CASE("run of a step skipped by selection reports the venv off its fixed point") {
    RunBench b;
    REQUIRE(b.run(k_steps).ok());
    b.world.install("torch", "2.0.0");
    b.options.plan.selection.skip = {"torch"};
    auto report = b.run(k_steps);
    REQUIRE_FALSE(report.ok());
    CHECK(step_of(report, "torch").result == engine::StepResult::not_selected);
    CHECK(report.error->message ==
          "the venv no longer satisfies step 'torch': torch 2.0.0 does not satisfy "
          "torch==2.1.0");
    CHECK_THAT(report.error->detail, Contains("--from torch"));
}

TEST_CASE("run interrupted journals the step and the next run resumes there") {
    RunBench b;
    b.world.scripts["numpy"].interrupt = true;
    auto report = b.run(k_steps);
    core::set_interrupt_signal(0);
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->code == ErrorCode::interrupted);
    CHECK(b.world.actions == Strings{"venv", "torch", "numpy"});
    CHECK(step_of(report, "numpy").result == engine::StepResult::interrupted);
    CHECK(step_of(report, "stamp").result == engine::StepResult::not_reached);
    CHECK(b.journal().steps.at("numpy").status == state::StepStatus::interrupted);
    // The marker stays: the next run checks the installed files before anything else.
    CHECK(fs::exists(state::Layout(b.world.venv()).changing()));

    report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"numpy", "stamp"});
    CHECK(step_of(report, "numpy").reason == "resuming: last run interrupted");
    CHECK(b.journal().steps.at("numpy").status == state::StepStatus::ok);
    CHECK_FALSE(fs::exists(state::Layout(b.world.venv()).changing()));
}

TEST_CASE("run goes on past an optional step that failed for good and skips it while its key holds") {
    RunBench b;
    const std::string steps =
        replaced(k_steps, "packages = [\"numpy==1.26.0\"]", "packages = [\"numpy==1.26.0\"]\noptional = true");
    auto& script = b.world.scripts["numpy"];
    script.fail_times = -1;
    script.error = Error{ErrorCode::step_failed, "no solution for numpy==1.26.0", ""};
    script.failure = {steps::FailureKind::permanent, "no solution to the resolution"};
    auto report = b.run(steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"venv", "torch", "numpy", "stamp"});
    CHECK(step_of(report, "numpy").result == engine::StepResult::optional_failed);
    auto entry = b.journal().steps.at("numpy");
    CHECK(entry.status == state::StepStatus::failed);
    CHECK_FALSE(entry.retry_can_help);
    CHECK(entry.failure == "no solution for numpy==1.26.0");

    report = b.run(steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions.empty());
    CHECK(step_of(report, "numpy").result == engine::StepResult::skipped);
    CHECK_THAT(step_of(report, "numpy").reason,
               StartsWith("optional step failed on") && Contains("no solution for numpy==1.26.0"));

    b.options.plan.retry_optional = true;
    script.fail_times = 0;
    report = b.run(steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"numpy"});
    CHECK(step_of(report, "numpy").result == engine::StepResult::ran);
}

TEST_CASE("run tries an optional step that failed for a transient reason again") {
    RunBench b;
    const std::string steps =
        replaced(k_steps, "packages = [\"numpy==1.26.0\"]", "packages = [\"numpy==1.26.0\"]\noptional = true");
    b.world.scripts["numpy"].fail_times = 1;
    b.world.scripts["numpy"].error = Error{ErrorCode::network, "connection reset", ""};
    REQUIRE(b.run(steps).ok());
    CHECK(b.journal().steps.at("numpy").retry_can_help);
    auto report = b.run(steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"numpy"});
    CHECK(step_of(report, "numpy").reason == "resuming: last run failed");
}

TEST_CASE("run re-plans the later steps once the venv step made the venv") {
    RunBench b;
    auto report = b.run(k_steps);
    REQUIRE(report.ok());
    // Facts at the start, after the venv step made the venv (its re-plan and its record).
    CHECK(b.world.facts_gathered >= 3);
    // The run step's key needed {python.ext_suffix}: known after the re-plan, and journaled.
    const auto journal = b.journal();
    CHECK_FALSE(journal.steps.at("stamp").key.empty());
    // The next run plans with the venv there from the start, and finds the same key.
    report = b.run(k_steps);
    CHECK(step_of(report, "stamp").result == engine::StepResult::skipped);
    CHECK(b.world.actions.empty());
}

TEST_CASE("run fails a step that undid an earlier install step's requirements") {
    RunBench b;
    const std::string steps = k_steps + R"(
[[step]]
id = "bump"
kind = "run"
argv = ["tool", "bump"]
)";
    b.world.scripts["bump"].effect = [&] { b.world.install("numpy", "2.0.0"); };
    auto report = b.run(steps);
    REQUIRE_FALSE(report.ok());
    CHECK(step_of(report, "bump").result == engine::StepResult::failed);
    CHECK(report.error->message ==
          "step 'bump' undid step 'numpy': numpy 2.0.0 does not satisfy numpy==1.26.0 (numpy 1.26.0 -> 2.0.0 when "
          "'bump' ran)");
    CHECK_THAT(report.error->detail, Contains("bootstrap run --from numpy"));
    CHECK(b.journal().steps.at("bump").status == state::StepStatus::failed);
}

TEST_CASE("run retries a transient failure with backoff on the world's clock") {
    RunBench b;
    const std::string steps =
        replaced(k_steps, "packages = [\"torch==2.1.0\"]", "packages = [\"torch==2.1.0\"]\nattempts = 4");
    b.world.scripts["torch"].fail_times = 2;
    b.world.scripts["torch"].error = Error{ErrorCode::network, "connection reset", ""};
    auto report = b.run(steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"venv", "torch", "torch", "torch", "numpy", "stamp"});
    CHECK(b.world.sleeps == std::vector<double>{2, 4});
    const auto& torch = step_of(report, "torch");
    CHECK(torch.attempts == 3);
    CHECK(torch.reason == "succeeded on attempt 3/4");
    CHECK(torch.seconds == Approx(1.5 + 6));  // three attempts and two waits, all on the fake clock
    CHECK_THAT(b.observer.messages.front(),
               Contains("step 'torch': attempt 1/4 failed (connection reset); retrying in 2"));
}

TEST_CASE("run does not retry a failure another attempt cannot change") {
    RunBench b;
    const std::string steps =
        replaced(k_steps, "packages = [\"torch==2.1.0\"]", "packages = [\"torch==2.1.0\"]\nattempts = 4");
    b.world.scripts["torch"].fail_times = -1;
    b.world.scripts["torch"].error = Error{ErrorCode::not_found, "no such file", ""};
    auto report = b.run(steps);
    REQUIRE_FALSE(report.ok());
    CHECK(b.world.actions == Strings{"venv", "torch"});
    CHECK(b.world.sleeps.empty());
    CHECK(step_of(report, "torch").result == engine::StepResult::failed);
    CHECK(step_of(report, "numpy").result == engine::StepResult::not_reached);
    CHECK(report.error->message == "no such file");
    CHECK(b.journal().steps.at("torch").status == state::StepStatus::failed);
}

TEST_CASE("run fails a step whose verify clause fails and runs it again next time") {
    RunBench b;
    b.world.scripts["stamp"].verify_fail_times = 1;
    auto report = b.run(k_steps);
    REQUIRE_FALSE(report.ok());
    CHECK(step_of(report, "stamp").result == engine::StepResult::failed);
    CHECK(step_of(report, "stamp").reason == "verify failed");
    report = b.run(k_steps);
    REQUIRE(report.ok());
    CHECK(b.world.actions == Strings{"stamp"});
    CHECK(b.world.verifies == Strings{"stamp"});
}

TEST_CASE("run world's real side scans an empty site-packages and keeps time") {
    core::TempDir dir("bs-run-world");
    engine::RealRunWorld world;
    pyenv::InterpreterFacts python;
    python.purelib = dir.path();
    python.platlib = dir.path();
    auto installed = world.scan_installed(python, false, nullptr);
    REQUIRE(installed);
    CHECK(installed->empty());
    auto facts = world.gather_facts(dir.path() / "no-venv", false);
    REQUIRE(facts);
    CHECK_FALSE(facts->python.has_value());
    const double t = world.now();
    CHECK(world.sleep(0));
    CHECK(world.now() >= t);
}
