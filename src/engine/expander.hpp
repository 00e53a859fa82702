#pragma once
// Placeholder answers for one plan: {env.*}, {vars.*}, {venv.*}, {python.*}, {host.cpus} from
// the facts, and {device.*} from the GPU probes — run lazily, at most once per plan, and never
// for a recipe that uses none.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "device/arch.hpp"
#include "engine/plan.hpp"
#include "recipe/placeholders.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

class Expander {
public:
    Expander(const recipe::Recipe& r, const Facts& f) : m_recipe(r), m_facts(f) {}

    void set_venv(const fs::path& venv) { m_venv = venv; }

    /// Enables `{device.*}`: the request from the options, and the plan that gets the notices
    /// and the device facts. Without it a device value is "not known yet".
    void set_device(const PlanOptions& options, Plan* plan);

    [[nodiscard]] Result<recipe::Expanded> expand(const recipe::Text& text);

    /// Expand [vars] in order (a variable may use those before it).
    [[nodiscard]] Status resolve_vars();

    /// How many `{device.*}` values have been expanded so far, and the arches they stand for.
    [[nodiscard]] int device_uses() const { return m_device_uses; }
    [[nodiscard]] const device::ArchChoice* device_choice_made() const {
        return m_device && *m_device ? &**m_device : nullptr;
    }

private:
    Result<std::optional<std::string>> answer(const recipe::Placeholder& p);
    Result<const device::ArchChoice*> device_choice();
    Result<device::ArchChoice> choose_device();

    const recipe::Recipe& m_recipe;
    const Facts& m_facts;
    fs::path m_venv;
    std::map<std::string, recipe::Expanded> m_vars;
    device::ArchRequest m_device_request;
    Plan* m_plan = nullptr;
    std::optional<Result<device::ArchChoice>> m_device;
    int m_device_uses = 0;
};

}  // namespace bootstrap::engine
