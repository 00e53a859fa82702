#pragma once
// What the venv's own state tells doctor (doctor/ reads no journal): which recipe step owns
// each distribution and which indexes it used (for the fixes' commands), and, when no recipe
// is given, the overrides its last run declared and the recipe file it read.

#include "core/error.hpp"
#include "doctor/checks.hpp"

namespace bootstrap::cli {

/// Fill options.owners and options.step_indexes from `<venv>/.bootstrap/journal.json` (a
/// distribution listed by several steps belongs to the recipe's latest, else to the entry that
/// finished last), and, without options.recipe, the record
/// `engine::read_declared_overrides` reads (nothing when the venv has none). An unreadable
/// journal leaves the fixes without steps and indexes; a malformed record is an error.
[[nodiscard]] Status read_venv_state(doctor::DoctorOptions& options);

}  // namespace bootstrap::cli
