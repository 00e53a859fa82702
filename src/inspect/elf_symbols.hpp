#pragma once
// The dynamic symbols a shared library defines, read from its `.dynsym` with libelf (no nm).
// This is what the dynamic linker can bind an undefined reference to: "undefined symbol:
// cublasLtGroupedMatrixLayoutInit_internal, version libcublasLt.so.13" means no library that
// loaded defines it (README pitfall P10).

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::inspect {

struct ElfSymbol {
    std::string name;
    std::string version;   // from .gnu.version_d ("libcublasLt.so.13"), "" when unversioned
    bool defined = false;  // st_shndx != SHN_UNDEF
};

/// Every entry of `file`'s `.dynsym` (defined and undefined), in table order, with the version
/// name each defined symbol carries. Fails (io) for unreadable, non-ELF, truncated or corrupt
/// files (a header table or a section past the end of the file); a file without
/// a .dynsym gives an empty list.
[[nodiscard]] Result<std::vector<ElfSymbol>> read_dynamic_symbols(const std::filesystem::path& file);

/// The defined symbol called `name` (any version), or nullptr.
[[nodiscard]] const ElfSymbol* find_defined(const std::vector<ElfSymbol>& symbols, const std::string& name);

}  // namespace bootstrap::inspect
