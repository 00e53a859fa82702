// Not a parser: the target tests/integration/test_fuzz_script.py uses to check that
// scripts/fuzz.sh reports a crash (reproducer, stack, exit status) and honours known_crashes.txt.
// It reads one byte past its buffer for exactly one input, "planted crash\n", which the fuzzer
// cannot find on its own in seconds: the input is compared by hash, so no comparison guides it.
// scripts/fuzz.sh runs it only when named.

#include <cstdint>
#include <cstring>
#include <memory>

namespace {

uint64_t fnv1a(const uint8_t* data, size_t size) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const uint64_t planted = [] {
        const char* text = "planted crash\n";
        return fnv1a(reinterpret_cast<const uint8_t*>(text), std::strlen(text));
    }();
    auto copy = std::make_unique<uint8_t[]>(size + 1);
    std::memcpy(copy.get(), data, size);
    volatile uint8_t sink = copy[fnv1a(data, size) == planted ? size + 1 : size];
    (void)sink;
    return 0;
}
