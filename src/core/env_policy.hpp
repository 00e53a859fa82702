#pragma once
// The one table of environment variables bootstrap treats specially, and what each entry is for.
// It lives in core because secret redaction (core/redact) reads it; exec (what a child
// inherits), engine (step keys), steps (the build-cache key) and manifest (snapshots) ask it.
//
// Why these and not others:
//   pass_through    a child inherits it from bootstrap's own environment. Deliberately not:
//                   VIRTUAL_ENV, PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, CONDA_*, PIPENV_*,
//                   POETRY_* and the like: they redirect where an installer or interpreter reads
//                   and writes (an activated venv in the user's shell would make `uv pip install`
//                   target it instead of ours). A recipe that wants one sets it explicitly,
//                   which puts it in the step key.
//   volatile_       inherited but left out of step keys: it changes how a step looks or where
//                   it finds its tools (programs are resolved to absolute paths), not what it
//                   produces.
//   secret          its value is `***` in every key, log, manifest and output (any case).
//   build_input     an inherited variable a native build reads: part of the build-cache key.
//   build_recorded  recorded in a snapshot's `build_env` (exact names only).
//   build_parallelism  only says how fast to build: left out of the build-cache key, so
//                   hosts with different core counts share builds.
//   installer_setting  how uv/pip fetch (UV_*, PIP_*): left out of the build-cache key.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::core {

enum class EnvUse : unsigned {
    pass_through = 1u << 0,
    volatile_ = 1u << 1,
    secret = 1u << 2,
    build_input = 1u << 3,
    build_recorded = 1u << 4,
    build_parallelism = 1u << 5,
    installer_setting = 1u << 6,
};

enum class EnvMatch {
    exact,     // the name itself
    prefix,    // names that start with the pattern and are longer ("LC_" takes "LC_ALL")
    contains,  // names that contain the pattern
    suffix,    // names that end with the pattern
};

struct EnvRule {
    std::string_view pattern;
    EnvMatch match;
    unsigned uses;          // EnvUse bits
    bool any_case = false;  // compare upper-cased ("github_token" is a secret too)
    std::string_view why;   // what the entry is for
};

/// Every entry, in the order they are documented.
[[nodiscard]] std::span<const EnvRule> env_policy();

/// True when some entry with `use` matches `name`.
[[nodiscard]] bool env_has_use(std::string_view name, EnvUse use);

/// The exact names of the entries with `use`, sorted (e.g. the snapshot's build_env names).
[[nodiscard]] std::vector<std::string> env_exact_names(EnvUse use);

}  // namespace bootstrap::core
