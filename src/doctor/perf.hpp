#pragma once
// `bootstrap perf`: model FLOPs utilization from a Megatron training log.
//
// Upstream Megatron logs `throughput per GPU (TFLOP/s/GPU): X` per logged iteration when run
// with --log-throughput; MFU is that over the GPU's dense BF16 peak. Some forks also print an
// MFU figure computed against another peak (the seed's fork divided by 670, an L20X figure,
// README pitfall P2): the peak it assumed is throughput / MFU, and the correction to the real
// device is assumed_peak / device_peak (670 / 989.4 = x0.68 on H200).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::doctor {

/// One logged iteration with a throughput figure.
struct ThroughputSample {
    int line = 0;               // 1-based line in the log
    long iteration = -1;        // -1 when the line has none
    double tflops = 0;          // TFLOP/s per GPU
    std::optional<double> mfu;  // the log's own MFU, as a fraction, when the line has one
    std::string text;           // the line, trimmed and cut
};

/// Every throughput line of a log, in order.
[[nodiscard]] std::vector<ThroughputSample> parse_throughput(std::string_view log);

/// A GPU's dense (no sparsity) BF16 tensor-core peak per GPU, and where the number comes from.
struct GpuPeak {
    std::string gpu;
    double tflops = 0;
    std::string source;
};

/// The peak for a GPU name as nvidia-smi or torch prints it ("NVIDIA H200", "NVIDIA H100 80GB
/// HBM3", "H100 PCIe", "A100-SXM4-80GB"); nullopt for a GPU without a justified number.
[[nodiscard]] std::optional<GpuPeak> peak_for_gpu(std::string_view name);

struct PerfOptions {
    std::optional<double> peak;  // --peak: overrides the table
    std::string gpu = "H200";
    bool gpu_assumed = false;  // no GPU was named or detected: say so
    std::optional<recipe::PerfBaseline> baseline;
};

struct PerfReport {
    size_t samples = 0;  // throughput lines in the log
    size_t used = 0;     // after the warm-up line is skipped
    int first_line = 0;
    int last_line = 0;
    double tflops = 0;  // median of the used samples
    double tflops_min = 0;
    double tflops_max = 0;
    double peak = 0;
    std::string peak_source;
    double mfu = 0;                    // fraction of peak
    std::optional<double> log_mfu;     // median of the log's own MFU figures (fraction)
    std::optional<double> log_peak;    // the peak those figures imply: throughput / MFU
    std::optional<double> correction;  // log_peak / peak: multiply the log's MFU by this
    std::optional<recipe::PerfBaseline> baseline;
    std::optional<double> baseline_delta;  // tflops / baseline - 1
    bool below_baseline = false;           // by more than the baseline's tolerance
    std::vector<std::string> notes;
};

/// Analyze a log. The first throughput line is skipped as warm-up when there are at least
/// three. Errors: usage when the log has no throughput line or the GPU has no known peak (and
/// no --peak), naming the log / GPU.
[[nodiscard]] Result<PerfReport> analyze_perf(std::string_view log, const std::string& log_name,
                                              const PerfOptions& options);

/// Text for a terminal, one fact per line.
[[nodiscard]] std::string format_perf(const PerfReport& report, const std::string& log_name);

}  // namespace bootstrap::doctor
