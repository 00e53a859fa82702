// The probes that run a program (nvidia-smi, the venv's python) and `detect`, which runs them
// all and decides which answer counts. The dlopen probes are in probe_native.cpp.

#include "device/probe.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/env_policy.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"

namespace bootstrap::device {

namespace {

using namespace std::chrono_literals;

// Printed as key=value lines so a torch that lacks one attribute still answers the others.
// `device=` lines: index|major|minor|name (the name last: it may contain anything but newlines).
// stdout and stderr share one pipe: Python warnings raised while probing (torch's about CUDA
// initialisation, pynvml's deprecation) are recorded and printed as `warning=` lines instead of
// on stderr, and any other line (a C++ warning from libtorch on fd 2) is not part of the
// answer: parse_torch_probe keeps both apart from it.
constexpr const char* k_torch_script = R"PY(
import sys, warnings
def out(key, value):
    print(key + "=" + str(value).replace("\n", " "), flush=True)
def answer():
    try:
        import torch
    except BaseException as e:
        out("import_error", type(e).__name__ + ": " + str(e))
        return
    out("torch_version", getattr(torch, "__version__", ""))
    out("cuda_version", getattr(getattr(torch, "version", None), "cuda", None) or "")
    try:
        out("arch_flags", torch._C._cuda_getArchFlags() or "")
    except BaseException as e:
        out("arch_flags_error", type(e).__name__ + ": " + str(e))
    try:
        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            out("device_count", n)
            for i in range(n):
                p = torch.cuda.get_device_properties(i)
                out("device", "%d|%d|%d|%s" % (i, p.major, p.minor, p.name))
        else:
            out("cuda_available", "False")
    except BaseException as e:
        out("cuda_error", type(e).__name__ + ": " + str(e))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    answer()
for w in caught:
    out("warning", "%s: %s" % (w.category.__name__, w.message))
)PY";

// At most this many warning lines are kept per probe (a torch can repeat one per device).
constexpr size_t k_max_warnings = 20;

void add_warning(ProbeAnswer& answer, std::string_view line) {
    std::string text(core::trim(line));
    if (text.empty() || answer.warnings.size() >= k_max_warnings) return;
    if (std::find(answer.warnings.begin(), answer.warnings.end(), text) != answer.warnings.end()) return;
    answer.warnings.push_back(std::move(text));
}

ProbeAnswer unavailable(ProbeAnswer answer, std::string reason) {
    answer.available = false;
    answer.unavailable_reason = std::move(reason);
    answer.gpus.clear();
    return answer;
}

std::optional<int> to_int(std::string_view s) {
    s = core::trim(s);
    if (s.empty() || s.size() > 6) return std::nullopt;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

std::string first_line(std::string_view text) {
    std::string_view t = core::trim(text);
    return std::string(t.substr(0, t.find('\n')));
}

std::string describe_gpus(const std::vector<GpuInfo>& gpus) {
    if (gpus.empty()) return "no GPU";
    std::vector<std::string> parts;
    for (const auto& g : gpus)
        parts.push_back(fmt::format("GPU {}{} {}.{}", g.index, g.name.empty() ? "" : " " + g.name, g.major, g.minor));
    return fmt::format("{} GPU{}: {}", gpus.size(), gpus.size() == 1 ? "" : "s", core::join(parts, ", "));
}

std::vector<std::pair<int, int>> sorted_caps(const std::vector<GpuInfo>& gpus) {
    std::vector<std::pair<int, int>> caps;
    for (const auto& g : gpus) caps.emplace_back(g.major, g.minor);
    std::sort(caps.begin(), caps.end());
    return caps;
}

ProbeAnswer run_probe(const std::string& name, const fs::path& venv, const exec::EnvMap& env) {
    if (name == "driver") return probe_driver(libcuda_path(env));
    if (name == "nvml") return probe_nvml(libnvml_path(env));
    if (name == "nvidia-smi") return probe_nvidia_smi(env);
    ProbeAnswer answer;
    answer.probe = "torch";
    if (venv.empty()) return unavailable(answer, "no venv given (--venv), so no torch to ask");
    return probe_torch(venv / "bin" / "python", env);
}

}  // namespace

const std::vector<std::string>& known_probes() {
    static const std::vector<std::string> k_probes{"torch", "driver", "nvml", "nvidia-smi"};
    return k_probes;
}

ProbeAnswer parse_nvidia_smi(std::string_view output, int exit_code) {
    ProbeAnswer answer;
    answer.probe = "nvidia-smi";
    answer.library = "nvidia-smi";
    // Drivers before compute_cap existed (R510) reject the field; that is "unknown", not a fault.
    if (output.find("not a valid field") != std::string_view::npos)
        return unavailable(answer,
                           "this nvidia-smi does not know the compute_cap field (driver "
                           "older than R510): compute capability unknown");
    if (exit_code == 2)
        return unavailable(answer, fmt::format("nvidia-smi rejected the query (exit code 2: "
                                               "invalid argument): compute capability unknown{}",
                                               first_line(output).empty() ? "" : " (" + first_line(output) + ")"));
    if (exit_code != 0)
        return unavailable(answer,
                           fmt::format("nvidia-smi failed with exit code {}: {}", exit_code, first_line(output)));
    int index = 0;
    for (const auto& raw : core::split(output, '\n')) {
        std::string_view line = core::trim(raw);
        if (line.empty()) continue;
        // name, compute_cap, driver_version: split from the right, the name is the rest.
        auto last = line.rfind(',');
        auto middle = last == std::string_view::npos || last == 0 ? std::string_view::npos : line.rfind(',', last - 1);
        if (middle == std::string_view::npos)
            return unavailable(answer, fmt::format("unexpected nvidia-smi line '{}'", line));
        GpuInfo gpu;
        gpu.index = index++;
        gpu.name = std::string(core::trim(line.substr(0, middle)));
        std::string_view cap = core::trim(line.substr(middle + 1, last - middle - 1));
        answer.driver_version = std::string(core::trim(line.substr(last + 1)));
        auto parsed = parse_arch(cap);
        if (!parsed || cap.find('.') == std::string_view::npos)
            return unavailable(answer, fmt::format("nvidia-smi gives compute_cap '{}' for GPU {}: "
                                                   "compute capability unknown",
                                                   cap, gpu.index));
        gpu.major = parsed->major;
        gpu.minor = parsed->minor;
        answer.gpus.push_back(std::move(gpu));
    }
    answer.available = true;
    if (answer.gpus.empty()) answer.notes.push_back("nvidia-smi lists no GPU");
    return answer;
}

ProbeAnswer probe_nvidia_smi(const exec::EnvMap& env) {
    ProbeAnswer answer;
    answer.probe = "nvidia-smi";
    fs::path program = exec::find_program("nvidia-smi", env);
    if (program.empty()) return unavailable(answer, "nvidia-smi not found on PATH");
    exec::ProcessSpec spec;
    spec.argv = {program.string(), "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"};
    spec.env = env;
    spec.capture = true;
    spec.timeout = 60s;
    auto result = exec::run_process(spec);
    if (!result) return unavailable(answer, result.error().message);
    if (result->signal != 0 || result->timed_out || result->interrupted)
        return unavailable(answer, fmt::format("nvidia-smi {}", result->describe()));
    answer = parse_nvidia_smi(result->output, result->exit_code);
    answer.library = program.string();
    return answer;
}

ProbeAnswer parse_torch_probe(std::string_view output) {
    ProbeAnswer answer;
    answer.probe = "torch";
    bool cuda_unavailable = false;
    std::optional<std::string> import_error;
    for (const auto& raw : core::split(output, '\n')) {
        auto eq = raw.find('=');
        std::string key = eq == std::string::npos ? std::string() : raw.substr(0, eq);
        std::string value =
            eq == std::string::npos ? std::string() : std::string(core::trim(std::string_view(raw).substr(eq + 1)));
        if (key == "import_error") {
            if (!import_error) import_error = value;
        } else if (key == "torch_version") {
            answer.torch_version = value;
        } else if (key == "cuda_version") {
            answer.cuda_version = value;
        } else if (key == "arch_flags") {
            for (const auto& t : parse_arch_flags(value)) answer.torch_arch_flags.push_back(t.text());
        } else if (key == "arch_flags_error") {
            answer.notes.push_back("torch._C._cuda_getArchFlags() failed: " + value);
        } else if (key == "cuda_available") {
            cuda_unavailable = true;
        } else if (key == "cuda_error") {
            answer.notes.push_back("torch.cuda failed: " + value);
        } else if (key == "device_count") {
            // the device= lines say it again
        } else if (key == "device") {
            // index|major|minor|name
            auto fields = core::split(value, '|');
            if (fields.size() < 4) continue;
            auto index = to_int(fields[0]);
            auto major = to_int(fields[1]);
            auto minor = to_int(fields[2]);
            if (!index || !major || !minor) continue;
            std::string name = value.substr(fields[0].size() + fields[1].size() + fields[2].size() + 3);
            answer.gpus.push_back(GpuInfo{*index, name, *major, *minor});
        } else if (key == "warning") {
            add_warning(answer, value);
        } else {
            add_warning(answer, raw);  // printed by torch or a library it loaded, not the script
        }
    }
    if (import_error) return unavailable(answer, "cannot import torch: " + *import_error);
    if (answer.torch_version.empty()) return unavailable(answer, "the torch probe printed nothing usable");
    answer.available = true;
    if (answer.cuda_version.empty()) answer.notes.push_back("a CPU-only torch (torch.version.cuda is None)");
    if (cuda_unavailable) answer.notes.push_back("torch.cuda.is_available() is False");
    if (!answer.warnings.empty())
        answer.notes.push_back(fmt::format(
            "torch printed {} warning{} while probed, kept out of this answer (first: {}); "
            "BOOTSTRAP_LOG=info shows them all",
            answer.warnings.size(), answer.warnings.size() == 1 ? "" : "s", core::clip(answer.warnings.front(), 160)));
    return answer;
}

ProbeAnswer probe_torch(const fs::path& python, const exec::EnvMap& env) {
    ProbeAnswer answer;
    answer.probe = "torch";
    answer.library = python.string();
    std::error_code ec;
    if (!fs::exists(python, ec)) return unavailable(answer, fmt::format("no interpreter at {}", python.string()));
    exec::ProcessSpec spec;
    spec.argv = {python.string(), "-c", k_torch_script};
    spec.env = env;
    spec.capture = true;
    spec.timeout = 180s;  // importing torch from a cold page cache takes a while
    auto result = exec::run_process(spec);
    if (!result) return unavailable(answer, result.error().message);
    if (!result->ok())
        return unavailable(answer, fmt::format("{} (torch probe) {}: {}", python.string(), result->describe(),
                                               core::last_lines(result->output, 3)));
    answer = parse_torch_probe(result->output);
    answer.library = python.string();
    for (const auto& w : answer.warnings) core::log::info("torch probe ({}) printed: {}", python.string(), w);
    return answer;
}

std::string torch_view(const std::vector<ProbeAnswer>& native, const exec::EnvMap& env) {
    std::string out;
    for (const auto& a : native) {
        if (a.probe != "driver" && a.probe != "nvml") continue;
        if (!a.available) {
            out += fmt::format("{}: unavailable: {}\n", a.probe, a.unavailable_reason);
            continue;
        }
        out += fmt::format("{}: cuda {} driver {}\n", a.probe, a.cuda_version, a.driver_version);
        for (const auto& g : a.gpus)
            out += fmt::format("{}: gpu {} {}.{} {}\n", a.probe, g.index, g.major, g.minor, g.name);
    }
    // What torch reads to find the CUDA libraries and number the GPUs, and what decides which
    // torch `python -c` imports. Secret-named values (a TORCH_*_TOKEN) stand as their digest.
    for (const auto& [name, value] : env) {
        bool read = name == "LD_LIBRARY_PATH" || name == "LD_PRELOAD";
        for (std::string_view prefix : {"CUDA_", "NVIDIA_", "PYTORCH_", "TORCH_", "PYTHON"})
            read = read || core::starts_with(name, prefix);
        if (!read) continue;
        bool secret = core::env_has_use(name, core::EnvUse::secret);
        out += fmt::format("env {}={}\n", name, secret ? "sha256:" + core::sha256_hex(value) : value);
    }
    return out;
}

const ProbeAnswer* DeviceReport::find(std::string_view probe) const {
    for (const auto& a : answers)
        if (a.probe == probe) return &a;
    return nullptr;
}

std::vector<Arch> DeviceReport::archs() const {
    std::vector<Arch> out;
    if (const auto* answer = chosen_answer())
        for (const auto& g : answer->gpus) out.push_back(g.arch());
    return out;
}

std::vector<std::string> disagreements(const std::vector<ProbeAnswer>& answers, size_t chosen) {
    std::vector<std::string> out;
    const ProbeAnswer& base = answers.at(chosen);
    for (size_t i = 0; i < answers.size(); ++i) {
        const ProbeAnswer& other = answers[i];
        if (i == chosen || !other.available) continue;
        if (other.gpus.size() == base.gpus.size() && sorted_caps(other.gpus) == sorted_caps(base.gpus)) continue;
        out.push_back(fmt::format("probes disagree: {} reports {}; {} (used) reports {}", other.probe,
                                  describe_gpus(other.gpus), base.probe, describe_gpus(base.gpus)));
    }
    return out;
}

Result<DeviceReport> detect(const std::vector<std::string>& order, const fs::path& venv, const exec::EnvMap& env,
                            const TorchProbe& torch) {
    DeviceReport report;
    report.order = order.empty() ? known_probes() : order;
    for (const auto& name : report.order) {
        if (std::find(known_probes().begin(), known_probes().end(), name) != known_probes().end()) continue;
        std::string near = core::closest_match(name, known_probes());
        return fail(ErrorCode::usage,
                    fmt::format("unknown device probe '{}' (known: {}){}", name, core::join(known_probes(), ", "),
                                near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
    std::vector<std::string> all = report.order;
    for (const auto& name : known_probes())
        if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
    // torch last: a cached torch answer is keyed on what the driver and NVML see now.
    std::vector<std::optional<ProbeAnswer>> answers(all.size());
    std::vector<ProbeAnswer> native;
    auto interrupted = []() -> Status {
        if (int sig = core::interrupt_signal())
            return fail(ErrorCode::interrupted,
                        fmt::format("interrupted by {} while probing devices", exec::signal_name(sig)));
        return {};
    };
    for (size_t i = 0; i < all.size(); ++i) {
        if (all[i] == "torch") continue;
        BS_CHECK(interrupted());
        answers[i] = run_probe(all[i], venv, env);
        native.push_back(*answers[i]);
    }
    for (size_t i = 0; i < all.size(); ++i) {
        if (all[i] != "torch") continue;
        BS_CHECK(interrupted());
        if (venv.empty() || !torch) {
            answers[i] = run_probe("torch", venv, env);
        } else {
            answers[i] = torch(venv / "bin" / "python", env, torch_view(native, env));
        }
    }
    for (auto& a : answers) report.answers.push_back(std::move(*a));
    for (size_t i = 0; i < report.order.size(); ++i) {
        const auto& a = report.answers[i];
        if (a.available && !a.gpus.empty()) {
            report.chosen = i;
            break;
        }
    }
    if (report.chosen) report.warnings = disagreements(report.answers, *report.chosen);
    return report;
}

}  // namespace bootstrap::device
