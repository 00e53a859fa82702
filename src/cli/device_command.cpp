// `bootstrap device`: every probe's answer, the one that counts, disagreements, the derived arch
// strings and the pre-build checks.
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "core/strings.hpp"
#include "device/arch.hpp"
#include "device/preflight.hpp"
#include "device/probe.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

struct DeviceArgs {
    std::string venv;
    std::string probes;  // "torch,driver"
    std::string arch;
    std::string recipe;
    bool no_device = false;
    bool ptx = false;
    bool json = false;
};

std::string gpu_text(const device::GpuInfo& g) {
    return fmt::format("GPU {}{} {}.{}", g.index, g.name.empty() ? "" : " " + g.name, g.major, g.minor);
}

std::string answer_text(const device::ProbeAnswer& a) {
    if (!a.available) return "unavailable: " + a.unavailable_reason;
    std::vector<std::string> parts;
    if (a.gpus.empty()) {
        parts.push_back("no GPU");
    } else {
        std::vector<std::string> gpus;
        for (const auto& g : a.gpus) gpus.push_back(gpu_text(g));
        parts.push_back(core::join(gpus, ", "));
    }
    if (!a.torch_version.empty()) parts.push_back("torch " + a.torch_version);
    if (!a.cuda_version.empty()) parts.push_back("CUDA " + a.cuda_version);
    if (!a.driver_version.empty()) parts.push_back("driver " + a.driver_version);
    if (!a.torch_arch_flags.empty()) parts.push_back("built for " + core::join(a.torch_arch_flags, " "));
    return core::join(parts, "; ");
}

void print_device(const device::DeviceReport* report, const device::ProbeAnswer* torch_only,
                  const Result<device::ArchChoice>& choice, const std::vector<device::CheckResult>& checks) {
    if (report) {
        fmt::print("probes (order: {}):\n", core::join(report->order, ", "));
        for (size_t i = 0; i < report->answers.size(); ++i) {
            const auto& a = report->answers[i];
            std::string role = report->chosen == i ? "  <- used" : i >= report->order.size() ? "  (cross-check)" : "";
            fmt::print("  {:<11} {}{}\n", a.probe, answer_text(a), role);
            for (const auto& note : a.notes) fmt::print("  {:<11}   note: {}\n", "", note);
        }
        for (const auto& w : report->warnings) fmt::print("warning: {}\n", w);
    } else {
        fmt::print("probes: not run (--no-device)\n");
        if (torch_only) fmt::print("  {:<11} {}  (for the checks only)\n", "torch", answer_text(*torch_only));
    }
    if (!choice) return;
    const auto& c = *choice;
    fmt::print("\narch: {} ({}, {})\n", c.derived.arch, device::to_string(c.source), c.origin);
    for (const auto& n : c.notices) fmt::print("NOTE: {}\n", n);
    fmt::print("  {{device.arch}}             {}\n", c.derived.arch);
    fmt::print("  {{device.torch_arch_list}}  {}\n", c.derived.torch_arch_list);
    fmt::print("  {{device.nvte_archs}}       {}\n", c.derived.nvte_archs);
    fmt::print("  {{device.cmake_archs}}      {}\n", c.derived.cmake_archs);
    fmt::print("\nchecks before a CUDA build:\n");
    for (const auto& check : checks)
        fmt::print("  {:<7} {:<16} {}\n", device::to_string(check.outcome), check.name, check.message);
}

nlohmann::json answer_json(const device::ProbeAnswer& a, bool cross_check) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : a.gpus)
        gpus.push_back(
            {{"index", g.index}, {"name", g.name}, {"compute_capability", fmt::format("{}.{}", g.major, g.minor)}});
    return {{"probe", a.probe},
            {"available", a.available},
            {"unavailable_reason", a.unavailable_reason},
            {"cross_check_only", cross_check},
            {"source", a.library},
            {"gpus", gpus},
            {"driver_version", a.driver_version},
            {"cuda_version", a.cuda_version},
            {"torch_version", a.torch_version},
            {"torch_arch_flags", a.torch_arch_flags},
            {"notes", a.notes}};
}

std::string device_json(const device::DeviceReport* report, const device::ProbeAnswer* torch_only,
                        const Result<device::ArchChoice>& choice, const std::vector<device::CheckResult>& checks) {
    nlohmann::json doc;
    doc["probed"] = report != nullptr;
    doc["order"] = report ? report->order : std::vector<std::string>{};
    doc["probes"] = nlohmann::json::array();
    doc["chosen"] = nullptr;
    doc["warnings"] = report ? report->warnings : std::vector<std::string>{};
    if (report) {
        for (size_t i = 0; i < report->answers.size(); ++i)
            doc["probes"].push_back(answer_json(report->answers[i], i >= report->order.size()));
        if (const auto* chosen = report->chosen_answer()) doc["chosen"] = chosen->probe;
    } else if (torch_only) {
        doc["probes"].push_back(answer_json(*torch_only, true));
    }
    if (choice) {
        doc["arch"] = {{"source", device::to_string(choice->source)},
                       {"origin", choice->origin},
                       {"notices", choice->notices},
                       {"arch", choice->derived.arch},
                       {"torch_arch_list", choice->derived.torch_arch_list},
                       {"nvte_archs", choice->derived.nvte_archs},
                       {"cmake_archs", choice->derived.cmake_archs}};
        doc["error"] = nullptr;
    } else {
        doc["arch"] = nullptr;
        doc["error"] = {{"message", choice.error().message}, {"detail", choice.error().detail}};
    }
    doc["checks"] = nlohmann::json::array();
    for (const auto& c : checks)
        doc["checks"].push_back({{"name", c.name}, {"outcome", device::to_string(c.outcome)}, {"message", c.message}});
    return doc.dump(2) + "\n";
}

int execute_device(const DeviceArgs& args) {
    exec::EnvMap env = exec::compose_environment(exec::current_environment(), {}, {});
    device::ArchRequest request;
    request.no_device = args.no_device;
    request.ptx = args.ptx;
    if (!args.arch.empty()) request.given = args.arch;
    std::vector<std::string> order;
    if (!args.recipe.empty()) {
        auto recipe = steps::load_recipe(args.recipe);
        if (!recipe) return report_error(recipe.error(), args.json);
        order = recipe->device_probes;
        request.fallback_arch = recipe->device_fallback_arch;
    }
    if (!args.probes.empty()) {
        order.clear();
        for (const auto& p : core::split(args.probes, ','))
            if (!core::trim(p).empty()) order.emplace_back(core::trim(p));
    }
    std::filesystem::path venv = args.venv;
    std::optional<device::DeviceReport> report;
    std::optional<device::ProbeAnswer> torch_only;  // --no-device: torch still informs the checks
    if (!args.no_device) {
        auto detected = device::detect(order, venv, env);
        if (!detected) return report_error(detected.error(), args.json);
        report = std::move(*detected);
    } else if (!venv.empty()) {
        torch_only = device::probe_torch(venv / "bin" / "python", env);
    }
    std::string chosen_by = report && report->chosen_answer() ? report->chosen_answer()->probe : "";
    auto choice = device::choose_archs(report ? report->archs() : std::vector<device::Arch>{}, chosen_by, request);
    if (!choice && choice.error().code == ErrorCode::usage && !args.json) return report_error(choice.error(), false);
    std::vector<device::CheckResult> checks;
    if (choice) {
        const device::ProbeAnswer* torch = report ? report->find("torch") : (torch_only ? &*torch_only : nullptr);
        std::filesystem::path python = venv.empty() ? std::filesystem::path() : venv / "bin" / "python";
        checks = device::build_checks(torch, *choice, python, env);
    }
    const device::DeviceReport* shown = report ? &*report : nullptr;
    const device::ProbeAnswer* shown_torch = torch_only ? &*torch_only : nullptr;
    if (args.json) fmt::print("{}", device_json(shown, shown_torch, choice, checks));
    else print_device(shown, shown_torch, choice, checks);
    if (!choice) {
        if (!args.json) {
            fmt::print("\n");
            TerminalStatus status;
            status.error(choice.error());
        }
        return exit_code_for(choice.error());
    }
    for (const auto& c : checks)
        if (c.outcome == device::CheckResult::Outcome::failed) return 1;
    return 0;
}

}  // namespace

void set_device_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<DeviceArgs>();
    auto* cmd = app.add_subcommand("device",
                                   "Show what every GPU probe reports, the arch a CUDA build would target, and the "
                                   "pre-build checks (exit 1: no arch, or a check failed)");
    cmd->add_option("--venv", args->venv, "Ask this venv's torch too");
    cmd->add_option("--probes", args->probes,
                    "Probe order, comma-separated (default torch,driver,nvml,nvidia-smi); the "
                    "first that sees a GPU counts, the rest cross-check");
    cmd->add_option("--arch", args->arch, "Build for this compute capability (e.g. 9.0)");
    cmd->add_flag("--no-device", args->no_device,
                  "Probe no GPU (a --venv torch is still asked, for the checks); build for the "
                  "recipe's [device] fallback_arch (needs --recipe)");
    cmd->add_option("--recipe", args->recipe, "Take [device] probes and fallback_arch from a recipe");
    cmd->add_flag("--ptx", args->ptx, "Add +PTX to the highest arch, as [device] ptx = true does");
    cmd->add_flag("--json", args->json, "Print the report as JSON");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_device(*args); });
}

}  // namespace bootstrap::cli
