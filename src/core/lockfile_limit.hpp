#pragma once
// The bound of a lockfile, shared by its readers in steps/ (a pylock step), manifest/ (JSON) and
// lockfile/ (a --locked run's pylock.toml), which share no module above core.

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace bootstrap::core {

/// The most a lockfile (bootstrap's JSON or any pylock.toml) may hold: real ones are at most a
/// few MiB (a thousand packages, every platform's wheels), and reading one costs a few times
/// its size.
inline constexpr std::uint64_t k_max_lockfile = std::uint64_t{8} << 20;

/// A lockfile's text (read_regular_file's rules); a larger one is a usage error naming its size
/// and the bound, never read into memory.
[[nodiscard]] Result<std::string> read_lockfile_text(const std::filesystem::path& file);

}  // namespace bootstrap::core
