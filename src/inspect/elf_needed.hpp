#pragma once
// The shared libraries an ELF file names in its dynamic section (DT_NEEDED), read with libelf
// (no readelf). A Python extension built with torch's cpp_extension names libc10.so and
// libtorch*.so there without a path the loader can find: it imports only after `import torch`
// has loaded them.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::inspect {

/// The DT_NEEDED entries of `file`'s dynamic section, in order ("libc10.so", "libc.so.6").
/// A file without a dynamic section gives an empty list. Errors (io): unreadable, not ELF,
/// truncated or corrupt (as ElfFile::open), naming the file.
[[nodiscard]] Result<std::vector<std::string>> read_needed_libraries(const std::filesystem::path& file);

}  // namespace bootstrap::inspect
