// `perf` on Megatron log excerpts: throughput lines, MFU against the device's dense BF16 peak,
// the correction for a log that assumed another peak, and the baseline comparison.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "doctor/perf.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;

namespace {

/// An upstream Megatron training_log() line (--log-throughput).
std::string iteration_line(int it, double tflops) {
    return fmt::format(
        " [2025-05-21 10:{:02d}:00] iteration {:>8d}/  500000 | consumed samples: "
        "{:>12d} | elapsed time per iteration (ms): 5123.4 | throughput per GPU "
        "(TFLOP/s/GPU): {:.1f} | learning rate: 3.000000E-04 | global batch size: "
        "  256 | lm loss: 7.123456E+00 | loss scale: 1.0 | grad norm: 1.234 |\n",
        it % 60, it, it * 256, tflops);
}

PerfOptions on(const std::string& gpu) {
    PerfOptions o;
    o.gpu = gpu;
    return o;
}

}  // namespace

TEST_CASE("throughput lines are found with their iteration and line") {
    std::string log = "using world size: 8\n" + iteration_line(10, 300.0) + "noise\n" + iteration_line(20, 402.5);
    auto samples = parse_throughput(log);
    REQUIRE(samples.size() == 2);
    CHECK(samples[0].line == 2);
    CHECK(samples[0].iteration == 10);
    CHECK(samples[0].tflops == Approx(300.0));
    CHECK_FALSE(samples[0].mfu);
    CHECK(samples[1].line == 4);
    CHECK(samples[1].tflops == Approx(402.5));
}

TEST_CASE("MFU against the H200's 989.4, warm-up skipped, median") {
    std::string log =
        iteration_line(10, 120.0) + iteration_line(20, 400.0) + iteration_line(30, 410.0) + iteration_line(40, 395.0);
    auto r = analyze_perf(log, "train.log", on("NVIDIA H200"));
    REQUIRE(r);
    CHECK(r->samples == 4);
    CHECK(r->used == 3);
    CHECK(r->first_line == 2);
    CHECK(r->last_line == 4);
    CHECK(r->tflops == Approx(400.0));
    CHECK(r->peak == Approx(989.4));
    CHECK(r->mfu == Approx(400.0 / 989.4));
    CHECK_FALSE(r->log_mfu);
    auto text = format_perf(*r, "train.log");
    CHECK(text.find("throughput: 400.0 TFLOP/s/GPU (median of 3 of 4 lines, train.log:2-4; range "
                    "395.0-410.0)\n") == 0);
    CHECK(text.find("MFU: 40.4% of 989.4\n") != std::string::npos);
    CHECK(text.find("note: line 1 skipped as warm-up\n") != std::string::npos);
}

TEST_CASE("the seed's fork divided by 670: the correction to H200 is x0.68") {
    // 453.0 / 670 = 67.6%: the MFU the fork prints.
    std::string log;
    for (int it : {10, 20, 30})
        log += " iteration " + std::to_string(it) +
               "/ 1000 | throughput per GPU (TFLOP/s/GPU): "
               "453.0 | MFU: 67.6% |\n";
    auto r = analyze_perf(log, "a400m_8b.log", on("H200"));
    REQUIRE(r);
    REQUIRE(r->log_mfu);
    CHECK(*r->log_mfu == Approx(0.676));
    REQUIRE(r->log_peak);
    CHECK(*r->log_peak == Approx(670.0).epsilon(0.002));
    REQUIRE(r->correction);
    CHECK(*r->correction == Approx(0.68).margin(0.005));
    CHECK(r->mfu == Approx(453.0 / 989.4));
    CHECK(*r->log_mfu * *r->correction == Approx(r->mfu).epsilon(0.002));
    auto text = format_perf(*r, "a400m_8b.log");
    CHECK(text.find("log MFU: 67.6%, computed against a peak of 670.1 TFLOP/s/GPU; against 989.4 "
                    "multiply it by 0.68 (67.6% -> 45.8%)\n") != std::string::npos);
}

TEST_CASE("an MFU given as a fraction is read as one") {
    auto samples = parse_throughput("throughput per GPU (TFLOP/s/GPU): 400.0 | mfu 0.404\n");
    REQUIRE(samples.size() == 1);
    REQUIRE(samples[0].mfu);
    CHECK(*samples[0].mfu == Approx(0.404));
}

TEST_CASE("peaks: known GPUs, --peak override, unknown GPUs are an error") {
    CHECK(peak_for_gpu("NVIDIA H100 80GB HBM3")->tflops == Approx(989.4));
    CHECK(peak_for_gpu("NVIDIA H100 PCIe")->tflops == Approx(756.0));
    CHECK(peak_for_gpu("NVIDIA A100-SXM4-80GB")->tflops == Approx(312.0));
    CHECK(peak_for_gpu("NVIDIA H200")->gpu == "H200 SXM");
    CHECK_FALSE(peak_for_gpu("NVIDIA H200 NVL"));
    CHECK_FALSE(peak_for_gpu("NVIDIA L20"));

    std::string log = iteration_line(1, 300.0);
    PerfOptions o = on("NVIDIA L20");
    auto unknown = analyze_perf(log, "x.log", o);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().code == ErrorCode::usage);
    CHECK(unknown.error().message.find("'NVIDIA L20'") != std::string::npos);
    o.peak = 600.0;
    auto forced = analyze_perf(log, "x.log", o);
    REQUIRE(forced);
    CHECK(forced->mfu == Approx(0.5));
    CHECK(forced->peak_source == "--peak");
    CHECK(forced->used == 1);  // fewer than three lines: nothing is skipped
}

TEST_CASE("an assumed GPU is said so") {
    PerfOptions o;
    o.gpu_assumed = true;
    auto r = analyze_perf(iteration_line(1, 300.0), "x.log", o);
    REQUIRE(r);
    CHECK(format_perf(*r, "x.log")
              .find("note: no GPU given: assumed H200 (pass --gpu NAME or "
                    "--peak TFLOPS)\n") != std::string::npos);
}

TEST_CASE("baseline comparison: a drop beyond the tolerance, within it, above it") {
    std::string log = iteration_line(1, 280.0);
    PerfOptions o = on("H200");
    o.baseline = recipe::PerfBaseline{430.0, 0.05, "DSW 8xH200", {}};
    auto drop = analyze_perf(log, "x.log", o);
    REQUIRE(drop);
    CHECK(drop->below_baseline);
    CHECK(*drop->baseline_delta == Approx(280.0 / 430.0 - 1));
    CHECK(format_perf(*drop, "x.log")
              .find("baseline: 430.0 TFLOP/s/GPU (DSW 8xH200): 34.9% below, "
                    "a drop beyond the 5.0% tolerance\n") != std::string::npos);

    o.baseline->tflops = 290.0;
    auto within = analyze_perf(log, "x.log", o);
    REQUIRE(within);
    CHECK_FALSE(within->below_baseline);
    CHECK(format_perf(*within, "x.log").find("3.4% below, within the 5.0% tolerance") != std::string::npos);

    o.baseline->tflops = 200.0;
    auto above = analyze_perf(log, "x.log", o);
    REQUIRE(above);
    CHECK_FALSE(above->below_baseline);
    CHECK(format_perf(*above, "x.log").find("40.0% above, better than the baseline") != std::string::npos);
}

TEST_CASE("a log without throughput lines is invalid input naming the flag to add") {
    auto r = analyze_perf("iteration 1 | lm loss: 7.0\n", "x.log", on("H200"));
    REQUIRE_FALSE(r);
    CHECK(exit_code_for(r.error()) == 2);
    CHECK(r.error().message.find("--log-throughput") != std::string::npos);
}

TEST_CASE("hostile numbers in a log are skipped, never thrown") {
    // std::stod threw std::out_of_range on these, which aborted `bootstrap perf`.
    std::string huge(400, '1');
    std::string log = "iteration 10/ 100 | throughput per GPU (TFLOP/s/GPU): " + huge + " |\n" + "iteration " + huge +
                      "/ 100 | throughput per GPU (TFLOP/s/GPU): 400.0 | "
                      "MFU: " +
                      huge + "%\n";
    auto samples = parse_throughput(log);
    REQUIRE(samples.size() == 1);
    CHECK(samples[0].line == 2);
    CHECK(samples[0].tflops == Approx(400.0));
    CHECK(samples[0].iteration == -1);
    CHECK_FALSE(samples[0].mfu);
    auto r = analyze_perf("iteration 1/ 2 | throughput per GPU (TFLOP/s/GPU): " + huge + "\n", "train.log", on("H200"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
}

TEST_CASE("a GPU name of any length is looked up without a regex on all of it") {
    // `\bh100\b.*\bpcie\b` on a 1,000,000-character name overflowed the stack.
    CHECK_FALSE(peak_for_gpu("h100 " + std::string(1'000'000, 'x')));
    auto r = analyze_perf(iteration_line(1, 300.0), "train.log", on("h100 " + std::string(100'000, 'x')));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.size() < 400);
    CHECK(r.error().message.find("(100005 characters)") != std::string::npos);
}
