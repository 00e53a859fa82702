#include <catch2/catch.hpp>

#include <cstdlib>

#include "exec/environment.hpp"

using bootstrap::exec::compose_environment;
using bootstrap::exec::current_environment;
using bootstrap::exec::EnvMap;
using bootstrap::exec::is_pass_through;

TEST_CASE("is_pass_through allows the documented names and prefixes") {
    for (const char* name : {"PATH",
                             "HOME",
                             "USER",
                             "LOGNAME",
                             "SHELL",
                             "LANG",
                             "LANGUAGE",
                             "LC_ALL",
                             "LC_CTYPE",
                             "TZ",
                             "TMPDIR",
                             "TERM",
                             "NO_COLOR",
                             "http_proxy",
                             "HTTPS_PROXY",
                             "no_proxy",
                             "ALL_PROXY",
                             "SSL_CERT_FILE",
                             "SSL_CERT_DIR",
                             "REQUESTS_CA_BUNDLE",
                             "CURL_CA_BUNDLE",
                             "PIP_INDEX_URL",
                             "UV_CACHE_DIR",
                             "CUDA_HOME",
                             "NVIDIA_VISIBLE_DEVICES",
                             "NCCL_DEBUG",
                             "LD_LIBRARY_PATH",
                             "CC",
                             "CXX",
                             "CFLAGS",
                             "CXXFLAGS",
                             "LDFLAGS",
                             "CPATH",
                             "LIBRARY_PATH",
                             "PKG_CONFIG_PATH",
                             "XDG_CACHE_HOME",
                             "XDG_CONFIG_HOME",
                             "XDG_DATA_HOME",
                             "SOURCE_DATE_EPOCH",
                             "BOOTSTRAP_JOBS"}) {
        INFO(name);
        CHECK(is_pass_through(name));
    }
}

TEST_CASE("is_pass_through rejects variables that redirect installers") {
    for (const char* name : {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
                             "LD_PRELOAD", "path", "LC_", "UV_", "PATHX", "XPATH", "SSH_AUTH_SOCK", "OLDPWD", ""}) {
        INFO(name);
        CHECK_FALSE(is_pass_through(name));
    }
}

TEST_CASE("compose_environment: allowlisted base, minus unset, plus set") {
    EnvMap base{{"PATH", "/usr/bin"},  {"HOME", "/home/u"},    {"VIRTUAL_ENV", "/venv"},  {"PYTHONPATH", "/x"},
                {"LC_ALL", "C.UTF-8"}, {"UV_CACHE_DIR", "/c"}, {"SSH_AUTH_SOCK", "/sock"}};
    SECTION("only the allowlist survives") {
        auto env = compose_environment(base, {}, {});
        CHECK(env == EnvMap{{"PATH", "/usr/bin"}, {"HOME", "/home/u"}, {"LC_ALL", "C.UTF-8"}, {"UV_CACHE_DIR", "/c"}});
    }
    SECTION("unset removes an allowlisted variable") {
        auto env = compose_environment(base, {}, {"UV_CACHE_DIR", "NOT_THERE"});
        CHECK(env.count("UV_CACHE_DIR") == 0);
        CHECK(env.size() == 3);
    }
    SECTION("set adds even non-allowlisted names and overrides the base") {
        auto env = compose_environment(base, {{"VIRTUAL_ENV", "/mine"}, {"PATH", "/opt/bin"}}, {});
        CHECK(env.at("VIRTUAL_ENV") == "/mine");
        CHECK(env.at("PATH") == "/opt/bin");
    }
    SECTION("an explicit set wins over an unset of the same name") {
        auto env = compose_environment(base, {{"HOME", "/tmp/h"}}, {"HOME"});
        CHECK(env.at("HOME") == "/tmp/h");
    }
}

TEST_CASE("current_environment reflects the process environment") {
    REQUIRE(::setenv("BS_TEST_ENV_VALUE", "a=b c", 1) == 0);
    auto env = current_environment();
    CHECK(env.at("BS_TEST_ENV_VALUE") == "a=b c");
    ::unsetenv("BS_TEST_ENV_VALUE");
    CHECK(current_environment().count("BS_TEST_ENV_VALUE") == 0);
}

TEST_CASE("enter_venv puts the venv's bin/ first and sets VIRTUAL_ENV, leaving what a step sets itself") {
    bootstrap::exec::EnvMap env{{"PATH", "/usr/bin"}, {"PYTHONHOME", "/x"}, {"VIRTUAL_ENV", "/other"}};
    bootstrap::exec::enter_venv(env, "/v");
    CHECK(env.at("PATH") == "/v/bin:/usr/bin");
    CHECK(env.at("VIRTUAL_ENV") == "/v");
    CHECK_FALSE(env.count("PYTHONHOME"));
    bootstrap::exec::EnvMap empty;
    bootstrap::exec::enter_venv(empty, "/v");
    CHECK(empty.at("PATH") == "/v/bin");
    bootstrap::exec::EnvMap own{{"PATH", "/mine"}, {"PYTHONHOME", "/ph"}};
    bootstrap::exec::enter_venv(own, "/v", {"PATH", "PYTHONHOME"});
    CHECK(own.at("PATH") == "/mine");
    CHECK(own.at("PYTHONHOME") == "/ph");
    CHECK(own.at("VIRTUAL_ENV") == "/v");
}
