#pragma once
// The recipe is a fixed point of the venv: after every step that changed something, and at the
// end of every run, each passed install step's own requirements still hold. A step that undid
// an earlier one's deliberate choice (torch's exact cuBLAS pin re-resolved by a later step that
// depends on torch) fails the run, naming both steps, the package and both versions. The
// overrides that let later steps keep such choices are written here too, and the record of the
// pins the recipe overrides on purpose that `doctor` reads when it is given no recipe.

#include <compare>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/skip_rule.hpp"
#include "pyenv/marker.hpp"

namespace bootstrap::engine {

/// The overrides file of a step that keeps overrides (steps::overrides_of): one
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
[[nodiscard]] std::vector<const steps::ResolvedStep*> holding_before(const steps::ResolvedStep& step, const Plan& plan,
                                                                     const SkipRule& rule, const Installed& installed);

/// After `step` ran: the first of `held` (holding_before) that no longer holds against `after`,
/// as a step_failed error naming both steps, the package and its versions in `before` and
/// `after`; nullopt when `step` undid nothing.
[[nodiscard]] std::optional<Error> undone_by(const steps::ResolvedStep& step,
                                             const std::vector<const steps::ResolvedStep*>& held, const SkipRule& rule,
                                             const Installed& before, const Installed& after);

/// At the end of a run: an error naming every passed step whose requirements the venv does
/// not satisfy and the `run --from` that re-runs them; nullopt for a fixed point.
[[nodiscard]] std::optional<Error> fixed_point_error(const std::vector<Unsatisfied>& unsatisfied,
                                                     const fs::path& recipe_file);

/// Two install steps whose requirements on one distribution no version satisfies (one pins a
/// version, `==` or `===`, that the other's specifier excludes), where both apply (markers are
/// evaluated in `markers`; without them a marked requirement is not compared). When the later
/// step overrides on purpose (`upgrade = true` or `allow_conflicts`), `notes` gets which step's
/// pin wins, and for an optional later step that it will fail or undo the earlier one (the run
/// refuses an undo); otherwise each is an invalid_recipe error at the later requirement's
/// file:line naming both steps and pins (the earlier one's own fixed-point check leaves out
/// what a later step asks for, so the run would otherwise end with the later pin, silently).
[[nodiscard]] std::vector<Error> pin_conflicts(const Plan& plan, const pyenv::MarkerEnv* markers,
                                               std::vector<std::string>& notes);

/// An installed distribution no step of the plan accounts for.
struct Extra {
    std::string name;  // normalised
    std::string version;
};

/// What `installed` holds that no step of `plan` accounts for: no step of the plan owns it in
/// `journal` (the last step that changed a distribution owns it) and no install step's
/// requirements bring it in (their closure in `installed`, markers in `markers`). Installed by
/// hand (`uv pip install tqdm`), or by a step since taken out of the recipe. pip, setuptools and
/// wheel that no step owns are a venv's seed (`python -m venv`), not extras.
[[nodiscard]] Result<std::vector<Extra>> unowned_extras(const Plan& plan, const state::Journal& journal,
                                                        const Installed& installed, const pyenv::MarkerEnv& markers);

/// "tqdm 4.67.1, rich 13.7.1"
[[nodiscard]] std::string describe(const std::vector<Extra>& extras);

/// A pin the recipe overrides on purpose: step `step` installs `dependency` over the pin of
/// `dependent` (`allow_conflicts = ["dependent"]`, README pitfall P10). Names are normalised.
struct DeclaredOverride {
    std::string step;
    std::string dependent;
    std::string dependency;
    auto operator<=>(const DeclaredOverride&) const = default;
};

/// What a run records of its recipe's deliberate overrides, so that `doctor --venv V` without
/// `--recipe` (a node admin in an image) reports them as declared, as it would with the recipe.
struct DeclaredOverrides {
    fs::path recipe_file;                     // absolute, as the run read it
    std::string recipe_digest;                // sha256 of the recipe file's bytes
    std::vector<DeclaredOverride> overrides;  // in plan order
};

/// `<venv>/.bootstrap/declared-overrides.txt`.
[[nodiscard]] fs::path declared_overrides_path(const fs::path& venv);

/// The plan's recipe and the {dependent, dependency} pairs of its install steps'
/// allow_conflicts (as SkipRule::allowed_conflicts holds them), each with its step.
[[nodiscard]] DeclaredOverrides declared_overrides(const Plan& plan);

/// The record's text: comment lines, `recipe <sha256> <path>`, then one
/// `override <step> <dependent> <dependency>` line per pair.
[[nodiscard]] std::string declared_overrides_text(const DeclaredOverrides& declared);

/// A run writes the plan's record (atomically) when the venv's differs, so a no-op run writes
/// nothing. Called once per run, under the venv lock, before its first step.
[[nodiscard]] Status record_declared_overrides(const Plan& plan);

/// The venv's record; nullopt when it has none (a venv of an older bootstrap: doctor then knows
/// no declared override). Error (io) for an unreadable or malformed file, naming it and the line.
[[nodiscard]] Result<std::optional<DeclaredOverrides>> read_declared_overrides(const fs::path& venv);

}  // namespace bootstrap::engine
