#include "inspect/elf_file.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "inspect/elf_check.hpp"

namespace bootstrap::inspect {

Result<ElfFile> ElfFile::open(const std::filesystem::path& file) {
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(ErrorCode::internal, fmt::format("libelf is unusable: {}", elf_errmsg(-1)));
    core::Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return fail(ErrorCode::io, fmt::format("cannot open {}: {}", file.string(), std::strerror(errno)));
    ElfFile out(std::move(fd), nullptr);
    out.m_elf.reset(elf_begin(out.fd(), ELF_C_READ_MMAP, nullptr));
    if (!out.m_elf || elf_kind(out.elf()) != ELF_K_ELF) return tl::unexpected(not_elf(out.fd(), file));
    // A library cut short reads as one with fewer sections or symbols: an error, not "no CUDA
    // code" or a missing symbol.
    BS_CHECK(check_elf_complete(out.elf(), out.fd(), file));
    return out;
}

}  // namespace bootstrap::inspect
