#pragma once
// The venv that `snapshot`, `history`, `diff`, `rollback` and `pack` act on: `--venv DIR`, else
// the `[venv] path` of `--recipe R` (resolved as `run` resolves it), else the activated venv
// ($VIRTUAL_ENV); made absolute (the interpreter runs from `/`).

#include <string>

#include "core/error.hpp"

namespace CLI {
class App;
}

namespace bootstrap::cli {

struct VenvChoice {
    std::string venv;
    std::string recipe;
};

/// Bind --venv and --recipe (they exclude each other).
void add_venv_choice(CLI::App& cmd, VenvChoice& choice);

/// The chosen venv, "" when nothing names one. A recipe that cannot be read is an error.
[[nodiscard]] Result<std::string> chosen_venv(const VenvChoice& choice);

/// The chosen venv; none is a usage error naming the three ways.
[[nodiscard]] Result<std::string> required_venv_choice(const VenvChoice& choice);

/// required_venv_choice, which must be a venv (has pyvenv.cfg): `snapshot`, `history`.
[[nodiscard]] Result<std::string> required_venv(const VenvChoice& choice);

}  // namespace bootstrap::cli
