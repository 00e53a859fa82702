#include "engine/lock_meaning.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "recipe/meaning.hpp"

namespace bootstrap::engine {

void record_meaning(manifest::Lockfile& lock, const recipe::Recipe& recipe) {
    auto now = recipe::meaning(recipe);
    lock.recipe_inputs = std::move(now.recipe);
    for (auto& step : now.steps)
        if (auto it = lock.steps.find(step.id); it != lock.steps.end()) it->second.inputs = std::move(step.inputs);
}

std::vector<std::string> meaning_changes(const manifest::Lockfile& lock, const recipe::Recipe& recipe) {
    std::vector<std::string> out;
    if (lock.recipe_inputs.empty()) return out;
    const auto now = recipe::meaning(recipe);
    std::set<std::string> ids;
    bool added_or_removed = false;
    for (const auto& step : now.steps) {
        ids.insert(step.id);
        auto it = lock.steps.find(step.id);
        if (it == lock.steps.end()) {
            out.push_back(fmt::format("step '{}': added", step.id));
            added_or_removed = true;
            continue;
        }
        for (const auto& change : core::explain_change(it->second.inputs, step.inputs))
            out.push_back(fmt::format("step '{}': {}", step.id, change));
    }
    for (const auto& [id, st] : lock.steps)
        if (!ids.count(id)) {
            out.push_back(fmt::format("step '{}': removed", id));
            added_or_removed = true;
        }
    for (const auto& change : core::explain_change(lock.recipe_inputs, now.recipe)) {
        // The steps' list changed with a step added or removed: said above, step by step.
        if (added_or_removed && change.starts_with("steps: ")) continue;
        out.push_back("recipe: " + change);
    }
    return out;
}

Status check_lock_stands(const manifest::Lockfile& lock, const recipe::Recipe& recipe) {
    const std::string again = fmt::format(
        "lock it again from a venv that ran the recipe as it is now (bootstrap run {0}, then bootstrap lock {0} "
        "-o {1}{2}), or run without --locked",
        recipe.file.string(), lock.file.string(), lock.file.extension() == ".toml" ? " --format pylock" : "");
    if (lock.recipe_inputs.empty()) {
        if (lock.recipe_digest == recipe.source_digest) return {};
        return fail(ErrorCode::usage,
                    fmt::format("the recipe {} changed since its lockfile {} was written", recipe.file.string(),
                                lock.file.string()),
                    "this lockfile records only the recipe's bytes (a comment counts); a lock written by this "
                    "bootstrap records what each step does, and only a change to that makes it stale\n" +
                        again);
    }
    const auto changes = meaning_changes(lock, recipe);
    if (changes.empty()) return {};
    const std::string head = fmt::format("the recipe {} changed since its lockfile {} was written",
                                         recipe.file.string(), lock.file.string());
    if (changes.size() == 1) return fail(ErrorCode::usage, fmt::format("{}: {}", head, changes.front()), again);
    return fail(ErrorCode::usage, fmt::format("{}: {} changes", head, changes.size()),
                core::join(changes, "\n") + "\n" + again);
}

}  // namespace bootstrap::engine
