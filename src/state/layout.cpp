#include "state/layout.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::state {

bool Layout::exists() const {
    std::error_code ec;
    return fs::is_directory(dir(), ec);
}

fs::path Layout::locked_requirements(std::string_view step_id, size_t index) const {
    return locked() / (index == 0 ? fmt::format("{}.txt", step_id) : fmt::format("{}.{}.txt", step_id, index + 1));
}

bool is_host_local_state(const std::string& rel) {
    const std::string prefix = std::string(k_state_dir) + "/";
    if (!core::starts_with(rel, prefix)) return false;
    const std::string name = fs::path(rel).filename().string();
    return rel == prefix + "lock" || rel == prefix + "logs" || core::starts_with(rel, prefix + "logs/") ||
           name.ends_with(".facts") || name.ends_with(".cache") || name == "torch-probe.json" ||
           core::temp_name_pid(name) != 0;
}

}  // namespace bootstrap::state
