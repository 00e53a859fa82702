// Fuzz target: the bytes of an ELF `.nv_fatbin` section through inspect::parse_fatbin, then the
// listing and arch checks that `bootstrap doctor` and `verify = { cuda_arch }` print.

#include <vector>

#include "fuzz_support.hpp"
#include "inspect/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    // A private copy: the parser must not rely on alignment the fuzzer's buffer happens to have.
    std::vector<unsigned char> section(data, data + size);
    auto entries = inspect::parse_fatbin(section);
    if (!entries) return 0;
    for (const auto& e : *entries) {
        if (e.offset >= size) fuzz::invariant_failed("an entry's offset is past the section", "");
        (void)e.describe();
    }
    (void)inspect::summarize(*entries);
    (void)inspect::check_cuda_arch(*entries, "9.0", "fuzzed.so");
    (void)inspect::check_cuda_arch(*entries, "10.0a", "fuzzed.so");
    return 0;
}
