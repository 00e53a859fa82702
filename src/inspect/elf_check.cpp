#include "inspect/elf_check.hpp"

#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace bootstrap::inspect {

Error not_elf(int fd, const std::filesystem::path& file) {
    char magic[4] = {};
    struct stat st {};
    if (::pread(fd, magic, sizeof magic, 0) == sizeof magic && std::memcmp(magic, ELFMAG, SELFMAG) == 0 &&
        ::fstat(fd, &st) == 0)
        return Error{ErrorCode::io,
                     fmt::format("{} is truncated or corrupt: an ELF file whose header libelf cannot "
                                 "read (the file has {} bytes)",
                                 file.string(), st.st_size),
                     {}};
    return Error{ErrorCode::io, fmt::format("{} is not an ELF file", file.string()), {}};
}

Status check_elf_complete(Elf* elf, int fd, const std::filesystem::path& file) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return fail(ErrorCode::io, fmt::format("cannot stat {}: {}", file.string(), std::strerror(errno)));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    auto corrupt = [&](const std::string& what) {
        return fail(ErrorCode::io,
                    fmt::format("{} is truncated or corrupt: {} (the file has {} bytes)", file.string(), what, size));
    };
    // An extent [offset, offset + length) inside the file, without overflowing.
    auto inside = [&](std::uint64_t offset, std::uint64_t length) { return offset <= size && length <= size - offset; };

    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr) == nullptr) return corrupt(fmt::format("no ELF header ({})", elf_errmsg(-1)));
    // The counts as the header states them: libelf's own answer shrinks with a truncated file.
    // Only past 0xffff do they live elsewhere (section 0), which libelf reads.
    size_t phnum = ehdr.e_phnum, shnum = ehdr.e_shnum;
    if (ehdr.e_phnum == PN_XNUM && elf_getphdrnum(elf, &phnum) != 0)
        return corrupt(fmt::format("the program header count is unreadable ({})", elf_errmsg(-1)));
    if (ehdr.e_shnum == 0 && ehdr.e_shoff != 0 && elf_getshdrnum(elf, &shnum) != 0)
        return corrupt(fmt::format("the section header count is unreadable ({})", elf_errmsg(-1)));
    const auto ph_bytes = static_cast<std::uint64_t>(phnum) * ehdr.e_phentsize;
    if (phnum > 0 && !inside(ehdr.e_phoff, ph_bytes))
        return corrupt(fmt::format("its program headers end at byte {}", ehdr.e_phoff + ph_bytes));
    const auto sh_bytes = static_cast<std::uint64_t>(shnum) * ehdr.e_shentsize;
    if (shnum > 0 && !inside(ehdr.e_shoff, sh_bytes))
        return corrupt(fmt::format("its section headers end at byte {}", ehdr.e_shoff + sh_bytes));

    for (size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr)
            return corrupt(fmt::format("program header {} is unreadable", i));
        if (!inside(ph.p_offset, ph.p_filesz))
            return corrupt(fmt::format("segment {} ends at byte {}", i, ph.p_offset + ph.p_filesz));
    }
    size_t names = 0;
    const bool have_names = elf_getshdrstrndx(elf, &names) == 0;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr)
            return corrupt(fmt::format("section {} has an unreadable header", elf_ndxscn(scn)));
        if (sh.sh_type == SHT_NOBITS || inside(sh.sh_offset, sh.sh_size)) continue;
        const char* name = have_names ? elf_strptr(elf, names, sh.sh_name) : nullptr;
        return corrupt(fmt::format("section {} ends at byte {}",
                                   name && *name ? name : fmt::format("#{}", elf_ndxscn(scn)),
                                   sh.sh_offset + sh.sh_size));
    }
    return {};
}

}  // namespace bootstrap::inspect
