#pragma once
// Installs cut short. Before a step that may change the venv runs, `<venv>/.bootstrap/changing`
// names the step and the run; the step's end takes it away once the venv is whole (a failed
// action first has the distributions it left incomplete removed). A marker still there means
// the run was stopped (Ctrl-C, a killed job, a power cut) while the installer may have been
// copying a wheel's files: uv and pip take a dist-info at its word, so a package with 235 of its
// files missing would be skipped by every later install. The next run or rollback, under the
// venv's lock and before anything else, checks every installed distribution's files against
// its RECORD (pyenv::remove_incomplete_installs: presence, type, size), removes those cut short
// so that the steps that own them install them again, and only then clears the marker.
// `run --force` makes the same check without a marker.
//
// An uninstall stopped half-way (an upgrade removes the old version first; uv removes the
// dist-info's files, then the package's) leaves files no RECORD names any more. So the marker
// keeps every dist-info's RECORD as it was (hard links in `.bootstrap/changing.records/`, one
// link per distribution; a copy where links cannot be made): the repair removes the files a
// kept RECORD names whose distribution is no longer whole and that no present one claims.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

struct ChangingMarker {
    std::string step;    // the step that was changing the venv ("" for a rollback)
    std::string run_id;  // its run
    std::string since;   // ISO 8601 UTC
};

[[nodiscard]] fs::path changing_marker_path(const fs::path& venv);

/// The marker, when the venv has one (a marker that cannot be parsed still counts: its fields
/// are empty).
[[nodiscard]] std::optional<ChangingMarker> read_changing_marker(const fs::path& venv);

/// Written (atomically) before the step's action runs, after the RECORDs of the distributions in
/// `facts`' site-packages are kept (none without facts: no venv yet). `only`: just the RECORDs
/// of these normalised names, when the change can touch no other distribution (a rollback's
/// exact pins and removals); empty keeps them all (a resolver may change anything).
[[nodiscard]] Status mark_changing(const fs::path& venv, const ChangingMarker& marker,
                                   const pyenv::InterpreterFacts* facts, const std::vector<std::string>& only = {});

/// Removed, with the kept RECORDs, once the venv is known whole.
[[nodiscard]] Status clear_changing(const fs::path& venv);

/// The one-line account of a marker for the user: "step `big` (run 20261202-…) was stopped on
/// 2026-12-02T10:00:00Z while it changed the venv".
[[nodiscard]] std::string describe(const ChangingMarker& marker);

/// Remove the venv's incomplete installs (notes for the user, one per removal) and clear the
/// marker. An interrupt during the check leaves the marker for the next run (error: interrupted).
[[nodiscard]] Result<std::vector<std::string>> repair_incomplete_installs(const pyenv::InterpreterFacts& facts,
                                                                          const fs::path& venv);

}  // namespace bootstrap::engine
