#pragma once
// An ELF file opened for reading through libelf (inspect-internal: libelf is owned by this
// module): the descriptor and the Elf handle, both released on destruction.

#include <filesystem>
#include <memory>

#include <libelf.h>

#include "core/error.hpp"
#include "core/fd.hpp"

namespace bootstrap::inspect {

class ElfFile {
public:
    /// Open `file` read-only and check that it is a whole ELF file (check_elf_complete).
    /// Errors (io): "cannot open FILE: why", "FILE is not an ELF file", "FILE is truncated or
    /// corrupt: ..."; internal when libelf itself is unusable.
    [[nodiscard]] static Result<ElfFile> open(const std::filesystem::path& file);

    [[nodiscard]] Elf* elf() const { return m_elf.get(); }
    [[nodiscard]] int fd() const { return m_fd.get(); }

private:
    struct ElfEnd {
        void operator()(Elf* elf) const { elf_end(elf); }
    };
    ElfFile(core::Fd fd, Elf* elf) : m_fd(std::move(fd)), m_elf(elf) {}

    core::Fd m_fd;                       // declared first: the Elf handle is ended before it
    std::unique_ptr<Elf, ElfEnd> m_elf;  // closes
};

}  // namespace bootstrap::inspect
