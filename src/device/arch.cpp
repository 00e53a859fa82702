#include "device/arch.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "inspect/fatbin.hpp"

namespace bootstrap::device {

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// "9.0", "9.0a", "90", "90a": the forms left once any "sm_"/"compute_" prefix is gone.
std::optional<Arch> parse_bare_arch(std::string_view s) {
    Arch arch;
    if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
        arch.suffix = s.back();
        s.remove_suffix(1);
    }
    auto dot = s.find('.');
    std::string_view major_text;
    std::string_view minor_text;
    if (dot != std::string_view::npos) {
        major_text = s.substr(0, dot);
        minor_text = s.substr(dot + 1);
    } else {
        // "90" -> 9.0, "100" -> 10.0, "121" -> 12.1: the last digit is the minor.
        if (s.size() < 2) return std::nullopt;
        major_text = s.substr(0, s.size() - 1);
        minor_text = s.substr(s.size() - 1);
    }
    if (!all_digits(major_text) || !all_digits(minor_text) || minor_text.size() != 1 || major_text.size() > 2)
        return std::nullopt;
    arch.major = core::parse_int<int>(major_text).value_or(0);  // at most two digits
    arch.minor = minor_text[0] - '0';
    if (arch.major == 0) return std::nullopt;
    return arch;
}

std::optional<CudaTarget> parse_target(std::string_view token) {
    CudaTarget target;
    if (core::consume_prefix(token, "sm_")) {
    } else if (core::consume_prefix(token, "compute_")) {
        target.ptx = true;
    } else {
        return std::nullopt;
    }
    if (token.find('.') != std::string_view::npos) return std::nullopt;
    auto arch = parse_bare_arch(token);
    if (!arch) return std::nullopt;
    target.arch = *arch;
    return target;
}

std::string describe_list(std::string_view list) {
    return list.empty() ? std::string("(empty)") : fmt::format("'{}'", list);
}

Result<ArchListEntry> parse_list_item(std::string_view item, std::string_view list) {
    ArchListEntry entry;
    std::string_view body = item;
    auto plus = body.find('+');
    if (plus != std::string_view::npos) {
        std::string_view tail = body.substr(plus + 1);
        if (tail != "PTX") {
            return fail(ErrorCode::usage, fmt::format("TORCH_CUDA_ARCH_LIST {}: '{}' has an unknown modifier '+{}' "
                                                      "(the only one is '+PTX', in capitals)",
                                                      describe_list(list), item, tail));
        }
        entry.ptx = true;
        body = body.substr(0, plus);
    }
    auto arch = body.find('.') == std::string_view::npos ? std::nullopt : parse_bare_arch(body);
    if (!arch) {
        std::vector<std::string> names;
        for (const auto& [name, _] : torch_named_arches()) names.push_back(name);
        std::string near = core::closest_match(body, names);
        if (auto undotted = parse_bare_arch(body)) near = undotted->dotted();  // "90" -> "9.0"
        return fail(ErrorCode::usage, fmt::format("TORCH_CUDA_ARCH_LIST {}: '{}' is not an arch (expected forms like "
                                                  "9.0, 9.0a, 9.0+PTX or a name such as Hopper){}",
                                                  describe_list(list), item,
                                                  near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
    if (arch->suffix == 'f') {
        return fail(ErrorCode::usage, fmt::format("TORCH_CUDA_ARCH_LIST {}: '{}': torch's extension builder accepts "
                                                  "the 'a' suffix but not 'f' (family) targets",
                                                  describe_list(list), item));
    }
    entry.arch = *arch;
    return entry;
}

std::string join_targets(const std::vector<CudaTarget>& targets) {
    std::vector<std::string> parts;
    for (const auto& t : targets) parts.push_back(t.text());
    return core::join(parts, " ");
}

std::string major_minor(std::string_view version) {
    auto parts = core::split(core::trim(version), '.');
    if (parts.size() < 2) return std::string(core::trim(version));
    return parts[0] + "." + parts[1];
}

}  // namespace

std::string Arch::dotted() const {
    std::string out = fmt::format("{}.{}", major, minor);
    if (suffix) out += suffix;
    return out;
}

std::string Arch::digits() const {
    std::string out = fmt::format("{}{}", major, minor);
    if (suffix) out += suffix;
    return out;
}

Result<Arch> parse_arch(std::string_view text) {
    std::string_view s = core::trim(text);
    std::optional<Arch> arch;
    if (core::starts_with(s, "sm_") || core::starts_with(s, "compute_")) {
        if (auto target = parse_target(s)) arch = target->arch;
    } else {
        arch = parse_bare_arch(s);
    }
    if (!arch) {
        return fail(ErrorCode::usage, fmt::format("'{}' is not a CUDA compute capability (expected a form like 9.0, "
                                                  "9.0a, 90 or sm_90)",
                                                  text));
    }
    return *arch;
}

std::string ArchListEntry::text() const { return arch.dotted() + (ptx ? "+PTX" : ""); }

const std::vector<std::pair<std::string, std::string>>& torch_named_arches() {
    // torch.utils.cpp_extension._get_cuda_arch_flags (torch 2.9+). Older releases know fewer
    // names, and named "Blackwell+Tegra" 10.1; check_torch_accepts_arch_list asks the real one.
    static const std::vector<std::pair<std::string, std::string>> k_named{
        {"Kepler+Tesla", "3.7"},     {"Kepler", "3.5+PTX"},
        {"Maxwell+Tegra", "5.3"},    {"Maxwell", "5.0;5.2+PTX"},
        {"Pascal", "6.0;6.1+PTX"},   {"Volta+Tegra", "7.2"},
        {"Volta", "7.0+PTX"},        {"Turing", "7.5+PTX"},
        {"Ampere+Tegra", "8.7"},     {"Ampere", "8.0;8.6+PTX"},
        {"Ada", "8.9+PTX"},          {"Hopper", "9.0+PTX"},
        {"Blackwell+Tegra", "11.0"}, {"Blackwell", "10.0;10.3;12.0;12.1+PTX"},
    };
    return k_named;
}

Result<std::vector<ArchListEntry>> parse_torch_arch_list(std::string_view list) {
    if (list.find(',') != std::string_view::npos) {
        std::string fixed(list);
        std::replace(fixed.begin(), fixed.end(), ',', ';');
        return fail(ErrorCode::usage, fmt::format("TORCH_CUDA_ARCH_LIST '{}': commas are not separators (torch reads "
                                                  "the whole text as one unknown arch); separate with ';' or "
                                                  "spaces: '{}'",
                                                  list, fixed));
    }
    // torch turns every space into ';' and splits on ';', so "9.0; 8.9" has an empty item.
    std::string normalized(list);
    for (char& c : normalized)
        if (c == ' ' || c == '\t') c = ';';
    std::vector<ArchListEntry> out;
    for (const auto& item : core::split(normalized, ';')) {
        if (item.empty()) {
            return fail(ErrorCode::usage, fmt::format("TORCH_CUDA_ARCH_LIST {}: empty item (a leading or trailing "
                                                      "separator, or ';' and a space together); torch's extension "
                                                      "builder rejects it",
                                                      describe_list(list)));
        }
        const auto& named = torch_named_arches();
        auto it = std::find_if(named.begin(), named.end(), [&](const auto& n) { return n.first == item; });
        if (it != named.end()) {
            for (const auto& part : core::split(it->second, ';')) {
                BS_TRY(auto entry, parse_list_item(part, list));
                out.push_back(entry);
            }
            continue;
        }
        BS_TRY(auto entry, parse_list_item(item, list));
        out.push_back(entry);
    }
    return out;
}

std::string format_torch_arch_list(const std::vector<ArchListEntry>& entries) {
    std::vector<std::string> parts;
    for (const auto& e : entries) parts.push_back(e.text());
    return core::join(parts, ";");
}

DerivedArchs derive_archs(const std::vector<Arch>& archs, bool ptx) {
    DerivedArchs out;
    if (archs.empty()) return out;
    out.arch = archs.front().dotted();
    std::set<Arch> distinct(archs.begin(), archs.end());
    std::vector<std::string> torch_parts;
    std::vector<std::string> digit_parts;
    for (const auto& arch : distinct) {
        torch_parts.push_back(arch.dotted());
        digit_parts.push_back(arch.digits());
    }
    if (ptx) torch_parts.back() += "+PTX";
    out.torch_arch_list = core::join(torch_parts, ";");
    out.nvte_archs = core::join(digit_parts, ";");
    out.cmake_archs = out.nvte_archs;
    return out;
}

std::string_view to_string(ArchSource source) {
    switch (source) {
        case ArchSource::detected: return "detected";
        case ArchSource::given: return "given";
        case ArchSource::fallback: return "fallback";
    }
    return "?";
}

Error no_arch_error(std::string_view why) {
    return Error{ErrorCode::not_found, fmt::format("no CUDA arch to build for: {}", why),
                 "A CUDA build needs the device's compute capability, and bootstrap never "
                 "guesses it (building for every arch is slow, for none is useless).\n"
                 "  --arch 9.0      build for this compute capability (an H100/H200 is 9.0)\n"
                 "  --no-device     build for the recipe's [device] fallback_arch, for image "
                 "builds and login nodes without a GPU"};
}

Result<ArchChoice> choose_archs(const std::vector<Arch>& detected, std::string_view detected_by,
                                const ArchRequest& request) {
    ArchChoice choice;
    auto detected_text = [&] {
        std::vector<std::string> parts;
        for (const auto& a : std::set<Arch>(detected.begin(), detected.end())) parts.push_back(a.dotted());
        return core::join(parts, ", ");
    };
    if (request.given) {
        BS_TRY(auto arch, parse_arch(*request.given));
        choice.source = ArchSource::given;
        choice.archs = {arch};
        choice.origin = fmt::format("--arch {}", *request.given);
        if (!request.probed) {
            // Nothing to confirm or override: the caller chose not to probe.
        } else if (detected.empty()) {
            choice.notices.push_back(
                fmt::format("building for {} from --arch: no GPU was detected to confirm it", arch.dotted()));
        } else if (std::set<Arch>(detected.begin(), detected.end()) != std::set<Arch>{arch}) {
            choice.notices.push_back(fmt::format("--arch {} overrides the detected {} (probe '{}')", arch.dotted(),
                                                 detected_text(), detected_by));
        }
        if (request.no_device) choice.notices.push_back("--arch wins over --no-device");
    } else if (request.no_device) {
        if (!request.fallback_arch) {
            return fail(ErrorCode::usage,
                        "--no-device needs the recipe's [device] fallback_arch (say "
                        "fallback_arch = \"9.0\"), or give the arch with --arch 9.0");
        }
        BS_TRY(auto arch, parse_arch(*request.fallback_arch));
        choice.source = ArchSource::fallback;
        choice.archs = {arch};
        choice.origin = "[device] fallback_arch";
        choice.notices.push_back(
            fmt::format("--no-device: building for {} from the recipe's [device] fallback_arch; no GPU was "
                        "probed, so nothing confirms the binaries will run where they are used",
                        arch.dotted()));
    } else if (!detected.empty()) {
        choice.source = ArchSource::detected;
        choice.archs = detected;
        choice.origin = fmt::format("probe '{}'", detected_by);
    } else {
        return tl::unexpected(no_arch_error("no GPU was detected"));
    }
    choice.derived = derive_archs(choice.archs, request.ptx);
    return choice;
}

bool sass_runs_on(const Arch& code, const Arch& device) {
    return inspect::cuda_code_runs_on(false, code.major, code.minor, code.suffix, device.major, device.minor);
}

bool ptx_runs_on(const Arch& code, const Arch& device) {
    return inspect::cuda_code_runs_on(true, code.major, code.minor, code.suffix, device.major, device.minor);
}

std::string CudaTarget::text() const { return (ptx ? "compute_" : "sm_") + arch.digits(); }

std::vector<CudaTarget> parse_arch_flags(std::string_view flags) {
    std::string normalized(flags);
    for (char& c : normalized)
        if (c == ';' || c == '\t' || c == '\n') c = ' ';
    std::vector<CudaTarget> out;
    for (const auto& token : core::split(normalized, ' ')) {
        if (auto target = parse_target(token)) out.push_back(*target);
    }
    return out;
}

Status check_torch_covers(const std::vector<std::string>& torch_arch_flags, const Arch& device) {
    std::vector<CudaTarget> targets;
    for (const auto& flag : torch_arch_flags) {
        auto parsed = parse_arch_flags(flag);
        targets.insert(targets.end(), parsed.begin(), parsed.end());
    }
    if (targets.empty()) {
        return fail(ErrorCode::usage, fmt::format("torch has no CUDA kernels at all (torch._C._cuda_getArchFlags() "
                                                  "is empty: a CPU-only build?), so nothing runs on the {} device",
                                                  device.dotted()));
    }
    for (const auto& t : targets)
        if (t.runs_on(device)) return {};
    std::string sass = device.minor == 0 ? fmt::format("sm_{}0", device.major)
                                         : fmt::format("sm_{}0 to sm_{}{}", device.major, device.major, device.minor);
    return fail(ErrorCode::usage, fmt::format("torch has no kernels for compute capability {}: it was built for {} "
                                              "(usable there: SASS {}, or PTX for an arch <= {})",
                                              device.dotted(), join_targets(targets), sass, device.dotted()));
}

Result<std::string> parse_nvcc_release(std::string_view output) {
    auto pos = output.find("release ");
    if (pos != std::string_view::npos) {
        std::string_view rest = output.substr(pos + 8);
        size_t end = 0;
        while (end < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.')) ++end;
        std::string release(rest.substr(0, end));
        if (!release.empty() && release.find('.') != std::string::npos) return release;
    }
    return fail(ErrorCode::process, "could not find the CUDA release in `nvcc --version` output (no 'release X.Y')",
                std::string(core::last_lines(output, 5)));
}

Status check_nvcc_matches_torch(std::string_view nvcc_release, std::string_view torch_cuda) {
    if (core::trim(torch_cuda).empty() || core::trim(torch_cuda) == "None") {
        return fail(ErrorCode::usage, fmt::format("torch is a CPU-only build (torch.version.cuda is None); CUDA "
                                                  "extensions need a CUDA torch matching nvcc {}",
                                                  nvcc_release));
    }
    if (major_minor(nvcc_release) == major_minor(torch_cuda)) return {};
    return fail(ErrorCode::usage,
                fmt::format("nvcc is CUDA {} but torch was built with CUDA {} "
                            "(torch.version.cuda); CUDA extensions must be compiled by the same "
                            "CUDA version (apex refuses otherwise): put the CUDA {} toolkit first "
                            "(CUDA_HOME, PATH) or install the torch build for CUDA {}",
                            nvcc_release, torch_cuda, major_minor(torch_cuda), major_minor(nvcc_release)));
}

std::vector<Arch> parse_nvcc_gpu_archs(std::string_view output) {
    std::set<Arch> archs;
    for (const auto& line : core::split(output, '\n')) {
        auto target = parse_target(core::trim(line));
        if (target && target->ptx) archs.insert(target->arch);
    }
    return {archs.begin(), archs.end()};
}

Status check_archs_supported_by_nvcc(const std::vector<ArchListEntry>& entries, const std::vector<Arch>& nvcc_archs) {
    std::vector<std::string> missing;
    for (const auto& e : entries) {
        Arch base{e.arch.major, e.arch.minor, 0};
        if (std::find(nvcc_archs.begin(), nvcc_archs.end(), base) == nvcc_archs.end()) missing.push_back(e.text());
    }
    if (missing.empty()) return {};
    std::vector<std::string> known;
    for (const auto& a : nvcc_archs) known.push_back(a.dotted());
    return fail(ErrorCode::usage,
                fmt::format("nvcc cannot compile for {} (`nvcc --list-gpu-arch` knows {})", core::join(missing, ", "),
                            known.empty() ? std::string("nothing") : core::join(known, " ")));
}

}  // namespace bootstrap::device
