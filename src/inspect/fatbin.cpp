#include "inspect/fatbin.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "inspect/elf_file.hpp"

#include "core/strings.hpp"

namespace bootstrap::inspect {

namespace {

constexpr uint32_t k_container_magic = 0xBA55ED50;
constexpr size_t k_container_header = 16;
constexpr size_t k_entry_min_header = 48;  // the flags word at 40 is the last field we read
constexpr uint16_t k_kind_ptx = 1;
constexpr uint16_t k_kind_elf = 2;
constexpr uint64_t k_flag_lz4 = 0x2000;
constexpr uint64_t k_flag_zstd = 0x8000;
constexpr uint64_t k_flag_arch_specific = 0x100000;  // sm_90a (observed, nvcc 13.0)
constexpr uint64_t k_flag_family = 0x200000;         // sm_100f (observed, nvcc 13.0)

template <class T>
T read_le(std::span<const unsigned char> bytes, size_t at) {
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(bytes[at + i]) << (8 * i);
    return value;
}

bool all_zero(std::span<const unsigned char> bytes) {
    return std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0; });
}

Error malformed(uint64_t offset, std::string why) {
    return Error{ErrorCode::io, fmt::format("malformed .nv_fatbin at offset {:#x}: {}", offset, why), {}};
}

Status parse_entries(std::span<const unsigned char> section, size_t begin, size_t end, std::vector<FatbinEntry>& out) {
    size_t pos = begin;
    while (pos < end) {
        if (end - pos < k_entry_min_header) {
            if (all_zero(section.subspan(pos, end - pos))) return {};
            return tl::unexpected(malformed(pos, "entry header cut short"));
        }
        uint16_t kind = read_le<uint16_t>(section, pos);
        uint32_t header_size = read_le<uint32_t>(section, pos + 4);
        uint64_t payload_size = read_le<uint64_t>(section, pos + 8);
        if (kind == 0 && header_size == 0 && all_zero(section.subspan(pos, end - pos))) return {};
        if (header_size < k_entry_min_header || header_size > end - pos)
            return tl::unexpected(malformed(pos, fmt::format("entry header size {}", header_size)));
        if (payload_size > end - pos - header_size)
            return tl::unexpected(
                malformed(pos, fmt::format("entry payload of {} bytes runs past its container", payload_size)));
        if (kind != k_kind_ptx && kind != k_kind_elf)
            return tl::unexpected(malformed(pos, fmt::format("unknown entry kind {}", kind)));
        FatbinEntry entry;
        entry.kind = kind == k_kind_ptx ? FatbinKind::ptx : FatbinKind::sass;
        entry.sm = read_le<uint32_t>(section, pos + 28);
        entry.flags = read_le<uint64_t>(section, pos + 40);
        entry.size = payload_size;
        entry.offset = pos;
        if (entry.flags & k_flag_zstd) entry.compression = FatbinCompression::zstd;
        else if (entry.flags & k_flag_lz4) entry.compression = FatbinCompression::lz4;
        if (entry.flags & k_flag_arch_specific) entry.variant = 'a';
        else if (entry.flags & k_flag_family) entry.variant = 'f';
        out.push_back(entry);
        pos += header_size + payload_size;
    }
    return {};
}

// "9.0" / "90" / "sm_90" -> (9, 0).
std::optional<std::pair<unsigned, unsigned>> parse_device_arch(std::string_view text) {
    std::string_view s = core::trim(text);
    (void)core::consume_prefix(s, "sm_");
    std::string digits;
    for (char c : s) {
        if (c == '.') continue;
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        digits += c;
    }
    auto dot = s.find('.');
    if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
    if (dot != std::string_view::npos && s.size() - dot != 2) return std::nullopt;  // one minor digit
    auto number = core::parse_int<unsigned>(digits);
    if (!number) return std::nullopt;
    return std::pair{*number / 10, *number % 10};
}

bool usable_on(const FatbinEntry& e, unsigned major, unsigned minor) {
    return cuda_code_runs_on(e.kind == FatbinKind::ptx, static_cast<int>(e.sm / 10), static_cast<int>(e.sm % 10),
                             e.variant, static_cast<int>(major), static_cast<int>(minor));
}

}  // namespace

std::string_view to_string(FatbinKind kind) { return kind == FatbinKind::ptx ? "PTX" : "SASS"; }

std::string_view to_string(FatbinCompression comp) {
    switch (comp) {
        case FatbinCompression::none: return "none";
        case FatbinCompression::lz4: return "lz4";
        case FatbinCompression::zstd: return "zstd";
    }
    return "?";
}

std::string FatbinEntry::target() const {
    std::string out = fmt::format("{}_{}", kind == FatbinKind::ptx ? "compute" : "sm", sm);
    if (variant) out += variant;
    return out;
}

std::string FatbinEntry::describe() const {
    std::string out = fmt::format("{} {}", target(), to_string(kind));
    if (compressed()) out += fmt::format(" ({}-compressed)", to_string(compression));
    return out;
}

Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const unsigned char> section) {
    std::vector<FatbinEntry> out;
    size_t pos = 0;
    while (pos < section.size()) {
        if (section.size() - pos < k_container_header) {
            if (all_zero(section.subspan(pos))) break;
            return tl::unexpected(malformed(pos, "container header cut short"));
        }
        uint32_t magic = read_le<uint32_t>(section, pos);
        if (magic != k_container_magic) {
            // Zero padding between or after containers.
            if (magic == 0) {
                pos += 4;
                continue;
            }
            return tl::unexpected(
                malformed(pos, fmt::format("magic {:#010x}, expected {:#010x}", magic, k_container_magic)));
        }
        uint16_t header_size = read_le<uint16_t>(section, pos + 6);
        uint64_t payload_size = read_le<uint64_t>(section, pos + 8);
        if (header_size < k_container_header || header_size > section.size() - pos)
            return tl::unexpected(malformed(pos, fmt::format("container header size {}", header_size)));
        if (payload_size > section.size() - pos - header_size)
            return tl::unexpected(
                malformed(pos, fmt::format("container payload of {} bytes runs past the section ({} bytes)",
                                           payload_size, section.size())));
        size_t begin = pos + header_size;
        size_t end = begin + payload_size;
        BS_CHECK(parse_entries(section, begin, end, out));
        pos = end;
    }
    return out;
}

Result<CudaContents> read_cuda_contents(const fs::path& file) {
    CudaContents contents;
    contents.file = file;
    BS_TRY(auto opened, ElfFile::open(file));
    Elf* elf = opened.elf();
    size_t names = 0;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return fail(ErrorCode::io,
                    fmt::format("cannot read the section names of {}: {}", file.string(), elf_errmsg(-1)));
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr header;
        if (!gelf_getshdr(scn, &header)) continue;
        const char* name = elf_strptr(elf, names, header.sh_name);
        if (!name || std::strcmp(name, ".nv_fatbin") != 0) continue;
        contents.has_fatbin = true;
        if (header.sh_type == SHT_NOBITS) break;
        Elf_Data* data = elf_rawdata(scn, nullptr);
        if (!data || !data->d_buf) {
            if (header.sh_size == 0) break;
            return fail(ErrorCode::io, fmt::format("cannot read .nv_fatbin of {}: {}", file.string(), elf_errmsg(-1)));
        }
        auto entries =
            parse_fatbin(std::span<const unsigned char>(static_cast<const unsigned char*>(data->d_buf), data->d_size));
        if (!entries) {
            entries.error().message = fmt::format("{}: {}", file.string(), entries.error().message);
            return tl::unexpected(entries.error());
        }
        contents.entries = std::move(*entries);
        break;
    }
    return contents;
}

std::string summarize(const std::vector<FatbinEntry>& entries) {
    std::vector<std::string> seen;
    for (const auto& e : entries) {
        std::string text = fmt::format("{} {}", e.target(), to_string(e.kind));
        if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
    }
    return seen.empty() ? std::string("no CUDA code") : core::join(seen, ", ");
}

bool cuda_code_runs_on(bool ptx, int code_major, int code_minor, char suffix, int device_major, int device_minor) {
    if (suffix == 'a') return code_major == device_major && code_minor == device_minor;
    if (!ptx || suffix == 'f') return code_major == device_major && code_minor <= device_minor;
    return std::pair(code_major, code_minor) <= std::pair(device_major, device_minor);
}

Status check_cuda_arch(const std::vector<FatbinEntry>& entries, std::string_view arch, std::string_view what) {
    auto device = parse_device_arch(arch);
    if (!device)
        return fail(ErrorCode::usage,
                    fmt::format("'{}' is not a CUDA compute capability (expected a form like 9.0)", arch));
    auto [major, minor] = *device;
    for (const auto& e : entries)
        if (usable_on(e, major, minor)) return {};
    std::string carries = entries.empty() ? std::string("carries no CUDA code") : "carries " + summarize(entries);
    std::string sass =
        minor == 0 ? fmt::format("sm_{}0", major) : fmt::format("sm_{}0 to sm_{}{}", major, major, minor);
    return fail(ErrorCode::step_failed, fmt::format("{} has no CUDA code for compute capability {}.{}: it {} (usable "
                                                    "there: SASS {}, or PTX for an arch <= {}.{})",
                                                    what, major, minor, carries, sass, major, minor));
}

}  // namespace bootstrap::inspect
