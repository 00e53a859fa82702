// The "built for" check: the arch the venv was built for (its history, else its CUDA libraries'
// fatbins) against the node's GPUs. See built_for.hpp.

#include "doctor/built_for.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "inspect/fatbin.hpp"

namespace bootstrap::doctor {

namespace {

using detail::cuda_libraries;
using detail::CudaLibrary;
using detail::make_finding;
using recipe::Severity;

constexpr const char* k_group = "built for";
constexpr size_t k_max_listed_libraries = 8;

constexpr const char* k_rules =
    "SASS for sm_XY runs only on a GPU X.Z with Z >= Y (the same major); an 'a' target (sm_90a) "
    "only on exactly X.Y; PTX compute_XY is JIT-compiled by the driver on any GPU >= X.Y. Without "
    "code the GPU can run, the first kernel of an extension fails with \"no kernel image is "
    "available for execution on the device\".";

std::string dotted(int major, int minor) { return fmt::format("{}.{}", major, minor); }

/// Where the build's arch came from, as the plan recorded it, said for a reader on another
/// machine: "--arch 9.0" (given), "detected by probe 'driver'", "the recipe's [device]
/// fallback_arch".
std::string origin_text(const std::string& origin) {
    if (core::starts_with(origin, "probe ")) return "detected by " + origin;
    if (core::starts_with(origin, "[device]")) return "the recipe's " + origin;
    return origin;
}

bool entry_runs_on(const inspect::FatbinEntry& e, const NodeGpu& gpu) {
    return inspect::cuda_code_runs_on(e.kind == inspect::FatbinKind::ptx, static_cast<int>(e.sm / 10),
                                      static_cast<int>(e.sm % 10), e.variant, gpu.major, gpu.minor);
}

bool library_runs_on(const CudaLibrary& lib, const NodeGpu& gpu) {
    return std::any_of(lib.entries.begin(), lib.entries.end(),
                       [&](const inspect::FatbinEntry& e) { return entry_runs_on(e, gpu); });
}

/// The libraries of `libs` that some GPU of `device` cannot run, and those GPUs.
std::pair<std::vector<CudaLibrary>, std::set<size_t>> not_running(const std::vector<CudaLibrary>& libs,
                                                                  const NodeDevice& device) {
    std::vector<CudaLibrary> failing;
    std::set<size_t> gpus;
    for (const auto& lib : libs)
        for (size_t i = 0; i < device.gpus.size(); ++i)
            if (!library_runs_on(lib, device.gpus[i])) {
                if (failing.empty() || failing.back().file != lib.file) failing.push_back(lib);
                gpus.insert(i);
            }
    return {std::move(failing), std::move(gpus)};
}

/// "this GPU is 8.0 (NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')", "this node's 8 GPUs are 8.0
/// (...)", or for some GPUs of a mixed node "GPU 1 is 8.9 (...)" per distinct kind.
std::string describe_gpus(const NodeDevice& device, const std::vector<size_t>& which) {
    auto detail = [&](const NodeGpu& gpu) {
        std::vector<std::string> parts;
        if (!gpu.name.empty()) parts.push_back(gpu.name);
        if (!device.origin.empty()) parts.push_back(device.origin);
        return parts.empty() ? std::string() : " (" + core::join(parts, ", ") + ")";
    };
    // Group the GPUs by name and compute capability, in device order.
    std::vector<std::vector<size_t>> groups;
    for (size_t i : which) {
        const NodeGpu& g = device.gpus[i];
        auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& group) {
            const NodeGpu& h = device.gpus[group.front()];
            return h.name == g.name && h.major == g.major && h.minor == g.minor;
        });
        if (same == groups.end()) groups.push_back({i});
        else same->push_back(i);
    }
    std::vector<std::string> texts;
    for (const auto& group : groups) {
        const NodeGpu& g = device.gpus[group.front()];
        const std::string arch = dotted(g.major, g.minor);
        if (groups.size() == 1 && group.size() == device.gpus.size()) {
            texts.push_back(group.size() == 1
                                ? fmt::format("this GPU is {}{}", arch, detail(g))
                                : fmt::format("this node's {} GPUs are {}{}", group.size(), arch, detail(g)));
            continue;
        }
        std::vector<std::string> numbers;
        for (size_t i : group) numbers.push_back(std::to_string(i));
        texts.push_back(fmt::format("GPU{} {} {} {}{}", group.size() == 1 ? "" : "s", core::join(numbers, ", "),
                                    group.size() == 1 ? "is" : "are", arch, detail(g)));
    }
    return core::join(texts, "; ");
}

/// "GPU 0: NVIDIA H200, compute capability 9.0 (probe 'driver')".
std::string gpu_line(const NodeDevice& device, size_t i) {
    const NodeGpu& g = device.gpus[i];
    return fmt::format("GPU {}: {}compute capability {}{}", i, g.name.empty() ? "" : g.name + ", ",
                       dotted(g.major, g.minor), device.origin.empty() ? "" : " (" + device.origin + ")");
}

/// The fix for GPUs that cannot run what was built for `built`: rebuild for the first of them.
std::string rebuild_fix(const DoctorOptions& options, const std::vector<size_t>& failing, const std::string& built,
                        bool newer_than_every_target, bool from_libraries = false) {
    const NodeGpu& g = options.device->gpus[failing.front()];
    const std::string arch = dotted(g.major, g.minor);
    std::string fix = fmt::format(
        "rebuild for this GPU: {} (an image: bootstrap containerfile {} --arch {} -o DIR, then "
        "build the image again); or run this venv (image) on a GPU it was built for ({})",
        detail::run_command(options, "--arch " + arch), detail::recipe_argument(options), arch, built);
    if (newer_than_every_target) fix += "; [device] ptx = true in the recipe adds PTX that newer GPUs JIT-compile";
    if (from_libraries)
        fix += fmt::format(
            "; a library installed from an index needs a release built with code "
            "for {}",
            arch);
    return fix;
}

/// Every failing GPU is newer than every target (PTX of the highest would have JIT-compiled).
bool newer_than_all(const NodeDevice& device, const std::vector<size_t>& failing,
                    const std::vector<std::pair<int, int>>& targets) {
    for (size_t i : failing)
        for (const auto& [major, minor] : targets)
            if (std::pair(device.gpus[i].major, device.gpus[i].minor) <= std::pair(major, minor)) return false;
    return true;
}

void list_libraries(std::vector<std::string>& evidence, const std::vector<CudaLibrary>& libs) {
    for (size_t i = 0; i < libs.size() && i < k_max_listed_libraries; ++i)
        evidence.push_back(fmt::format("{}: {}", libs[i].file.string(), inspect::summarize(libs[i].entries)));
    if (libs.size() > k_max_listed_libraries)
        evidence.push_back(fmt::format("and {} more", libs.size() - k_max_listed_libraries));
}

/// The recorded arch against the node's GPUs.
std::vector<Finding> compare_recorded(const DoctorOptions& options, const RecordedArch& recorded,
                                      const std::vector<CodeTarget>& targets, CheckSummary* summary) {
    const std::string built =
        fmt::format("{} ({})", recorded.archs,
                    recorded.origin.empty() ? "recorded in " + recorded.manifest.filename().string()
                                            : origin_text(recorded.origin));
    std::vector<std::string> code;
    for (const auto& t : targets) code.push_back(t.text());
    std::vector<std::string> evidence{
        fmt::format("recorded in {}: device.cuda_archs = {}{}", recorded.manifest.string(), recorded.archs,
                    recorded.origin.empty() ? "" : ", cuda_archs_from = " + recorded.origin),
        fmt::format("code built for: {}", core::join(code, ", "))};
    if (!recorded.gpus.empty()) evidence.push_back("the build saw: " + recorded.gpus);

    const NodeDevice* device = options.device ? &*options.device : nullptr;
    if (!device || device->gpus.empty()) {
        if (device)
            for (const auto& note : device->notes) evidence.push_back("no GPU: " + note);
        detail::summarize(summary, k_group, fmt::format("{}; no GPU detected, nothing compared", built));
        return {make_finding("built-for", Severity::info,
                             fmt::format("this venv (image) was built for {}; no GPU detected here, nothing "
                                         "compared",
                                         built),
                             std::move(evidence), "none needed; on a GPU node doctor compares them")};
    }

    std::vector<size_t> failing, through_ptx;
    for (size_t i = 0; i < device->gpus.size(); ++i) {
        const NodeGpu& g = device->gpus[i];
        auto runs = [&](bool ptx) {
            return std::any_of(targets.begin(), targets.end(),
                               [&](const CodeTarget& t) { return t.ptx == ptx && t.runs_on(g.major, g.minor); });
        };
        const bool sass = runs(false);
        const bool ptx = !sass && runs(true);
        evidence.push_back(fmt::format("{}: {}", gpu_line(*device, i),
                                       sass  ? "runs the SASS"
                                       : ptx ? "JIT-compiles the PTX"
                                             : "runs none of it"));
        if (!sass && !ptx) failing.push_back(i);
        else if (ptx) through_ptx.push_back(i);
    }
    std::vector<size_t> all(device->gpus.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;

    if (failing.empty()) {
        std::string how = through_ptx.empty()
                              ? "its code runs there"
                              : fmt::format(
                                    "it runs there through PTX JIT ({} of {}: the driver compiles the "
                                    "kernels at their first launch)",
                                    through_ptx.size() == all.size() ? "every GPU" : "some GPUs", recorded.archs);
        const std::string where = all.size() == 1 ? "this GPU" : "the node's GPUs";
        std::vector<Finding> out{make_finding(
            "built-for", Severity::info,
            fmt::format("this venv (image) was built for {}; {}: {}", built, describe_gpus(*device, all), how),
            std::move(evidence), "none needed")};
        // What was recorded is what the build steps were told; a build that ignored it (its own
        // arch list) shows in the code it left. With --arch the cuda code check does this.
        const fs::path site = options.arch ? fs::path() : find_site_packages(options.venv);
        const auto [libs, gpus] = site.empty() ? not_running({}, *device) : not_running(cuda_libraries(site), *device);
        if (libs.empty()) {
            detail::summarize(summary, k_group, fmt::format("{} runs on {}", built, where));
            return out;
        }
        const std::vector<size_t> failing_gpus(gpus.begin(), gpus.end());
        std::vector<std::string> lib_evidence;
        for (size_t i : all) lib_evidence.push_back(gpu_line(*device, i));
        list_libraries(lib_evidence, libs);
        const std::string of_libs = detail::count_of(libs.size(), "CUDA library", "CUDA libraries");
        detail::summarize(summary, k_group,
                          fmt::format("{} runs on {}, but {} {} no code for it", built, where, of_libs,
                                      libs.size() == 1 ? "carries" : "carry"));
        const NodeGpu& g = device->gpus[failing_gpus.front()];
        out.push_back(make_finding(
            "built-for", Severity::error,
            fmt::format("the history says this venv (image) was built for {}; {}, but {} in the "
                        "venv {} no code for it",
                        built, describe_gpus(*device, failing_gpus), of_libs, libs.size() == 1 ? "carries" : "carry"),
            std::move(lib_evidence),
            fmt::format("rebuild {} for {} (a build step that sets its own arch list ignores "
                        "{{device.torch_arch_list}}); a library installed from an index needs a "
                        "release built with code for it",
                        libs.size() == 1 ? "it" : "them", dotted(g.major, g.minor)),
            k_rules));
        return out;
    }
    std::vector<std::pair<int, int>> target_archs;
    for (const auto& t : targets) target_archs.emplace_back(t.major, t.minor);
    const std::string failing_text = describe_gpus(*device, failing);
    detail::summarize(
        summary, k_group,
        fmt::format("{} does not run on {}", built,
                    failing.size() == 1 && all.size() == 1
                        ? "this GPU"
                        : fmt::format("{} of {}", failing.size(), detail::count_of(all.size(), "GPU", "GPUs"))));
    return {make_finding(
        "built-for", Severity::error, fmt::format("this venv (image) was built for {}; {}", built, failing_text),
        std::move(evidence),
        rebuild_fix(options, failing, recorded.archs, newer_than_all(*device, failing, target_archs)), k_rules)};
}

/// No arch recorded: what the CUDA libraries in site-packages carry, against the GPUs.
std::vector<Finding> compare_libraries(const DoctorOptions& options, CheckSummary* summary) {
    const NodeDevice* device = options.device ? &*options.device : nullptr;
    if (!device || device->gpus.empty()) {
        std::vector<std::string> evidence;
        if (device)
            for (const auto& note : device->notes) evidence.push_back("no GPU: " + note);
        detail::summarize(summary, k_group, "no arch recorded in the history, no GPU detected: nothing compared");
        return {make_finding("built-for", Severity::info,
                             "no history entry records the arch this venv was built for, and no "
                             "GPU was detected: nothing compared",
                             std::move(evidence),
                             "none needed; venvs that bootstrap builds with {device.*} "
                             "placeholders record it")};
    }
    if (options.arch) {
        // --arch names the device: the cuda code check already compared every CUDA library
        // with it, library by library.
        detail::summarize(summary, k_group,
                          fmt::format("no arch recorded in the history (the cuda code check "
                                      "compared the CUDA libraries with --arch {})",
                                      *options.arch));
        return {};
    }
    const fs::path site = find_site_packages(options.venv);
    const auto libs = site.empty() ? std::vector<CudaLibrary>() : cuda_libraries(site);
    std::vector<size_t> all(device->gpus.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    if (libs.empty()) {
        detail::summarize(summary, k_group,
                          "no arch recorded in the history and no CUDA code in site-packages: "
                          "nothing compared");
        return {make_finding("built-for", Severity::info,
                             fmt::format("no history entry records the arch this venv was built for and no "
                                         "library in site-packages carries CUDA code: nothing to compare with {}",
                                         describe_gpus(*device, all)),
                             {site.empty() ? "no site-packages" : site.string()}, "none needed")};
    }
    const auto [failing_libs, failing_set] = not_running(libs, *device);
    const std::string of_libs = detail::count_of(libs.size(), "CUDA library", "CUDA libraries");
    if (failing_libs.empty()) {
        detail::summarize(
            summary, k_group,
            fmt::format("no arch recorded in the history; {} {} code for {}", of_libs,
                        libs.size() == 1 ? "carries" : "carry", all.size() == 1 ? "this GPU" : "the node's GPUs"));
        std::vector<std::string> evidence;
        for (size_t i : all) evidence.push_back(gpu_line(*device, i));
        list_libraries(evidence, libs);
        return {make_finding("built-for", Severity::info,
                             fmt::format("no history entry records the arch this venv was built "
                                         "for; its {} {} code that runs here: {}",
                                         of_libs, libs.size() == 1 ? "carries" : "carry", describe_gpus(*device, all)),
                             std::move(evidence), "none needed")};
    }
    // What the failing libraries were built for: their distinct targets, ascending, written as
    // a TORCH_CUDA_ARCH_LIST ("8.0;9.0;9.0a+PTX").
    std::set<std::tuple<unsigned, char, bool>> distinct;
    std::vector<std::pair<int, int>> target_archs;
    for (const auto& lib : failing_libs)
        for (const auto& e : lib.entries) {
            distinct.emplace(e.sm, e.variant, e.kind == inspect::FatbinKind::ptx);
            target_archs.emplace_back(e.sm / 10, e.sm % 10);
        }
    std::vector<std::string> archs;
    for (const auto& [sm, variant, ptx] : distinct) {
        std::string text = dotted(static_cast<int>(sm / 10), static_cast<int>(sm % 10));
        if (variant) text += variant;
        if (ptx) text += "+PTX";
        archs.push_back(text);
    }
    const std::vector<size_t> failing(failing_set.begin(), failing_set.end());
    std::vector<std::string> evidence{
        "no history entry records the arch (a venv not built by bootstrap, or by a recipe "
        "without {device.*} placeholders): the CUDA libraries tell"};
    for (size_t i : all) evidence.push_back(gpu_line(*device, i));
    list_libraries(evidence, failing_libs);
    const std::string built = core::join(archs, ";");
    detail::summarize(summary, k_group,
                      fmt::format("no arch recorded in the history; {} of {} {} no code for {}", failing_libs.size(),
                                  of_libs, failing_libs.size() == 1 ? "carries" : "carry",
                                  failing.size() == 1 && all.size() == 1 ? "this GPU" : "some GPUs"));
    return {make_finding("built-for", Severity::error,
                         fmt::format("this venv (image) was built for {} (the CUDA code of {}); {}", built,
                                     failing_libs.size() == libs.size()
                                         ? (libs.size() == 1 ? std::string("its CUDA library") : "its " + of_libs)
                                         : fmt::format("{} of its {}", failing_libs.size(), of_libs),
                                     describe_gpus(*device, failing)),
                         std::move(evidence),
                         rebuild_fix(options, failing, built, newer_than_all(*device, failing, target_archs), true),
                         k_rules)};
}

}  // namespace

std::string CodeTarget::text() const {
    std::string out = fmt::format("{}_{}{}", ptx ? "compute" : "sm", major, minor);
    if (suffix) out += suffix;
    return out;
}

bool CodeTarget::runs_on(int device_major, int device_minor) const {
    return inspect::cuda_code_runs_on(ptx, major, minor, suffix, device_major, device_minor);
}

Result<std::vector<CodeTarget>> parse_recorded_archs(std::string_view list) {
    std::vector<CodeTarget> out;
    auto bad = [&](std::string_view item, std::string_view why) {
        return fail(ErrorCode::usage, fmt::format("'{}' in cuda_archs '{}' {} (expected items like 9.0, 9.0a or "
                                                  "9.0+PTX, separated by ';')",
                                                  item, list, why));
    };
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t end = list.find_first_of("; \t", pos);
        if (end == std::string_view::npos) end = list.size();
        std::string_view item = list.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty()) continue;
        std::string_view rest = item;
        bool ptx = false;
        if (rest.size() > 4 && rest.substr(rest.size() - 4) == "+PTX") {
            ptx = true;
            rest.remove_suffix(4);
        }
        char suffix = 0;
        if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
            suffix = rest.back();
            rest.remove_suffix(1);
        }
        const size_t dot = rest.find('.');
        auto digits = [](std::string_view s) {
            return !s.empty() && s.size() <= 3 &&
                   std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        };
        if (dot == std::string_view::npos || !digits(rest.substr(0, dot)) || rest.substr(dot + 1).size() != 1 ||
            !digits(rest.substr(dot + 1)))
            return bad(item, "is not a compute capability");
        CodeTarget t;
        t.major = std::stoi(std::string(rest.substr(0, dot)));
        t.minor = rest[dot + 1] - '0';
        t.suffix = suffix;
        out.push_back(t);
        if (ptx) {
            t.ptx = true;
            out.push_back(t);
        }
    }
    if (out.empty()) return fail(ErrorCode::usage, fmt::format("cuda_archs '{}' names no arch", list));
    return out;
}

std::vector<Finding> check_built_for(const DoctorOptions& options, CheckSummary* summary) {
    if (options.built_for) {
        auto targets = parse_recorded_archs(options.built_for->archs);
        if (targets) return compare_recorded(options, *options.built_for, *targets, summary);
        // A history entry this bootstrap cannot read: say so, and let the libraries tell.
        auto out = compare_libraries(options, summary);
        out.insert(out.begin(),
                   make_finding("built-for", Severity::warning,
                                fmt::format("{}: {}", options.built_for->manifest.string(), targets.error().message),
                                {}, "none needed; the CUDA libraries' code is compared instead"));
        return out;
    }
    return compare_libraries(options, summary);
}

}  // namespace bootstrap::doctor
