// Fuzz target: the import probe's captured output (pyenv::parse_import_probe), which is whatever
// a venv's Python printed: module code runs before the probe's own lines.

#include "pyenv/import_probe.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto failure = bootstrap::pyenv::parse_import_probe(bootstrap::fuzz::as_text(data, size));
    if (failure.root_cause.empty() && !failure.error.empty())
        bootstrap::fuzz::invariant_failed("an error without a root cause", failure.error);
    return 0;
}
