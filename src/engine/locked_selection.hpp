#pragma once
// `run --locked` (and `plan --locked`) with locked steps left out by --skip, --only or --from.
//
// A locked install step installs its whole locked closure, so a kept install step never needs
// what a left-out step installs. What the left-out steps alone lock (no kept step's closure
// holds it, and no kept step installed it when the lock was made) is not installed, so the
// lock check must not require it: those packages are Plan::locked_left_out, and the run says
// so. A kept step that needs one of them is refused before anything runs: a `build` step whose
// `abi_packages` name one (it would build against a venv without it).

#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "manifest/lockfile.hpp"

namespace bootstrap::engine {

struct LockedLeftOut {
    /// Steps left out of the selection whose packages no kept step locks (recipe order).
    std::vector<std::string> steps;
    /// The locked packages (normalised) that only left-out steps hold: in a left-out step's
    /// closure (LockedStep::packages) or installed by one (Origin::step), and in no kept one's.
    std::set<std::string> packages;
    /// Kept steps that need one of `packages`: "step 'ext' builds against demo-core
    /// (abi_packages), which only step 'core' locks".
    std::vector<std::string> needs;
};

/// What the selection of `plan` (Plan::selected) leaves out of `lock`. A package no step holds
/// (seeded by the venv's creation) is never left out.
[[nodiscard]] LockedLeftOut locked_left_out(const manifest::Lockfile& lock, const Plan& plan);

/// Sets Plan::locked_left_out and tells the run (a notice) which steps' packages the lock check
/// leaves out; a usage error naming the left-out steps and each kept step that needs them.
[[nodiscard]] Status apply_locked_selection(const manifest::Lockfile& lock, Plan& plan);

}  // namespace bootstrap::engine
