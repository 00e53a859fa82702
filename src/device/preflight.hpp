#pragma once
// The checks to run before a CUDA build, given what the probes found and the arches chosen:
// torch has kernels for the device, nvcc's CUDA release equals torch.version.cuda, nvcc can
// compile for the arch list, and the venv's torch extension builder accepts it.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "device/arch.hpp"
#include "device/probe.hpp"
#include "exec/environment.hpp"

namespace bootstrap::device {

struct CheckResult {
    enum class Outcome { ok, failed, skipped };
    std::string name;  // "torch kernels", "nvcc version", "nvcc arches", "torch arch list"
    Outcome outcome = Outcome::skipped;
    std::string message;  // what was found; for failed, the error message
};

[[nodiscard]] std::string_view to_string(CheckResult::Outcome outcome);  // "ok", "failed", ...

/// Run the pre-build checks. `torch` is the torch probe's answer (may be unavailable), `python`
/// the venv's interpreter (empty: none). A check whose inputs are missing (no torch, no nvcc) is
/// skipped with the reason; nothing here fails outright.
[[nodiscard]] std::vector<CheckResult> build_checks(const ProbeAnswer* torch, const ArchChoice& choice,
                                                    const std::filesystem::path& python, const exec::EnvMap& env);

}  // namespace bootstrap::device
