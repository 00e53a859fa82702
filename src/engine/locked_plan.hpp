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
    /// The lock must be able to rebuild the venv from nothing (schema 2) and belong to this
    /// recipe (the same digest); usage errors naming the file otherwise.
    [[nodiscard]] static Status check(const manifest::Lockfile& lock, const recipe::Recipe& recipe);

    /// `unlocked`: the same recipe planned on this node without the lock (its install steps'
    /// indexes are where locked packages are asked for).
    LockedPlan(const manifest::Lockfile& lock, const Plan& unlocked);

    /// What install step `step_id` installs. `known`: index URLs with their credentials (the
    /// recorded ones are redacted); `home`: $BOOTSTRAP_HOME (its artifact store); `notice`:
    /// told once per origin step whose indexes differ from those the lock recorded. An error
    /// when a local wheel of the closure is no longer in the artifact store.
    [[nodiscard]] Result<steps::LockedInstall> install(const std::string& step_id, const fs::path& venv,
                                                       const fs::path& home, const std::vector<std::string>& known,
                                                       const std::function<void(std::string)>& notice);

    /// Selected steps the lock does not cover: a usage error naming them (an optional one is
    /// marked ResolvedStep::not_locked, and skipped). Records each locked package's indexes in
    /// the plan (its origin in the run's manifests).
    [[nodiscard]] Status apply_coverage(Plan& plan) const;

private:
    const manifest::Lockfile& m_lock;
    std::map<std::string, std::vector<std::string>> m_step_indexes;  // real URLs, default first
    std::set<std::string> m_noted;                                   // origin steps whose changed indexes were told
};

}  // namespace bootstrap::engine
