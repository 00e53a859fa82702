#include <catch2/catch.hpp>

#include "engine/launch.hpp"

using namespace bootstrap;

TEST_CASE("launch's environment: the caller's, less [env] unset, inside the venv") {
    recipe::Recipe r;
    r.env_unset = {"SECRET_THING"};
    exec::EnvMap caller{{"PATH", "/usr/bin"}, {"SECRET_THING", "1"}, {"PYTHONHOME", "/x"}, {"KEEP", "yes"}};
    auto env = engine::launch_environment(r, "/v", caller);
    CHECK(env.at("PATH") == "/v/bin:/usr/bin");
    CHECK(env.at("VIRTUAL_ENV") == "/v");
    CHECK(env.at("VENV") == "/v");
    CHECK(env.at("KEEP") == "yes");
    CHECK(env.count("SECRET_THING") == 0);
    CHECK(env.count("PYTHONHOME") == 0);
    CHECK(engine::launch_environment(r, "/v", {}).at("PATH") == "/v/bin");
}

TEST_CASE("launch_command says what it could not launch") {
    auto err = engine::launch_command({"surely-not-a-program-xyz"}, {{"PATH", "/nonexistent-dir"}});
    CHECK(err.code == ErrorCode::not_found);
    CHECK(err.message == "launch: surely-not-a-program-xyz not found on PATH /nonexistent-dir");
}
