#pragma once
// The two sides of doctor's "built for" check, gathered for the library (doctor/ reads neither
// manifests nor devices): the arch the venv's history recorded, and the node's GPUs.

#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "doctor/built_for.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::cli {

/// The newest entry of `<venv>/.bootstrap/history/` that recorded `device.cuda_archs`; nullopt
/// when none did (or there is no history). Unreadable entries are passed over.
[[nodiscard]] std::optional<doctor::RecordedArch> recorded_arch(const std::filesystem::path& venv);

/// The node's GPUs: `arch` when given ("--arch 8.0", probing nothing; a malformed one is a
/// usage error), else what the driver, NVML and nvidia-smi see, in the recipe's `[device]
/// probes` order (torch is not asked: it says what torch was built for, not which GPU is here).
[[nodiscard]] Result<doctor::NodeDevice> node_device(const std::string& arch, const recipe::Recipe* recipe,
                                                     const exec::EnvMap& env);

}  // namespace bootstrap::cli
