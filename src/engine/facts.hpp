#pragma once
// What a plan is computed from: gathered once per run (and again after the venv step).

#include <optional>

#include "exec/environment.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::engine {

struct Facts {
    exec::EnvMap env;                               // the caller's complete environment
    int cpus = 1;
    std::optional<pyenv::InterpreterFacts> python;  // when the venv exists
};

}  // namespace bootstrap::engine
