#include "state/layout.hpp"

#include <algorithm>
#include <vector>

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
           rel == prefix + "builds" || core::starts_with(rel, prefix + "builds/") || name.ends_with(".facts") ||
           name.ends_with(".cache") || name == "torch-probe.json" || core::temp_name_pid(name) != 0;
}

Result<std::vector<std::string>> drop_host_local_state(const fs::path& venv) {
    const Layout layout(venv);
    const fs::path dir = layout.dir();
    const std::string lock_rel = layout.lock().lexically_relative(venv).generic_string();
    std::vector<fs::path> doomed;
    std::vector<std::string> removed;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const std::string rel = it->path().lexically_relative(venv).generic_string();
        if (rel == lock_rel || !is_host_local_state(rel)) continue;
        doomed.push_back(it->path());
        it.disable_recursion_pending();
    }
    if (ec && ec != std::errc::no_such_file_or_directory)
        return fail(ErrorCode::io, fmt::format("cannot read {}: {}", dir.string(), ec.message()));
    std::sort(doomed.begin(), doomed.end());
    for (const auto& path : doomed) {
        fs::remove_all(path, ec);
        if (ec) return fail(ErrorCode::io, fmt::format("cannot remove {}: {}", path.string(), ec.message()));
        removed.push_back(path.lexically_relative(venv).generic_string());
    }
    return removed;
}

}  // namespace bootstrap::state
