#include <catch2/catch.hpp>

#include "exec/environment.hpp"

using namespace bootstrap;

TEST_CASE("launch's environment: the caller's, less [env] unset, inside the venv") {
    exec::EnvMap caller{{"PATH", "/usr/bin"}, {"SECRET_THING", "1"}, {"PYTHONHOME", "/x"}, {"KEEP", "yes"}};
    auto env = exec::launch_environment(caller, "/v", {"SECRET_THING"});
    CHECK(env.at("PATH") == "/v/bin:/usr/bin");
    CHECK(env.at("VIRTUAL_ENV") == "/v");
    CHECK(env.at("VENV") == "/v");
    CHECK(env.at("KEEP") == "yes");
    CHECK(env.count("SECRET_THING") == 0);
    CHECK(env.count("PYTHONHOME") == 0);
    CHECK(exec::launch_environment({}, "/v", {}).at("PATH") == "/v/bin");
}
