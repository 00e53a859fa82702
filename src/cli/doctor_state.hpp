#pragma once
// What the venv's own state tells doctor (doctor/ reads no journal): which recipe step owns
// each distribution and which indexes it used (for the fixes' commands), and, when no recipe
// is given, the overrides its last run declared and the recipe file it read.

#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "doctor/checks.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::cli {

/// Fill options.owners and options.step_indexes from `<venv>/.bootstrap/journal.json` (a
/// distribution listed by several steps belongs to the recipe's latest, else to the entry that
/// finished last), and, without options.recipe, the record
/// `engine::read_declared_overrides` reads (nothing when the venv has none). An unreadable
/// journal leaves the fixes without steps and indexes; a malformed record is an error.
[[nodiscard]] Status read_venv_state(doctor::DoctorOptions& options);

/// `doctor --recipe`: what only the recipe's plan tells about the venv: pins two install steps
/// disagree on (errors, at the recipe's file:line), distributions no step installs (a warning,
/// fixed by `run --exact`), and an install a run did not see end (an error, fixed by `run`).
/// Nothing when the venv or the plan cannot be made (the other checks say why).
[[nodiscard]] std::vector<doctor::Finding> recipe_state_findings(const recipe::Recipe& recipe,
                                                                 const std::filesystem::path& venv);

}  // namespace bootstrap::cli
