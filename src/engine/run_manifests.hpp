#pragma once
// The manifests a run keeps: a snapshot before and after, in the venv's numbered history, with
// each package's origin annotated from the step that installed it, and every wheel that came
// from a local path kept in the artifact store (so rollback can restore it offline).

#include <optional>
#include <string>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/diff.hpp"
#include "manifest/history.hpp"
#include "manifest/manifest.hpp"
#include "state/journal.hpp"

namespace bootstrap::engine {

/// Snapshot the plan's venv (which must exist) with recipe name/digest and a `run` block.
[[nodiscard]] Result<manifest::Manifest> snapshot_for_run(const Plan& plan, const Facts& facts,
                                                          const std::string& run_id, const std::string& phase, bool ok);

/// Fill in origins the dist-info cannot tell: the owning step and its index URLs (from the
/// journal and plan); unchanged packages keep what `previous` recorded. Wheels installed from a
/// local path or a --find-links directory are added to `store` and their digest recorded.
/// A wheel that cannot be stored is reported in the returned warnings, not fatal.
[[nodiscard]] std::vector<std::string> annotate_origins(manifest::Manifest& after, const manifest::Manifest* previous,
                                                        const state::Journal& journal, const Plan& plan,
                                                        manifest::ArtifactStore& store);

/// The same for a snapshot taken outside a run (`snapshot -o FILE`): origins from the venv's
/// journal and newest history entry, so a saved manifest can be rolled back to. Stores nothing;
/// returns warnings (an unreadable journal or history entry).
[[nodiscard]] std::vector<std::string> annotate_from_records(manifest::Manifest& m, const fs::path& venv);
/// The same, with the journal already read (state::Journal::load's answer; its error becomes a warning).
[[nodiscard]] std::vector<std::string> annotate_from_records(manifest::Manifest& m, const fs::path& venv,
                                                             Result<state::Journal> journal);

}  // namespace bootstrap::engine
