#pragma once
// The CUDA code a shared library carries, read from its ELF `.nv_fatbin` section directly (no
// cuobjdump). Layout (little-endian; checked against nvcc 13.0 output):
//
//   container  u32 magic 0xBA55ED50 | u16 version (1) | u16 header size (16) | u64 payload size
//   entry      at 0 u16 kind (1 PTX, 2 ELF cubin) | at 4 u32 header size | at 8 u64 payload size
//              at 28 u32 SM number (90) | at 40 u64 flags
//   flags      0x2000 LZ4, 0x8000 ZSTD compressed payload; 0x100000 an 'a' (arch-specific)
//              target, 0x200000 an 'f' (family) target
//
// The next entry starts at header size + payload size; containers follow each other, possibly
// after zero padding. The SM number is readable without decompressing anything.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::inspect {

namespace fs = std::filesystem;

enum class FatbinKind { ptx, sass };
enum class FatbinCompression { none, lz4, zstd };

struct FatbinEntry {
    FatbinKind kind = FatbinKind::sass;
    unsigned sm = 0;   // 90 for sm_90 / compute_90
    char variant = 0;  // 0, 'a' or 'f'
    FatbinCompression compression = FatbinCompression::none;
    uint64_t size = 0;    // payload bytes as stored
    uint64_t offset = 0;  // of the entry header inside .nv_fatbin
    uint64_t flags = 0;   // raw flags word

    [[nodiscard]] bool compressed() const { return compression != FatbinCompression::none; }
    /// "sm_90", "sm_90a", "compute_90".
    [[nodiscard]] std::string target() const;
    /// "sm_90 SASS", "compute_90 PTX (zstd-compressed)".
    [[nodiscard]] std::string describe() const;
};

[[nodiscard]] std::string_view to_string(FatbinKind kind);         // "SASS", "PTX"
[[nodiscard]] std::string_view to_string(FatbinCompression comp);  // "none", "lz4", "zstd"

/// What a file carries.
struct CudaContents {
    fs::path file;
    bool has_fatbin = false;  // the ELF has a .nv_fatbin section
    std::vector<FatbinEntry> entries;
};

/// Walk the containers and entries of a `.nv_fatbin` section. Fails (io) naming the offset when
/// a header is cut short, a size runs past the section, or a container's magic is wrong.
[[nodiscard]] Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const unsigned char> section);

/// Read `file` (an ELF shared library or executable) and list its fatbin entries. A file without
/// a .nv_fatbin section is not an error (has_fatbin false). Fails for unreadable or non-ELF files,
/// and for a truncated or corrupt one (a header table or a section past the end of the file).
[[nodiscard]] Result<CudaContents> read_cuda_contents(const fs::path& file);

/// The distinct targets, in order of first appearance: "sm_90 SASS, compute_90 PTX".
[[nodiscard]] std::string summarize(const std::vector<FatbinEntry>& entries);

/// The one rule for "does CUDA code built for `code_major.code_minor` (suffix 0, 'a' or 'f') run
/// on a device of compute capability `device_major.device_minor`": SASS needs the same major and
/// a minor <= the device's; PTX needs <= the device (a 'f' target: the same major); an 'a' target
/// runs only on exactly its arch. device::sass_runs_on / ptx_runs_on call this.
[[nodiscard]] bool cuda_code_runs_on(bool ptx, int code_major, int code_minor, char suffix, int device_major,
                                     int device_minor);

/// OK when `entries` hold SASS usable on `arch` ("9.0": same major, minor <= 0; an 'a' target
/// only on exactly its arch) or PTX <= it. Otherwise (step_failed) a message naming `what` and
/// listing what it does carry. A malformed `arch` fails with usage.
[[nodiscard]] Status check_cuda_arch(const std::vector<FatbinEntry>& entries, std::string_view arch,
                                     std::string_view what);

}  // namespace bootstrap::inspect
