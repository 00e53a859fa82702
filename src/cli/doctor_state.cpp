#include "cli/doctor_state.hpp"

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include "core/sha256.hpp"
#include "engine/fixed_point.hpp"
#include "engine/journal.hpp"

namespace bootstrap::cli {

Status read_venv_state(doctor::DoctorOptions& options) {
    if (auto journal = engine::Journal::load(options.venv)) {
        for (const auto& [id, entry] : journal->steps)
            if (entry.status == engine::StepStatus::ok && !entry.index_urls.empty())
                options.step_indexes[id] = entry.index_urls;
        // Which step owns each distribution, in recipe order (ownership moves forward): the
        // step a doctor fix re-runs. Without the recipe the entry that finished last owns it
        // (an image's one run finished its steps in order).
        std::vector<std::pair<std::string, const engine::JournalEntry*>> order;
        if (options.recipe) {
            for (const auto& step : options.recipe->steps)
                if (auto it = journal->steps.find(step.id); it != journal->steps.end())
                    order.emplace_back(step.id, &it->second);
        } else {
            for (const auto& [id, entry] : journal->steps) order.emplace_back(id, &entry);
            std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
                return a.second->finished_at < b.second->finished_at;
            });
        }
        for (const auto& [id, entry] : order)
            if (entry->status == engine::StepStatus::ok)
                for (const auto& [dist, record] : entry->dists) options.owners[dist] = id;
    }
    if (options.recipe) return {};
    BS_TRY(auto recorded, engine::read_declared_overrides(options.venv));
    if (!recorded) return {};
    options.recorded_overrides_file = engine::declared_overrides_path(options.venv);
    options.recorded_overrides.emplace();
    for (const auto& o : recorded->overrides)
        options.recorded_overrides->push_back({o.step, o.dependent, o.dependency});
    // The recipe file names a command that works only while it is the recipe that built the venv.
    std::error_code ec;
    const auto& file = recorded->recipe_file;
    if (!file.empty() && std::filesystem::is_regular_file(file, ec))
        if (auto digest = core::sha256_file(file); digest && *digest == recorded->recipe_digest)
            options.recorded_recipe = file;
    return {};
}

}  // namespace bootstrap::cli
