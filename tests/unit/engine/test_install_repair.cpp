// The `changing` marker's kept RECORDs: every distribution's, or only the names a change can
// touch (a rollback's exact pins and removals).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "core/fs.hpp"
#include "engine/install_repair.hpp"
#include "state/layout.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct Venv {
    core::TempDir dir{"bs-install-repair"};
    fs::path venv = dir.path() / "venv";
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    pyenv::InterpreterFacts facts;

    Venv() {
        facts.purelib = site;
        facts.platlib = site;
        for (const char* d : {"demo_core-1.0.0.dist-info", "Demo.Utils-2.0.dist-info", "other-3.0.dist-info"}) {
            fs::create_directories(site / d);
            std::ofstream(site / d / "RECORD") << d << "/RECORD,,\n";
        }
    }
    [[nodiscard]] fs::path kept() const { return state::Layout(venv).changing_records() / "0"; }
};

}  // namespace

TEST_CASE("install_repair: mark_changing keeps every RECORD, and clear_changing drops them", "[engine]") {
    Venv v;
    REQUIRE(engine::mark_changing(v.venv, {"install", "run-1", "2026-12-03T00:00:00Z"}, &v.facts));
    CHECK(fs::exists(v.kept() / "demo_core-1.0.0.dist-info"));
    CHECK(fs::exists(v.kept() / "Demo.Utils-2.0.dist-info"));
    CHECK(fs::exists(v.kept() / "other-3.0.dist-info"));
    auto marker = engine::read_changing_marker(v.venv);
    REQUIRE(marker);
    CHECK(marker->step == "install");
    CHECK(marker->run_id == "run-1");
    REQUIRE(engine::clear_changing(v.venv));
    CHECK_FALSE(engine::read_changing_marker(v.venv));
    CHECK_FALSE(fs::exists(state::Layout(v.venv).changing_records()));
}

TEST_CASE("install_repair: mark_changing with names keeps only theirs, matched by normalised name", "[engine]") {
    Venv v;
    REQUIRE(engine::mark_changing(v.venv, {"", "run-2", ""}, &v.facts, {"demo-core", "demo-utils"}));
    CHECK(fs::exists(v.kept() / "demo_core-1.0.0.dist-info"));
    CHECK(fs::exists(v.kept() / "Demo.Utils-2.0.dist-info"));
    CHECK_FALSE(fs::exists(v.kept() / "other-3.0.dist-info"));
    // A later marker starts afresh: what an earlier one kept does not linger.
    REQUIRE(engine::mark_changing(v.venv, {"", "run-3", ""}, &v.facts, {"other"}));
    CHECK_FALSE(fs::exists(v.kept() / "demo_core-1.0.0.dist-info"));
    CHECK(fs::exists(v.kept() / "other-3.0.dist-info"));
}
