#pragma once
// What a plan is computed from: gathered once per run (and again after the venv step).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/environment.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/interpreter.hpp"
#include "recipe/image_defaults.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

struct Facts {
    exec::EnvMap env;  // the caller's complete environment
    int cpus = 1;
    std::optional<pyenv::InterpreterFacts> python;  // when the venv exists
    /// The host's tools as snapshots record them (gcc, nvcc, glibc); unset, a snapshot probes
    /// them (processes, cached in the venv). A fake RunWorld sets them.
    std::optional<manifest::Host> host;
    /// In an image (recipe/image_defaults.hpp): the secrets its build was given that this
    /// environment does not set. `env` holds a stand-in for each (so the recipe plans: a
    /// secret's value is in no key); a step that reads one is refused if it would run.
    std::vector<recipe::ImageSecret> image_secrets_missing;
};

/// A variable the recipe read as `{env.NAME}`: its value here (nullopt: unset, the default was
/// used), where the recipe first reads it, and the steps whose values read it (directly or
/// through [vars], in plan order). An image's build context passes these on.
struct EnvRead {
    std::optional<std::string> value;
    recipe::SourceLoc loc;
    std::vector<std::string> steps;
};

}  // namespace bootstrap::engine
