#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/env_policy.hpp"

using namespace bootstrap;
using core::EnvUse;

TEST_CASE("every env policy entry says what it is for and has a use") {
    for (const auto& rule : core::env_policy()) {
        INFO(rule.pattern);
        CHECK_FALSE(rule.pattern.empty());
        CHECK_FALSE(rule.why.empty());
        CHECK(rule.uses != 0);
    }
}

TEST_CASE("env policy: pass-through, volatile, secret, build uses") {
    CHECK(core::env_has_use("PATH", EnvUse::pass_through));
    CHECK(core::env_has_use("PATH", EnvUse::volatile_));
    CHECK(core::env_has_use("LC_ALL", EnvUse::volatile_));
    CHECK_FALSE(core::env_has_use("LC_", EnvUse::pass_through));  // a prefix alone is no name
    CHECK(core::env_has_use("BOOTSTRAP_HOME", EnvUse::volatile_));
    CHECK_FALSE(core::env_has_use("CC", EnvUse::volatile_));
    CHECK_FALSE(core::env_has_use("VIRTUAL_ENV", EnvUse::pass_through));
    CHECK_FALSE(core::env_has_use("PYTHONPATH", EnvUse::pass_through));

    CHECK(core::env_has_use("github_token", EnvUse::secret));
    CHECK(core::env_has_use("OPENAI_API_KEY", EnvUse::secret));
    CHECK(core::env_has_use("key", EnvUse::secret));
    CHECK_FALSE(core::env_has_use("KEYBOARD", EnvUse::secret));
    // A port is no credential, whatever else its name says; other names keep their rule.
    CHECK_FALSE(core::env_has_use("AUTH_SERVER_PORT", EnvUse::secret));
    CHECK_FALSE(core::env_has_use("token_port", EnvUse::secret));
    CHECK(core::env_has_use("AUTH_PORTAL", EnvUse::secret));
    CHECK(core::env_has_use("AUTHPORT", EnvUse::secret));
    CHECK(core::env_has_use("AUTH_PORT_TOKEN", EnvUse::secret));

    CHECK(core::env_has_use("TORCH_CUDA_ARCH_LIST", EnvUse::build_input));
    CHECK(core::env_has_use("CPPFLAGS", EnvUse::build_input));
    CHECK_FALSE(core::env_has_use("CPPFLAGS", EnvUse::pass_through));
    CHECK(core::env_has_use("MAX_JOBS", EnvUse::build_parallelism));
    CHECK(core::env_has_use("UV_INDEX_URL", EnvUse::installer_setting));
    CHECK_FALSE(core::env_has_use("TORCH_CUDA_ARCH_LIST", EnvUse::build_parallelism));
}

TEST_CASE("env_exact_names gives the sorted exact names of a use") {
    const std::vector<std::string> recorded = {
        "APEX_CPP_EXT",
        "APEX_CUDA_EXT",
        "APEX_PARALLEL_BUILD",
        "CC",
        "CFLAGS",
        "CMAKE_CUDA_ARCHITECTURES",
        "CUDA_HOME",
        "CUDA_PATH",
        "CXX",
        "CXXFLAGS",
        "LDFLAGS",
        "MAX_JOBS",
        "NVCC_THREADS",
        "NVTE_CUDA_ARCHS",
        "NVTE_FRAMEWORK",
        "TORCH_CUDA_ARCH_LIST",
    };
    CHECK(core::env_exact_names(EnvUse::build_recorded) == recorded);
    CHECK(core::env_exact_names(EnvUse::build_parallelism) ==
          std::vector<std::string>{"APEX_PARALLEL_BUILD", "CMAKE_BUILD_PARALLEL_LEVEL", "MAX_JOBS", "NVCC_THREADS"});
}

TEST_CASE("step-key inputs: what changes what an installer installs or a build builds, nothing ambient") {
    for (const char* name : {"UV_INDEX_URL", "UV_INDEX", "UV_CONSTRAINT", "UV_EXCLUDE_NEWER", "UV_PRERELEASE",
                             "UV_TORCH_BACKEND", "UV_CONFIG_FILE", "UV_PYTHON"})
        CHECK(core::env_has_use(name, EnvUse::uv_input));
    for (const char* name : {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_PRE"})
        CHECK(core::env_has_use(name, EnvUse::pip_input));
    CHECK_FALSE(core::env_has_use("PIP_INDEX_URL", EnvUse::uv_input));
    CHECK_FALSE(core::env_has_use("UV_INDEX_URL", EnvUse::pip_input));
    for (const char* name : {"CC", "CXXFLAGS", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "NVTE_FRAMEWORK"})
        CHECK(core::env_has_use(name, EnvUse::build_input));
    // Passed on to children, but no step's input.
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "https_proxy", "SSL_CERT_FILE", "LD_LIBRARY_PATH",
                             "UV_CACHE_DIR", "UV_CONCURRENT_DOWNLOADS", "UV_HTTP_TIMEOUT", "PIP_CACHE_DIR",
                             "XDG_CACHE_HOME", "SOURCE_DATE_EPOCH", "TERM", "LANG", "SLURM_JOB_ID"}) {
        INFO(name);
        CHECK_FALSE(core::env_has_use(name, EnvUse::uv_input));
        CHECK_FALSE(core::env_has_use(name, EnvUse::pip_input));
        CHECK_FALSE(core::env_has_use(name, EnvUse::build_input));
    }
}
