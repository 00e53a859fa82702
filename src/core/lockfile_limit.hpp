#pragma once
// The bound of a lockfile, shared by its readers in steps/ (a pylock step), manifest/ (JSON) and
// lockfile/ (a --locked run's pylock.toml), which share no module above core.

#include <cstdint>

namespace bootstrap::core {

/// The most a lockfile (bootstrap's JSON or any pylock.toml) may hold: real ones are at most a
/// few MiB (a thousand packages, every platform's wheels), and reading one costs a few times
/// its size; a larger file is refused (read_regular_file names its size and this bound).
inline constexpr std::uint64_t k_max_lockfile = std::uint64_t{8} << 20;

}  // namespace bootstrap::core
