#include "cli/doctor_state.hpp"

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/sha256.hpp"
#include "engine/fixed_point.hpp"
#include "engine/install_repair.hpp"
#include "engine/plan.hpp"
#include "pyenv/dist_info.hpp"
#include "state/journal.hpp"

namespace bootstrap::cli {

Status read_venv_state(doctor::DoctorOptions& options) {
    if (auto journal = state::Journal::load(options.venv)) {
        for (const auto& [id, entry] : journal->steps)
            if (entry.status == state::StepStatus::ok && !entry.index_urls.empty())
                options.step_indexes[id] = entry.index_urls;
        // Which step owns each distribution, in recipe order (ownership moves forward): the
        // step a doctor fix re-runs. Without the recipe the entry that finished last owns it
        // (an image's one run finished its steps in order).
        std::vector<std::pair<std::string, const state::JournalEntry*>> order;
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
            if (entry->status == state::StepStatus::ok)
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

std::vector<doctor::Finding> recipe_state_findings(const recipe::Recipe& recipe, const std::filesystem::path& venv) {
    std::vector<doctor::Finding> out;
    engine::PlanOptions options;
    options.venv = venv;
    options.dry_run = true;
    options.probe_devices = false;
    options.collect_pin_conflicts = true;
    auto facts = engine::gather_facts(venv, false);
    if (!facts || !facts->python) return out;
    auto plan = engine::make_plan(recipe, options, *facts);
    if (!plan) return out;
    const std::string file = recipe.file.string();
    for (const auto& conflict : plan->pin_conflicts) {
        doctor::Finding f;
        f.rule = "pin-conflict";
        f.severity = recipe::Severity::error;
        f.message = conflict.message;
        f.fix = conflict.detail;
        f.explain =
            "each run installs the later pin over the earlier one, and the earlier step's check leaves out "
            "what a later step asks for: the venv never holds what the earlier step stands for";
        out.push_back(std::move(f));
    }
    if (auto marker = engine::read_changing_marker(venv)) {
        doctor::Finding f;
        f.rule = "install-cut-short";
        f.severity = recipe::Severity::error;
        f.message = engine::describe(*marker);
        f.fix = fmt::format("bootstrap run {}", file);
        f.explain =
            "a distribution it was installing may have only part of its files; the run checks every "
            "installed distribution's files against its RECORD and installs again what is incomplete";
        out.push_back(std::move(f));
    }
    auto journal = state::Journal::load(venv);
    auto installed = pyenv::scan_venv_packages(*facts->python);
    if (!journal || !installed) return out;
    auto extras = engine::unowned_extras(*plan, *journal, *installed, facts->python->markers);
    if (extras && !extras->empty()) {
        doctor::Finding f;
        f.rule = "unowned-extras";
        f.severity = recipe::Severity::warning;
        f.message =
            fmt::format("{} installed that no step of {} installs: {}",
                        extras->size() == 1 ? "a distribution is" : fmt::format("{} distributions are", extras->size()),
                        recipe.name, engine::describe(*extras));
        f.fix = fmt::format("bootstrap run {} --exact", file);
        f.explain =
            "installed by hand or by a step since taken out of the recipe: a node built from the recipe "
            "or its lockfile will not have it, and `lock` refuses the venv while it is there";
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace bootstrap::cli
