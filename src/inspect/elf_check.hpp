#pragma once
// Whether an opened ELF file is whole (inspect-internal: libelf is owned by this module). libelf
// reads a truncated file without complaint and simply finds fewer sections, which would turn a
// library cut short by a failed download or a full disk into "no CUDA code".

#include <filesystem>

#include <libelf.h>

#include "core/error.hpp"

namespace bootstrap::inspect {

/// OK when the ELF header, the program and section header tables and every section with file
/// contents lie inside the file (`fd` is the one `elf` reads). Otherwise io: "FILE is truncated
/// or corrupt: <what runs past the end> (the file has N bytes)".
[[nodiscard]] Status check_elf_complete(Elf* elf, int fd, const std::filesystem::path& file);

/// The error for a file libelf does not take as ELF: "FILE is not an ELF file", or, when it
/// starts with the ELF magic, that it is truncated or corrupt.
[[nodiscard]] Error not_elf(int fd, const std::filesystem::path& file);

}  // namespace bootstrap::inspect
