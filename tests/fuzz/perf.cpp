// Fuzz target: a Megatron training log through `bootstrap perf`'s reader (doctor::
// parse_throughput, analyze_perf, format_perf).

#include "doctor/perf.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    std::string_view log = fuzz::as_text(data, size);
    (void)doctor::parse_throughput(log);
    doctor::PerfOptions options;
    options.gpu = "NVIDIA H200";
    if (auto report = doctor::analyze_perf(log, "fuzz.log", options)) (void)doctor::format_perf(*report, "fuzz.log");
    return 0;
}
