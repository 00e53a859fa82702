#pragma once
// The recipe is a fixed point of the venv: after every step that changed something, and at the
// end of every run, each passed install step's own requirements still hold. A step that undid
// an earlier one's deliberate choice (torch's exact cuBLAS pin re-resolved by a later step that
// depends on torch) fails the run, naming both steps, the package and both versions. The
// overrides that let later steps keep such choices are written here too.

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/skip_rule.hpp"
#include "pyenv/marker.hpp"

namespace bootstrap::engine {

/// The overrides file of install or build step `step` (InstallSpec/BuildSpec::overrides): one
/// `name==version` line per overridden package as `installed` holds it now, each after a
/// comment naming the step that chose it. Packages not installed are left out.
[[nodiscard]] std::string overrides_text(const steps::ResolvedStep& step, const Installed& installed);

/// Installed distributions whose own requirements exclude a version the overrides of `step`
/// keep: "demo-torch 2.11.0 requires nvidia-cublas==13.1.0.3; step 'cublas' keeps 13.10.0.20",
/// one per line ("" when none). What an installer that cannot override a pin (pip) trips on.
[[nodiscard]] std::string override_conflicts(const steps::ResolvedStep& step, const Installed& installed,
                                             const pyenv::MarkerEnv& markers);

/// `error` of a failed install step that had to keep earlier steps' overrides, with a note of
/// which versions and which installed pins exclude them (`markers`: the venv's, when known);
/// with `installer` "pip", that pip cannot override a pin (uv can).
[[nodiscard]] Error with_override_note(const steps::ResolvedStep& step, Error error, const Installed& installed,
                                       const pyenv::MarkerEnv* markers, const std::string& installer);

/// Before `step` runs: the earlier install steps of `plan` that passed and whose requirements
/// `installed` satisfies (read now: the dist-infos they read may be gone once `step` ran).
[[nodiscard]] std::vector<const steps::ResolvedStep*> holding_before(const steps::ResolvedStep& step,
                                                                     const Plan& plan, const SkipRule& rule,
                                                                     const Installed& installed);

/// After `step` ran: the first of `held` (holding_before) that no longer holds against `after`,
/// as a step_failed error naming both steps, the package and its versions in `before` and
/// `after`; nullopt when `step` undid nothing.
[[nodiscard]] std::optional<Error> undone_by(const steps::ResolvedStep& step,
                                             const std::vector<const steps::ResolvedStep*>& held,
                                             const SkipRule& rule, const Installed& before,
                                             const Installed& after);

/// At the end of a run: an error naming every passed step whose requirements the venv does
/// not satisfy and the `run --from` that re-runs them; nullopt for a fixed point.
[[nodiscard]] std::optional<Error> fixed_point_error(const std::vector<Unsatisfied>& unsatisfied,
                                                     const fs::path& recipe_file);

}  // namespace bootstrap::engine
