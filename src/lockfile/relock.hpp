#pragma once
// `bootstrap lock --record-inputs`: a lockfile of an older bootstrap, which records only the
// recipe's bytes, given what the recipe's steps do (engine/lock_meaning.hpp) without a run or a
// venv — sound only while the recipe's bytes are still those it was locked from.

#include <filesystem>

#include "core/error.hpp"
#include "manifest/lockfile.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::lockfile {

/// Read `file` (JSON or pylock), record the recipe's meaning in it and return it (nothing is
/// written). A usage error naming the file when it is another tool's pylock, or when the recipe's
/// digest is not the one it records (then what the recipe meant when it was locked is unknown).
[[nodiscard]] Result<manifest::Lockfile> with_recorded_inputs(const recipe::Recipe& recipe,
                                                              const std::filesystem::path& file);

}  // namespace bootstrap::lockfile
