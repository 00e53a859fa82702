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
//   step keys       a step's key holds only the inherited variables that decide its result
//                   (engine/plan.cpp): per kind, uv_input or pip_input (for the installer the
//                   recipe uses) and build_input; plus the names a recipe lists in
//                   `[env] key`. Everything else passed through (CUDA_VISIBLE_DEVICES, NCCL_*,
//                   SLURM_* are not even passed, proxies, CA bundles, caches, concurrency, XDG
//                   dirs, TERM, locale) is no input: it changes how or where a step runs, not
//                   what it installs or builds.
//   uv_input        what uv installs: indexes, find-links, constraints and overrides, resolution
//                   and pre-release strategy, exclude-newer, binary/build choices, its config
//                   file, the torch backend, the Python it picks for a venv.
//   pip_input       the same for pip.
//   volatile_       left out of bootstrap-step-v3 keys (every other inherited variable was in
//                   them): read only to recognise a venv settled under v3 (engine/plan.cpp).
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
    uv_input = 1u << 7,
    pip_input = 1u << 8,
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

/// True when some entry with `use` matches `name`. A port's name (PORT, *_PORT, any case) is
/// never secret, though it holds AUTH or TOKEN: a port number is no credential, and masking
/// one would hide every "127.0.0.1:8080" a child prints.
[[nodiscard]] bool env_has_use(std::string_view name, EnvUse use);

/// The exact names of the entries with `use`, sorted (e.g. the snapshot's build_env names).
[[nodiscard]] std::vector<std::string> env_exact_names(EnvUse use);

}  // namespace bootstrap::core
