#include "inspect/elf_symbols.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "inspect/elf_file.hpp"

namespace bootstrap::inspect {

namespace {

/// Version index -> name, from SHT_GNU_verdef (the versions this file defines). Bounded by the
/// section's data: each entry must lie further into it than the last (a `vd_next` that loops
/// or runs past the end stops the walk), and offsets never pass through `int` unchecked.
std::map<unsigned, std::string> read_verdefs(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
    std::map<unsigned, std::string> names;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) return names;
    const size_t end = std::min<size_t>(data->d_size, std::numeric_limits<int>::max());
    size_t offset = 0;
    for (GElf_Word i = 0; i < shdr.sh_info && offset < end; ++i) {
        GElf_Verdef def;
        if (!gelf_getverdef(data, static_cast<int>(offset), &def)) break;
        GElf_Verdaux aux;
        const size_t aux_at = offset + def.vd_aux;
        if (def.vd_cnt > 0 && aux_at < end && gelf_getverdaux(data, static_cast<int>(aux_at), &aux)) {
            const char* n = elf_strptr(elf, shdr.sh_link, aux.vda_name);
            if (n) names[def.vd_ndx] = n;
        }
        if (def.vd_next == 0) break;
        offset += def.vd_next;
    }
    return names;
}

}  // namespace

Result<std::vector<ElfSymbol>> read_dynamic_symbols(const std::filesystem::path& file) {
    BS_TRY(auto opened, ElfFile::open(file));
    Elf* elf = opened.elf();

    Elf_Scn* dynsym = nullptr;
    Elf_Scn* versym = nullptr;
    GElf_Shdr dynsym_hdr{};
    std::map<unsigned, std::string> versions;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr hdr;
        if (!gelf_getshdr(scn, &hdr)) continue;
        if (hdr.sh_type == SHT_DYNSYM) {
            dynsym = scn;
            dynsym_hdr = hdr;
        } else if (hdr.sh_type == SHT_GNU_versym) {
            versym = scn;
        } else if (hdr.sh_type == SHT_GNU_verdef) {
            versions = read_verdefs(elf, scn, hdr);
        }
    }
    std::vector<ElfSymbol> out;
    if (!dynsym) return out;
    Elf_Data* data = elf_getdata(dynsym, nullptr);
    if (!data) return fail(ErrorCode::io, fmt::format("cannot read .dynsym of {}: {}", file.string(), elf_errmsg(-1)));
    Elf_Data* vdata = versym ? elf_getdata(versym, nullptr) : nullptr;
    // The header's count, bounded by the data libelf really read (and by `int`, gelf's index).
    size_t count = dynsym_hdr.sh_entsize ? dynsym_hdr.sh_size / dynsym_hdr.sh_entsize : 0;
    if (dynsym_hdr.sh_entsize)
        count = std::min(
            {count, data->d_size / dynsym_hdr.sh_entsize, static_cast<size_t>(std::numeric_limits<int>::max())});
    for (size_t i = 1; i < count; ++i) {  // entry 0 is the reserved null symbol
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
        const char* name = elf_strptr(elf, dynsym_hdr.sh_link, sym.st_name);
        if (!name || !*name) continue;
        ElfSymbol s;
        s.name = name;
        s.defined = sym.st_shndx != SHN_UNDEF;
        GElf_Versym v;
        if (s.defined && vdata && gelf_getversym(vdata, static_cast<int>(i), &v)) {
            auto it = versions.find(v & 0x7fff);  // bit 15 marks a hidden (non-default) version
            if (it != versions.end() && (v & 0x7fff) > 1) s.version = it->second;
        }
        out.push_back(std::move(s));
    }
    return out;
}

const ElfSymbol* find_defined(const std::vector<ElfSymbol>& symbols, const std::string& name) {
    for (const auto& s : symbols)
        if (s.defined && s.name == name) return &s;
    return nullptr;
}

}  // namespace bootstrap::inspect
