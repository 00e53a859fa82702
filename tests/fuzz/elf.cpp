// Fuzz target: a whole file read as a shared library, through libelf, by inspect's two readers
// (read_cuda_contents: the .nv_fatbin section; read_dynamic_symbols: .dynsym with versions).
// They take a path, so each input is written to a file in the scratch directory first.

#include "fuzz_support.hpp"
#include "inspect/elf_symbols.hpp"
#include "inspect/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    static const std::filesystem::path file = fuzz::scratch_dir() / "libfuzzed.so";
    fuzz::write_bytes(file, fuzz::as_text(data, size));
    if (auto contents = inspect::read_cuda_contents(file)) (void)inspect::summarize(contents->entries);
    if (auto symbols = inspect::read_dynamic_symbols(file)) {
        for (const auto& s : *symbols) (void)inspect::find_defined(*symbols, s.name);
    }
    return 0;
}
