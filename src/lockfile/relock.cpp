#include "lockfile/relock.hpp"

#include <fmt/format.h>

#include "engine/lock_meaning.hpp"
#include "lockfile/pylock.hpp"

namespace bootstrap::lockfile {

Result<manifest::Lockfile> with_recorded_inputs(const recipe::Recipe& recipe, const std::filesystem::path& file) {
    BS_TRY(auto lock, load_any_lockfile(file));
    if (!lock.foreign_tool.empty())
        return fail(ErrorCode::usage, fmt::format("{} was written by {}: it names no recipe to record", file.string(),
                                                  lock.foreign_tool));
    if (lock.recipe_digest != recipe.source_digest)
        return fail(ErrorCode::usage,
                    fmt::format("the recipe {} changed since {} was written: what it meant then is unknown",
                                recipe.file.string(), file.string()),
                    fmt::format("lock it again from a venv that ran it: bootstrap run {0}, then bootstrap lock {0}",
                                recipe.file.string()));
    engine::record_meaning(lock, recipe);
    return lock;
}

}  // namespace bootstrap::lockfile
