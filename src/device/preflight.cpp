#include "device/preflight.hpp"

#include <set>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "device/toolchain.hpp"

namespace bootstrap::device {

namespace {

using Outcome = CheckResult::Outcome;

CheckResult result(std::string name, Outcome outcome, std::string message) {
    return CheckResult{std::move(name), outcome, std::move(message)};
}

CheckResult torch_kernels(const ProbeAnswer* torch, const ArchChoice& choice) {
    const char* name = "torch kernels";
    if (!torch || !torch->available)
        return result(name, Outcome::skipped, torch ? "no torch: " + torch->unavailable_reason : "no torch probed");
    std::vector<std::string> covered_archs;
    for (const auto& arch : std::set<Arch>(choice.archs.begin(), choice.archs.end())) {
        auto covered = check_torch_covers(torch->torch_arch_flags, arch);
        if (!covered) return result(name, Outcome::failed, covered.error().message);
        covered_archs.push_back(arch.dotted());
    }
    return result(name, Outcome::ok,
                  fmt::format("torch {} has kernels for {} (built for {})", torch->torch_version,
                              core::join(covered_archs, ", "), core::join(torch->torch_arch_flags, " ")));
}

}  // namespace

std::string_view to_string(CheckResult::Outcome outcome) {
    switch (outcome) {
        case Outcome::ok: return "ok";
        case Outcome::failed: return "failed";
        case Outcome::skipped: return "skipped";
    }
    return "?";
}

std::vector<CheckResult> build_checks(const ProbeAnswer* torch, const ArchChoice& choice,
                                      const std::filesystem::path& python, const exec::EnvMap& env) {
    std::vector<CheckResult> out;
    out.push_back(torch_kernels(torch, choice));
    bool have_torch = torch && torch->available;

    auto list = parse_torch_arch_list(choice.derived.torch_arch_list);
    auto nvcc = find_nvcc(env);
    if (nvcc.empty()) {
        const char* why = "no nvcc found ($CUDA_HOME/bin, $CUDA_PATH/bin, PATH, /usr/local/cuda/bin)";
        out.push_back(result("nvcc version", Outcome::skipped, why));
        out.push_back(result("nvcc arches", Outcome::skipped, why));
    } else {
        auto release = nvcc_release(nvcc, env);
        if (!release) {
            out.push_back(result("nvcc version", Outcome::failed, release.error().message));
        } else if (!have_torch) {
            out.push_back(result("nvcc version", Outcome::skipped,
                                 fmt::format("{} is CUDA {}; no torch to compare with", nvcc.string(), *release)));
        } else if (auto same = check_nvcc_matches_torch(*release, torch->cuda_version); !same) {
            out.push_back(result("nvcc version", Outcome::failed, same.error().message));
        } else {
            out.push_back(result("nvcc version", Outcome::ok,
                                 fmt::format("{} is CUDA {}, as torch.version.cuda", nvcc.string(), *release)));
        }
        auto archs = nvcc_gpu_archs(nvcc, env);
        if (!archs) {
            out.push_back(result("nvcc arches", Outcome::failed, archs.error().message));
        } else if (!list) {
            out.push_back(result("nvcc arches", Outcome::failed, list.error().message));
        } else if (auto ok = check_archs_supported_by_nvcc(*list, *archs); !ok) {
            out.push_back(result("nvcc arches", Outcome::failed, ok.error().message));
        } else {
            out.push_back(result("nvcc arches", Outcome::ok,
                                 fmt::format("nvcc compiles for {}", choice.derived.torch_arch_list)));
        }
    }

    const char* name = "torch arch list";
    if (!have_torch || python.empty()) {
        out.push_back(result(name, Outcome::skipped, "no torch to ask"));
    } else if (!list) {
        out.push_back(result(name, Outcome::failed, list.error().message));
    } else if (auto flags = torch_arch_flags_for(python, choice.derived.torch_arch_list, env); flags) {
        out.push_back(result(
            name, Outcome::ok,
            fmt::format("TORCH_CUDA_ARCH_LIST={} gives {}", choice.derived.torch_arch_list, core::join(*flags, " "))));
    } else if (flags.error().code == ErrorCode::usage) {
        out.push_back(result(name, Outcome::failed, flags.error().message));
    } else {
        out.push_back(result(name, Outcome::skipped, flags.error().message));
    }
    return out;
}

}  // namespace bootstrap::device
