// The two probes that load NVIDIA's libraries into this process: the CUDA driver API and NVML.
// Signatures are declared here (not from cuda.h / nvml.h) so bootstrap builds without the CUDA
// toolkit; both APIs are C with stable ABIs, and these entry points are the versioned ones.

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/shared_library.hpp"
#include "device/probe.hpp"

namespace bootstrap::device {

namespace {

using core::SharedLibrary;
// Unload::never (RTLD_NODELETE): cuInit starts driver threads, and unmapping the library under
// them would crash later, so the handle is released but the code stays mapped (a second probe
// finds it loaded and pays nothing).
constexpr auto k_keep_mapped = SharedLibrary::Unload::never;

// ---- CUDA driver API (cuda.h) ----
using CUresult = int;
using CUdevice = int;
constexpr int k_cu_attr_cc_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int k_cu_attr_cc_minor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

using cuInit_fn = CUresult (*)(unsigned int);
using cuDriverGetVersion_fn = CUresult (*)(int*);
using cuDeviceGetCount_fn = CUresult (*)(int*);
using cuDeviceGet_fn = CUresult (*)(CUdevice*, int);
using cuDeviceGetName_fn = CUresult (*)(char*, int, CUdevice);
using cuDeviceGetAttribute_fn = CUresult (*)(int*, int, CUdevice);
using cuGetErrorName_fn = CUresult (*)(CUresult, const char**);

// Names for the results seen when probing, for libraries without cuGetErrorName.
std::string_view known_curesult(CUresult r) {
    switch (r) {
        case 3: return "CUDA_ERROR_NOT_INITIALIZED";
        case 34: return "CUDA_ERROR_STUB_LIBRARY";
        case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
        case 100: return "CUDA_ERROR_NO_DEVICE";
        case 101: return "CUDA_ERROR_INVALID_DEVICE";
        case 304: return "CUDA_ERROR_OPERATING_SYSTEM";
        case 999: return "CUDA_ERROR_UNKNOWN";
        default: return {};
    }
}

std::string describe_curesult(const SharedLibrary& lib, CUresult r) {
    std::string name;
    if (auto get_name = lib.symbol<cuGetErrorName_fn>("cuGetErrorName")) {
        const char* text = nullptr;
        if (get_name(r, &text) == 0 && text) name = text;
    }
    if (name.empty()) name = std::string(known_curesult(r));
    return name.empty() ? fmt::format("CUresult {}", r) : fmt::format("CUresult {} ({})", r, name);
}

// 13000 -> "13.0", 12080 -> "12.8".
std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

ProbeAnswer unavailable(ProbeAnswer answer, std::string reason) {
    answer.available = false;
    answer.unavailable_reason = std::move(reason);
    answer.gpus.clear();
    return answer;
}

// ---- NVML (nvml.h) ----
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvml_device_opaque*;
using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetDriverVersion_fn = nvmlReturn_t (*)(char*, unsigned int);
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetName_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetCudaComputeCapability_fn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);

std::string describe_nvml(const SharedLibrary& lib, nvmlReturn_t r) {
    if (auto err = lib.symbol<nvmlErrorString_fn>("nvmlErrorString")) {
        if (const char* text = err(r)) return fmt::format("nvmlReturn {} ({})", r, text);
    }
    return fmt::format("nvmlReturn {}", r);
}

}  // namespace

std::string libcuda_path(const exec::EnvMap& env) {
    auto it = env.find("BOOTSTRAP_LIBCUDA");
    return it != env.end() && !it->second.empty() ? it->second : "libcuda.so.1";
}

std::string libnvml_path(const exec::EnvMap& env) {
    auto it = env.find("BOOTSTRAP_LIBNVML");
    return it != env.end() && !it->second.empty() ? it->second : "libnvidia-ml.so.1";
}

ProbeAnswer probe_driver(const std::string& libcuda) {
    ProbeAnswer answer;
    answer.probe = "driver";
    answer.library = libcuda;
    SharedLibrary lib(libcuda, k_keep_mapped);
    if (!lib.loaded()) return unavailable(answer, fmt::format("cannot load {}: {}", libcuda, lib.error()));

    auto init = lib.symbol<cuInit_fn>("cuInit");
    auto driver_version = lib.symbol<cuDriverGetVersion_fn>("cuDriverGetVersion");
    auto get_count = lib.symbol<cuDeviceGetCount_fn>("cuDeviceGetCount");
    auto get_device = lib.symbol<cuDeviceGet_fn>("cuDeviceGet");
    auto get_name = lib.symbol<cuDeviceGetName_fn>("cuDeviceGetName");
    auto get_attribute = lib.symbol<cuDeviceGetAttribute_fn>("cuDeviceGetAttribute");
    for (auto [fn, name] : {std::pair<bool, const char*>{init != nullptr, "cuInit"},
                            {driver_version != nullptr, "cuDriverGetVersion"},
                            {get_count != nullptr, "cuDeviceGetCount"},
                            {get_device != nullptr, "cuDeviceGet"},
                            {get_name != nullptr, "cuDeviceGetName"},
                            {get_attribute != nullptr, "cuDeviceGetAttribute"}}) {
        if (!fn) return unavailable(answer, fmt::format("{} has no symbol {}", libcuda, name));
    }

    // cuDriverGetVersion works before cuInit, so even a failed init reports the driver's CUDA.
    int version = 0;
    if (driver_version(&version) == 0 && version > 0) answer.cuda_version = cuda_version_text(version);
    if (CUresult r = init(0); r != 0)
        return unavailable(answer, fmt::format("cuInit failed: {}", describe_curesult(lib, r)));
    int count = 0;
    if (CUresult r = get_count(&count); r != 0)
        return unavailable(answer, fmt::format("cuDeviceGetCount failed: {}", describe_curesult(lib, r)));
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        GpuInfo gpu;
        gpu.index = i;
        if (CUresult r = get_device(&dev, i); r != 0)
            return unavailable(answer, fmt::format("cuDeviceGet({}) failed: {}", i, describe_curesult(lib, r)));
        std::array<char, 256> name{};
        if (get_name(name.data(), static_cast<int>(name.size()), dev) == 0) gpu.name = name.data();
        CUresult rmaj = get_attribute(&gpu.major, k_cu_attr_cc_major, dev);
        CUresult rmin = get_attribute(&gpu.minor, k_cu_attr_cc_minor, dev);
        if (rmaj != 0 || rmin != 0)
            return unavailable(answer, fmt::format("cuDeviceGetAttribute(compute capability, device {}) failed: {}", i,
                                                   describe_curesult(lib, rmaj != 0 ? rmaj : rmin)));
        answer.gpus.push_back(std::move(gpu));
    }
    answer.available = true;
    if (count == 0) answer.notes.push_back("the driver reports no CUDA device");
    return answer;
}

ProbeAnswer probe_nvml(const std::string& libnvml) {
    ProbeAnswer answer;
    answer.probe = "nvml";
    answer.library = libnvml;
    SharedLibrary lib(libnvml, k_keep_mapped);
    if (!lib.loaded()) return unavailable(answer, fmt::format("cannot load {}: {}", libnvml, lib.error()));

    auto init = lib.symbol<nvmlInit_fn>("nvmlInit_v2");
    auto shutdown = lib.symbol<nvmlShutdown_fn>("nvmlShutdown");
    auto get_count = lib.symbol<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount_v2");
    auto get_handle = lib.symbol<nvmlDeviceGetHandleByIndex_fn>("nvmlDeviceGetHandleByIndex_v2");
    auto get_name = lib.symbol<nvmlDeviceGetName_fn>("nvmlDeviceGetName");
    auto get_cc = lib.symbol<nvmlDeviceGetCudaComputeCapability_fn>("nvmlDeviceGetCudaComputeCapability");
    auto driver_version = lib.symbol<nvmlSystemGetDriverVersion_fn>("nvmlSystemGetDriverVersion");
    auto cuda_version = lib.symbol<nvmlSystemGetCudaDriverVersion_fn>("nvmlSystemGetCudaDriverVersion");
    for (auto [fn, name] : {std::pair<bool, const char*>{init != nullptr, "nvmlInit_v2"},
                            {shutdown != nullptr, "nvmlShutdown"},
                            {get_count != nullptr, "nvmlDeviceGetCount_v2"},
                            {get_handle != nullptr, "nvmlDeviceGetHandleByIndex_v2"},
                            {get_name != nullptr, "nvmlDeviceGetName"},
                            {get_cc != nullptr, "nvmlDeviceGetCudaComputeCapability"}}) {
        if (!fn) return unavailable(answer, fmt::format("{} has no symbol {}", libnvml, name));
    }
    if (nvmlReturn_t r = init(); r != 0)
        return unavailable(answer, fmt::format("nvmlInit_v2 failed: {}", describe_nvml(lib, r)));

    // Everything after a successful init must reach nvmlShutdown.
    auto finish = [&](ProbeAnswer result) {
        shutdown();
        return result;
    };
    if (driver_version) {
        std::array<char, 96> text{};
        if (driver_version(text.data(), static_cast<unsigned>(text.size())) == 0) answer.driver_version = text.data();
    }
    int cuda = 0;
    if (cuda_version && cuda_version(&cuda) == 0 && cuda > 0) answer.cuda_version = cuda_version_text(cuda);
    unsigned count = 0;
    if (nvmlReturn_t r = get_count(&count); r != 0)
        return finish(unavailable(answer, fmt::format("nvmlDeviceGetCount_v2 failed: {}", describe_nvml(lib, r))));
    for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (nvmlReturn_t r = get_handle(i, &dev); r != 0)
            return finish(unavailable(answer, fmt::format("nvmlDeviceGetHandleByIndex_v2({}) "
                                                          "failed: {}",
                                                          i, describe_nvml(lib, r))));
        GpuInfo gpu;
        gpu.index = static_cast<int>(i);
        std::array<char, 256> name{};
        if (get_name(dev, name.data(), static_cast<unsigned>(name.size())) == 0) gpu.name = name.data();
        if (nvmlReturn_t r = get_cc(dev, &gpu.major, &gpu.minor); r != 0)
            return finish(unavailable(answer, fmt::format("nvmlDeviceGetCudaComputeCapability({}) "
                                                          "failed: {}",
                                                          i, describe_nvml(lib, r))));
        answer.gpus.push_back(std::move(gpu));
    }
    answer.available = true;
    answer.notes.push_back("NVML numbers GPUs in PCI bus order; CUDA's order may differ");
    return finish(answer);
}

}  // namespace bootstrap::device
