// Throughput parsing and MFU arithmetic for `bootstrap perf`.

#include "doctor/perf.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::doctor {

namespace {

constexpr size_t k_max_line = 4096;
constexpr size_t k_max_gpu_name = 256;

// Megatron's training_log(): ' iteration       10/  500000 | ... | throughput per GPU
// (TFLOP/s/GPU): 412.3 | ...'.
const std::regex& throughput_re() {
    static const std::regex re(R"(throughput per GPU \(TFLOP/s/GPU\):\s*([0-9]+(?:\.[0-9]*)?))");
    return re;
}
const std::regex& iteration_re() {
    static const std::regex re(R"(\biteration\s+([0-9]+)\s*/)");
    return re;
}
// "MFU: 41.2%", "mfu 0.412", "model FLOPs utilization (MFU): 41.2 %".
const std::regex& mfu_re() {
    static const std::regex re(R"(\bMFU\b[^0-9\n|]{0,20}?([0-9]+(?:\.[0-9]*)?)\s*(%?))",
                               std::regex::ECMAScript | std::regex::icase);
    return re;
}

/// Dense BF16 tensor-core peaks. Datasheets print the sparse figure with an asterisk; dense is
/// half of it.
struct PeakRow {
    const char* pattern;  // over the lower-cased GPU name
    const char* gpu;
    double tflops;
    const char* source;
};
const PeakRow k_peaks[] = {
    {R"(\bh100\b.*\bpcie\b)", "H100 PCIe", 756.0,
     "NVIDIA H100 datasheet: 1,513 TFLOPS BF16 with sparsity, half of it dense"},
    // 989.4 = 528 tensor cores x 1,024 dense BF16 FLOP/clock x 1.83 GHz; the datasheets round
    // the sparse figure to 1,979.
    {R"(\bh200\b)", "H200 SXM", 989.4,
     "NVIDIA H200 datasheet: 1,979 TFLOPS BF16 with sparsity, the H100 SXM tensor cores"},
    {R"(\bh100\b)", "H100 SXM", 989.4, "NVIDIA H100 datasheet: 1,979 TFLOPS BF16 with sparsity, half of it dense"},
    {R"(\ba100\b)", "A100", 312.0, "NVIDIA A100 datasheet: 312 TFLOPS BF16 dense, 624 with sparsity"},
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

}  // namespace

std::vector<ThroughputSample> parse_throughput(std::string_view log) {
    std::vector<ThroughputSample> out;
    auto lines = core::split(log, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (line.find("TFLOP/s/GPU") == std::string::npos) continue;
        // libstdc++'s regex matcher recurses once per character matched: cut the line.
        std::string cut = line.substr(0, k_max_line);
        std::smatch m;
        if (!std::regex_search(cut, m, throughput_re())) continue;
        // A figure beyond double's range (400 digits) is no sample: skip the line.
        auto tflops = core::parse_double(m[1].str());
        if (!tflops) continue;
        ThroughputSample s;
        s.line = static_cast<int>(i + 1);
        s.tflops = *tflops;
        if (std::regex_search(cut, m, iteration_re()))
            if (auto it = core::parse_int<long>(m[1].str())) s.iteration = *it;
        if (std::regex_search(cut, m, mfu_re())) {
            if (auto v = core::parse_double(m[1].str())) s.mfu = (m[2].length() > 0 || *v > 1.0) ? *v / 100.0 : *v;
        }
        s.text = std::string(core::trim(cut.substr(0, 300)));
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<GpuPeak> peak_for_gpu(std::string_view name) {
    // Every known name is short; a longer one (from --gpu) must not reach the regex matcher.
    if (name.size() > k_max_gpu_name) return std::nullopt;
    std::string n = core::to_lower(name);
    // NVL (PCIe-card, lower power) and Grace-Hopper parts have other peaks: no guessing.
    if (n.find("nvl") != std::string::npos || n.find("gh200") != std::string::npos) return std::nullopt;
    for (const auto& row : k_peaks)
        if (std::regex_search(n, std::regex(row.pattern))) return GpuPeak{row.gpu, row.tflops, row.source};
    return std::nullopt;
}

Result<PerfReport> analyze_perf(std::string_view log, const std::string& log_name, const PerfOptions& options) {
    auto samples = parse_throughput(log);
    if (samples.empty())
        return fail(ErrorCode::usage, fmt::format("no 'throughput per GPU (TFLOP/s/GPU)' line in {} (Megatron prints "
                                                  "it when run with --log-throughput)",
                                                  log_name));
    PerfReport r;
    if (options.peak) {
        if (!(*options.peak > 0))
            return fail(ErrorCode::usage, fmt::format("--peak must be greater than 0, not {}", *options.peak));
        r.peak = *options.peak;
        r.peak_source = "--peak";
    } else if (auto p = peak_for_gpu(options.gpu)) {
        r.peak = p->tflops;
        r.peak_source = fmt::format("{} dense BF16; {}", p->gpu, p->source);
        if (options.gpu_assumed)
            r.notes.push_back(
                fmt::format("no GPU given: assumed {} (pass --gpu NAME or --peak "
                            "TFLOPS)",
                            options.gpu));
    } else {
        return fail(ErrorCode::usage, fmt::format("no dense BF16 peak is known for GPU '{}' (known: H100 SXM, H100 "
                                                  "PCIe, H200 SXM, A100); pass --peak TFLOPS",
                                                  core::clip(options.gpu)));
    }

    r.samples = samples.size();
    size_t skip = samples.size() >= 3 ? 1 : 0;
    if (skip) r.notes.push_back(fmt::format("line {} skipped as warm-up", samples.front().line));
    std::vector<double> tflops, mfus, implied;
    for (size_t i = skip; i < samples.size(); ++i) {
        const auto& s = samples[i];
        tflops.push_back(s.tflops);
        if (s.mfu && *s.mfu > 0) {
            mfus.push_back(*s.mfu);
            implied.push_back(s.tflops / *s.mfu);
        }
    }
    r.used = tflops.size();
    r.first_line = samples[skip].line;
    r.last_line = samples.back().line;
    r.tflops = median(tflops);
    r.tflops_min = *std::min_element(tflops.begin(), tflops.end());
    r.tflops_max = *std::max_element(tflops.begin(), tflops.end());
    r.mfu = r.tflops / r.peak;
    if (!mfus.empty()) {
        r.log_mfu = median(mfus);
        r.log_peak = median(implied);
        r.correction = *r.log_peak / r.peak;
    }
    if (options.baseline) {
        r.baseline = options.baseline;
        r.baseline_delta = r.tflops / options.baseline->tflops - 1.0;
        r.below_baseline = *r.baseline_delta < -options.baseline->tolerance;
    }
    return r;
}

std::string format_perf(const PerfReport& r, const std::string& log_name) {
    std::string out;
    out += fmt::format(
        "throughput: {:.1f} TFLOP/s/GPU (median of {} of {} lines, {}:{}-{}; "
        "range {:.1f}-{:.1f})\n",
        r.tflops, r.used, r.samples, log_name, r.first_line, r.last_line, r.tflops_min, r.tflops_max);
    out += fmt::format("peak: {:.1f} TFLOP/s/GPU ({})\n", r.peak, r.peak_source);
    out += fmt::format("MFU: {} of {:.1f}\n", percent(r.mfu), r.peak);
    if (r.log_mfu && r.correction) {
        out +=
            fmt::format("log MFU: {}, computed against a peak of {:.1f} TFLOP/s/GPU", percent(*r.log_mfu), *r.log_peak);
        if (std::abs(*r.correction - 1.0) > 0.01)
            out += fmt::format("; against {:.1f} multiply it by {:.2f} ({} -> {})", r.peak, *r.correction,
                               percent(*r.log_mfu), percent(*r.log_mfu * *r.correction));
        out += "\n";
    }
    if (r.baseline && r.baseline_delta) {
        double d = *r.baseline_delta;
        std::string tolerance = percent(r.baseline->tolerance);
        std::string verdict = r.below_baseline ? fmt::format("a drop beyond the {} tolerance", tolerance)
                              : std::abs(d) <= r.baseline->tolerance ? fmt::format("within the {} tolerance", tolerance)
                                                                     : std::string("better than the baseline");
        out += fmt::format("baseline: {:.1f} TFLOP/s/GPU{}: {} {}, {}\n", r.baseline->tflops,
                           r.baseline->note.empty() ? "" : fmt::format(" ({})", r.baseline->note), percent(std::abs(d)),
                           d < 0 ? "below" : "above", verdict);
    }
    for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
    return out;
}

}  // namespace bootstrap::doctor
