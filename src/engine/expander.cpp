#include "engine/expander.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "device/probe.hpp"
#include "engine/torch_probe_cache.hpp"

namespace bootstrap::engine {

void Expander::set_device(const std::optional<std::string>& arch, bool no_device, bool write_caches) {
    m_write_caches = write_caches;
    m_device_request.given = arch;
    m_device_request.no_device = no_device;
    m_device_request.fallback_arch = m_recipe.device_fallback_arch;
    m_device_request.ptx = m_recipe.device_ptx;
    m_device_enabled = true;
}

DeviceFindings Expander::take_findings() {
    DeviceFindings out;
    out.notes = std::move(m_findings.notes);
    out.notices = std::move(m_findings.notices);
    out.facts = m_findings.facts;
    m_findings.notes.clear();
    m_findings.notices.clear();
    return out;
}

Result<recipe::Expanded> Expander::expand(const recipe::Text& text) {
    const recipe::SourceLoc* outer = m_loc;
    m_loc = &text.loc;
    auto out = recipe::expand(text, [this](const recipe::Placeholder& p) { return answer(p); });
    m_loc = outer;
    // Each value is capped (recipe::k_max_expanded_value); so is all a plan expands, or many
    // placeholders of one large value would still exhaust memory.
    if (out) {
        m_expanded_bytes += out->value.size();
        if (m_expanded_bytes > k_max_expanded_total)
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: the recipe's values expand to more than {} MiB in all; no recipe needs "
                                    "that much (a large value repeated by many placeholders?)",
                                    text.loc.str(), k_max_expanded_total >> 20));
    }
    return out;
}

std::map<std::string, std::string> Expander::known_vars() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, e] : m_vars)
        if (e.complete) out[name] = e.value;
    return out;
}

Status Expander::resolve_vars() {
    // Every variable is checked now (an unset {env.X} is an error before anything runs), but a
    // device value waits for a step that needs it: a run that selects no such step probes nothing.
    const bool deferred = m_device_deferred;
    m_device_deferred = true;
    for (const auto& [name, text] : m_recipe.vars) {
        m_device_asked = false;
        std::set<std::string> reads;
        m_var_reads = &reads;
        auto e = expand(text);
        m_var_reads = nullptr;
        m_var_env[name] = std::move(reads);
        if (!e) {
            m_device_deferred = deferred;
            return tl::unexpected(e.error());
        }
        if (!e->complete && m_device_asked) m_vars_waiting_for_device.insert(name);
        m_vars[name] = *e;
    }
    m_device_deferred = deferred;
    return {};
}

Result<std::optional<std::string>> Expander::answer(const recipe::Placeholder& p) {
    if (p.ns == "env") {
        auto it = m_facts.env.find(p.name);
        if (!m_env_read.count(p.name))
            m_env_read[p.name] = EnvRead{it == m_facts.env.end() ? std::nullopt : std::optional(it->second),
                                         m_loc ? *m_loc : recipe::SourceLoc{},
                                         {}};
        note_env_read(p.name);
        if (it != m_facts.env.end()) return std::optional<std::string>(it->second);
        if (p.default_value) return std::optional<std::string>(*p.default_value);
        return fail(ErrorCode::invalid_recipe, fmt::format("environment variable {} is not set (used as {{env.{}}}); "
                                                           "set it, or give a default: {{env.{}:-VALUE}}",
                                                           p.name, p.name, p.name));
    }
    if (p.ns == "vars") {
        auto it = m_vars.find(p.name);
        if (it == m_vars.end())
            return fail(ErrorCode::invalid_recipe, fmt::format("{{vars.{}}} is not defined", p.name));
        for (const auto& name : m_var_env[p.name]) note_env_read(name);
        if (!it->second.complete && !m_device_deferred && m_vars_waiting_for_device.count(p.name)) {
            auto text = std::find_if(m_recipe.vars.begin(), m_recipe.vars.end(),
                                     [&](const auto& v) { return v.first == p.name; });
            BS_TRY(auto e, expand(text->second));
            if (e.complete) {
                m_vars_waiting_for_device.erase(p.name);
                it->second = e;
            }
            if (!e.complete) return std::optional<std::string>();
            return std::optional<std::string>(e.value);
        }
        if (!it->second.complete) return std::optional<std::string>();
        return std::optional<std::string>(it->second.value);
    }
    if (p.ns == "venv") {
        if (m_venv.empty()) return std::optional<std::string>();
        if (p.name == "path") return std::optional<std::string>(m_venv.string());
        if (p.name == "python") return std::optional<std::string>(pyenv::venv_python(m_venv).string());
    }
    if (p.ns == "python") {
        if (!m_facts.python) return std::optional<std::string>();
        if (p.name == "version") return std::optional<std::string>(m_facts.python->version);
        if (p.name == "ext_suffix") return std::optional<std::string>(m_facts.python->ext_suffix);
        if (p.name == "site_packages") return std::optional<std::string>(m_facts.python->purelib.string());
    }
    if (p.ns == "host" && p.name == "cpus") return std::optional<std::string>(std::to_string(m_facts.cpus));
    if (p.ns == "device") {
        // resolve_venv_path expands [vars] without a plan: a device value is "not known
        // yet" there, so the venv path alone never probes devices.
        if (!m_device_enabled) return std::optional<std::string>();
        if (m_device_deferred) {
            m_device_asked = true;
            return std::optional<std::string>();
        }
        BS_TRY(const device::ArchChoice* choice, device_choice());
        ++m_device_uses;
        const auto& d = choice->derived;
        if (p.name == "arch") return std::optional<std::string>(d.arch);
        if (p.name == "torch_arch_list") return std::optional<std::string>(d.torch_arch_list);
        if (p.name == "nvte_archs") return std::optional<std::string>(d.nvte_archs);
        if (p.name == "cmake_archs") return std::optional<std::string>(d.cmake_archs);
    }
    return fail(ErrorCode::invalid_recipe, fmt::format("unknown placeholder {{{}.{}}}", p.ns, p.name));
}

/// `{env.NAME}` read by the [vars] value being resolved, or by the current step.
void Expander::note_env_read(const std::string& name) {
    if (m_var_reads) m_var_reads->insert(name);
    if (m_step.empty()) return;
    auto& steps = m_env_read[name].steps;
    if (std::find(steps.begin(), steps.end(), m_step) == steps.end()) steps.push_back(m_step);
}

/// The target arches, decided the first time a `{device.*}` placeholder is expanded.
Result<const device::ArchChoice*> Expander::device_choice() {
    if (!m_device) m_device = choose_device();
    if (!*m_device) return tl::unexpected(m_device->error());
    return &**m_device;
}

Result<device::ArchChoice> Expander::choose_device() {
    std::vector<device::Arch> detected;
    std::string detected_by;
    std::vector<std::string> gpus;
    std::string driver;
    // --arch and --no-device probe nothing: a plan that is told the arch needs no GPU, and a
    // no-op run must not start the venv's python to import torch (seconds, hundreds of MB).
    // `bootstrap device --arch` still probes, to show what the arch overrides.
    device::ArchRequest request = m_device_request;
    request.probed = !request.no_device && !request.given;
    if (request.probed) {
        std::error_code ec;
        fs::path venv = !m_venv.empty() && fs::exists(m_venv / "pyvenv.cfg", ec) ? m_venv : fs::path();
        const pyenv::InterpreterFacts* python = m_facts.python ? &*m_facts.python : nullptr;
        auto torch = [&](const fs::path& interpreter, const exec::EnvMap& env, const std::string& view) {
            return cached_probe_torch(venv, python, interpreter, env, view, m_write_caches);
        };
        BS_TRY(auto report, device::detect(m_recipe.device_probes, venv, m_facts.env, torch));
        detected = report.archs();
        if (const auto* chosen = report.chosen_answer()) {
            detected_by = chosen->probe;
            for (const auto& g : chosen->gpus)
                gpus.push_back(fmt::format("{} ({}.{})", g.name.empty() ? "GPU" : g.name, g.major, g.minor));
        }
        for (const auto& answer : report.answers)
            if (driver.empty() && !answer.driver_version.empty()) driver = answer.driver_version;
        for (const auto& w : report.warnings) m_findings.notes.push_back("device: " + w);
    }
    auto choice = device::choose_archs(detected, detected_by, request);
    if (!choice) return tl::unexpected(choice.error());
    for (const auto& n : choice->notices) {
        m_findings.notes.push_back(n);
        m_findings.notices.push_back(n);
    }
    // What the run's manifests record about the device the build targets.
    m_findings.facts["cuda_archs"] = choice->derived.torch_arch_list;
    m_findings.facts["cuda_archs_from"] = choice->origin;
    if (!gpus.empty()) m_findings.facts["gpus"] = core::join(gpus, ", ");
    if (!driver.empty()) m_findings.facts["driver_version"] = driver;
    return choice;
}

}  // namespace bootstrap::engine
