#include "inspect/elf_needed.hpp"

#include <gelf.h>
#include <libelf.h>

#include <fmt/format.h>

#include "inspect/elf_file.hpp"

namespace bootstrap::inspect {

Result<std::vector<std::string>> read_needed_libraries(const std::filesystem::path& file) {
    BS_TRY(auto opened, ElfFile::open(file));
    Elf* elf = opened.elf();
    std::vector<std::string> out;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr hdr;
        if (!gelf_getshdr(scn, &hdr) || hdr.sh_type != SHT_DYNAMIC) continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data)
            return fail(ErrorCode::io,
                        fmt::format("{}: cannot read the dynamic section: {}", file.string(), elf_errmsg(-1)));
        // sh_entsize is the file's word; a zero one (corrupt) must not divide.
        const size_t count = hdr.sh_entsize ? data->d_size / hdr.sh_entsize : 0;
        for (size_t i = 0; i < count; ++i) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
            if (dyn.d_tag == DT_NULL) break;
            if (dyn.d_tag != DT_NEEDED) continue;
            const char* name = elf_strptr(elf, hdr.sh_link, dyn.d_un.d_val);
            if (!name)
                return fail(ErrorCode::io, fmt::format("{} is corrupt: a DT_NEEDED entry points outside its "
                                                       "string table",
                                                       file.string()));
            out.emplace_back(name);
        }
        break;  // one dynamic section per file
    }
    return out;
}

}  // namespace bootstrap::inspect
