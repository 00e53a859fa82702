#pragma once
// What a `--locked` run plans from its lockfile (manifest/lockfile.hpp, schema 2): whether the
// lock fits the recipe, what each locked install step installs, and which selected steps the
// lock does not cover. make_plan (plan.cpp) holds one per plan.
//
// A locked install step installs its whole locked closure, pinned with `--require-hashes`
// and `--no-deps`: one installer command per list of indexes, each package asked from the
// indexes of the step that installed it when the lock was made, as this node's plan configures
// them (a site mirror, another port), in the same order, so the installer picks the same file
// and the hash proves it. A package whose step is not an install step of the recipe (a sync or
// build step brought it in) is asked from the indexes the lock recorded. Wheels kept in the
// artifact store go by path.
//
// A pylock.toml another tool wrote (Lockfile::foreign_tool) names no recipe and no steps: every
// package it installs goes to the recipe's first install step (asked from that step's indexes,
// hash-checked), every other step is covered with nothing to install (a build, run or check
// step still runs), and each install step's requirements must hold in the lock. Its
// requires-python and environments are checked against the venv's interpreter (bootstrap's own
// pylock has them too), and a package whose marker does not hold there is not installed.

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "manifest/lockfile.hpp"
#include "steps/kind.hpp"

namespace bootstrap::engine {

class LockedPlan {
public:
    /// The lock must be able to rebuild the venv from nothing (schema 2) and stand for this
    /// recipe (what its steps do is unchanged: lock_meaning.hpp; a foreign pylock belongs to
    /// none); usage errors naming the file otherwise.
    [[nodiscard]] static Status check(const manifest::Lockfile& lock, const recipe::Recipe& recipe);

    /// `unlocked`: the same recipe planned on this node without the lock (its install steps'
    /// indexes are where locked packages are asked for). `markers`: the venv's interpreter's,
    /// null before the venv exists (a requirement's marker then is not judged).
    LockedPlan(const manifest::Lockfile& lock, const Plan& unlocked, const pyenv::MarkerEnv* markers);

    /// What install step `step_id` installs. `known`: index URLs with their credentials (the
    /// recorded ones are redacted); `home`: $BOOTSTRAP_HOME (its artifact store); `notice`:
    /// told once per origin step whose indexes differ from those the lock recorded. `python`:
    /// the venv's interpreter (null before the venv exists): the lock's requires-python and
    /// environments must hold for it, and packages whose marker does not are left out. An error
    /// when a local wheel of the closure is no longer in the artifact store.
    [[nodiscard]] Result<steps::LockedInstall> install(const std::string& step_id, const fs::path& venv,
                                                       const fs::path& home, const std::vector<std::string>& known,
                                                       const pyenv::InterpreterFacts* python,
                                                       const std::function<void(std::string)>& notice);

    /// Selected steps the lock does not cover: a usage error naming them (an optional one is
    /// marked ResolvedStep::not_locked, and skipped). Records each locked package's indexes in
    /// the plan (its origin in the run's manifests).
    [[nodiscard]] Status apply_coverage(Plan& plan) const;

    /// Locked steps the selection leaves out: what only they lock is left out of the lock check
    /// (Plan::locked_left_out); a usage error when a kept step needs it (engine/locked_selection.hpp).
    [[nodiscard]] Status apply_selection(Plan& plan) const;

private:
    void adopt_foreign(const Plan& unlocked, const pyenv::MarkerEnv* markers);
    [[nodiscard]] Status check_interpreter(const pyenv::InterpreterFacts& python) const;

    manifest::Lockfile m_lock;                    // a foreign pylock's packages and steps assigned (adopt_foreign)
    std::vector<std::string> m_foreign_problems;  // the recipe's requirements it does not hold
    std::map<std::string, std::vector<std::string>> m_step_indexes;  // real URLs, default first
    std::set<std::string> m_noted;                                   // origin steps whose changed indexes were told
};

}  // namespace bootstrap::engine
