#include "cli/doctor_device.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device/arch.hpp"
#include "device/probe.hpp"
#include "manifest/history.hpp"
#include "manifest/manifest.hpp"
#include "state/journal.hpp"

namespace bootstrap::cli {

std::optional<doctor::RecordedArch> recorded_arch(const std::filesystem::path& venv) {
    // The journal holds the newest run that built for an arch (whether or not it changed a
    // distribution); the history, for venvs of bootstraps that did not keep it there.
    if (auto journal = state::Journal::load(venv)) {
        const auto& device = journal->device;
        if (auto archs = device.find("cuda_archs"); archs != device.end() && !archs->second.empty()) {
            doctor::RecordedArch out;
            out.archs = archs->second;
            if (auto from = device.find("cuda_archs_from"); from != device.end()) out.origin = from->second;
            if (auto gpus = device.find("gpus"); gpus != device.end()) out.gpus = gpus->second;
            out.manifest = state::Journal::path_for(venv);
            return out;
        }
    }
    auto entries = manifest::list_history(venv);
    if (!entries) return std::nullopt;
    for (auto it = entries->rbegin(); it != entries->rend(); ++it) {
        auto m = manifest::load_manifest(it->file);
        if (!m) continue;
        auto archs = m->device.find("cuda_archs");
        if (archs == m->device.end() || archs->second.empty()) continue;
        doctor::RecordedArch out;
        out.archs = archs->second;
        if (auto from = m->device.find("cuda_archs_from"); from != m->device.end()) out.origin = from->second;
        if (auto gpus = m->device.find("gpus"); gpus != m->device.end()) out.gpus = gpus->second;
        out.manifest = it->file;
        return out;
    }
    return std::nullopt;
}

Result<doctor::NodeDevice> node_device(const std::string& arch, const recipe::Recipe* recipe, const exec::EnvMap& env) {
    doctor::NodeDevice out;
    if (!arch.empty()) {
        auto parsed = device::parse_arch(arch);
        if (!parsed) return fail(ErrorCode::usage, fmt::format("--arch: {}", parsed.error().message));
        out.gpus.push_back({"", parsed->major, parsed->minor});
        out.origin = fmt::format("--arch {}", arch);
        return out;
    }
    std::vector<std::string> order;
    if (recipe)
        for (const auto& probe : recipe->device_probes)
            if (probe != "torch") order.push_back(probe);
    if (order.empty())
        for (const auto& probe : device::known_probes())
            if (probe != "torch") order.push_back(probe);
    // No venv: the torch probe answers "unavailable" without starting Python.
    BS_TRY(auto report, device::detect(order, {}, env));
    if (const auto* chosen = report.chosen_answer()) {
        for (const auto& g : chosen->gpus) out.gpus.push_back({g.name, g.major, g.minor});
        out.origin = fmt::format("probe '{}'", chosen->probe);
        return out;
    }
    for (const auto& answer : report.answers) {
        if (answer.probe == "torch") continue;
        if (!answer.available) out.notes.push_back(fmt::format("{}: {}", answer.probe, answer.unavailable_reason));
        else if (answer.gpus.empty()) out.notes.push_back(fmt::format("{}: sees no GPU", answer.probe));
        else  // a cross-check only: the recipe does not trust this probe's answer
            out.notes.push_back(
                fmt::format("{}: sees {} GPU(s), but is not in the recipe's "
                            "[device] probes ({})",
                            answer.probe, answer.gpus.size(), fmt::join(report.order, ", ")));
    }
    return out;
}

}  // namespace bootstrap::cli
