#pragma once
// Placeholder answers for one plan: {env.*}, {vars.*}, {venv.*}, {python.*}, {host.cpus} from
// the facts, and {device.*} from the GPU probes — run lazily, at most once per plan, never for
// a recipe that uses none, and not at all with --arch or --no-device; torch's answer is cached
// in the venv (torch_probe_cache.hpp), so a re-run starts no Python for it.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/arch.hpp"
#include "engine/facts.hpp"
#include "recipe/placeholders.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::engine {

/// What expanding `{device.*}` found out, for the plan to keep.
struct DeviceFindings {
    std::vector<std::string> notes;    // remarks for the plan ("device: ...")
    std::vector<std::string> notices;  // the loud ones among `notes` (`run` shows them)
    /// What `{device.*}` stood for: cuda_archs, cuda_archs_from, gpus, driver_version (when
    /// known). Empty when nothing was probed.
    std::map<std::string, std::string> facts;
};

namespace fs = std::filesystem;

/// The most a plan expands in all its values together.
inline constexpr size_t k_max_expanded_total = 16u << 20;

class Expander {
public:
    Expander(const recipe::Recipe& r, const Facts& f) : m_recipe(r), m_facts(f) {}

    void set_venv(const fs::path& venv) { m_venv = venv; }

    /// Enables `{device.*}`: `arch` is --arch, `no_device` --no-device (either: nothing is
    /// probed). Without it a device value is "not known yet". `write_caches` false (`plan`):
    /// the torch probe's cache (torch_probe_cache.hpp) is read but not written.
    void set_device(const std::optional<std::string>& arch, bool no_device, bool write_caches = true);

    /// While deferred, a `{device.*}` value is "not known" (the step is incomplete) and nothing is
    /// probed: for steps a run does not select, and for [vars] until a selected step uses them.
    void set_device_deferred(bool deferred) { m_device_deferred = deferred; }

    /// What the device probes found since the last call (notes, notices), and the device facts.
    [[nodiscard]] DeviceFindings take_findings();

    [[nodiscard]] Result<recipe::Expanded> expand(const recipe::Text& text);

    /// Expand [vars] in order (a variable may use those before it). A variable holding a
    /// `{device.*}` value is expanded again, probing, when a step that is not deferred uses it.
    [[nodiscard]] Status resolve_vars();

    /// The step whose values are expanded from now on ("": none): each `{env.NAME}` they read,
    /// directly or through [vars], records it (EnvRead::steps).
    void set_step(std::string id) { m_step = std::move(id); }

    /// Every `{env.NAME}` expanded so far, by name.
    [[nodiscard]] const std::map<std::string, EnvRead>& env_read() const { return m_env_read; }
    /// The [vars] whose values are known, by name.
    [[nodiscard]] std::map<std::string, std::string> known_vars() const;

    /// How many `{device.*}` values have been expanded so far, and the arches they stand for.
    [[nodiscard]] int device_uses() const { return m_device_uses; }
    [[nodiscard]] const device::ArchChoice* device_choice_made() const {
        return m_device && *m_device ? &**m_device : nullptr;
    }

private:
    Result<std::optional<std::string>> answer(const recipe::Placeholder& p);
    void note_env_read(const std::string& name);
    Result<const device::ArchChoice*> device_choice();
    Result<device::ArchChoice> choose_device();

    const recipe::Recipe& m_recipe;
    const Facts& m_facts;
    size_t m_expanded_bytes = 0;  // what expand() returned so far
    fs::path m_venv;
    std::map<std::string, recipe::Expanded> m_vars;
    std::set<std::string> m_vars_waiting_for_device;  // incomplete only for a deferred device
    device::ArchRequest m_device_request;
    bool m_device_enabled = false;
    bool m_device_deferred = false;
    bool m_device_asked = false;  // a {device.*} value was asked for while deferred
    bool m_write_caches = true;
    DeviceFindings m_findings;
    std::map<std::string, EnvRead> m_env_read;
    std::string m_step;                                      // set_step
    std::map<std::string, std::set<std::string>> m_var_env;  // per [vars] value: the {env.*} it reads
    std::set<std::string>* m_var_reads = nullptr;            // while resolve_vars expands one
    const recipe::SourceLoc* m_loc = nullptr;                // the text being expanded
    std::optional<Result<device::ArchChoice>> m_device;
    int m_device_uses = 0;
};

}  // namespace bootstrap::engine
