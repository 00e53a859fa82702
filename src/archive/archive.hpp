#pragma once
// Archive extraction with libarchive (which stays inside archive/): tar and zip, compressed with
// gzip, bzip2, xz, lzma, lzip, zstd or compress, written to a temporary sibling and renamed into
// place, refusing entries that would land outside the destination.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::archive {

namespace fs = std::filesystem;

struct ExtractOptions {
    /// When every entry is under one top directory (sdists, GitHub tarballs), that directory's
    /// contents become dest's.
    bool strip_top = true;
    /// The most the extracted tree may hold (file data, sparse holes included).
    uint64_t max_bytes = 16ull << 30;
    /// Once more than `ratio_floor` bytes are written, more than `max_ratio` bytes out per byte
    /// of the archive read so far is taken for a decompression bomb.
    double max_ratio = 200;
    uint64_t ratio_floor = 10ull << 20;
    /// Refuse a second entry for a path already extracted (the later one would replace the
    /// first unseen): a `pack` never has one.
    bool refuse_duplicates = false;
};

struct Extracted {
    size_t files = 0;      // entries that are not directories (files, symlinks, hardlinks)
    uint64_t bytes = 0;    // file data written
    std::string stripped;  // the top directory removed, or ""
};

/// Extract `archive_file` (tar or zip; gzip, bzip2, xz, lzma, lzip, zstd or compress)
/// into `dest`, which must not exist (its parent is created). Entries go to
/// `dest.parent/.<name>.tmp-<pid>`, renamed to dest only when complete; on any error that
/// directory is removed and dest does not exist. Absolute paths, `..`, links leaving the tree,
/// writes through symlinks, devices and fifos are refused; setuid/setgid bits and group/other
/// write permission are dropped. Extraction stops, naming the archive and the member, past
/// `max_bytes` or `max_ratio` (a decompression bomb). Interruptible (core::interrupt_signal).
[[nodiscard]] Result<Extracted> extract(const fs::path& archive_file, const fs::path& dest,
                                        const ExtractOptions& options = {});

/// One member of an archive being written.
struct Member {
    enum class Type { file, directory, symlink };
    std::string name;  // relative, '/'-separated ("venv/bin/python3")
    Type type = Type::file;
    fs::path source;                  // file: its content is read from here...
    std::optional<std::string> data;  // ...unless given here
    std::string link_target;          // symlink
    unsigned mode = 0644;             // permission bits
};

struct WriteOptions {
    int64_t mtime = 0;  // every member's mtime (owners are always 0/0, no names)
    int zstd_level = 3;
    int threads = 2;  // zstd workers (>= 1; the output is the same for any count)
};

struct Written {
    size_t members = 0;
    uint64_t bytes_in = 0;   // file data read
    uint64_t bytes_out = 0;  // the archive's size
};

/// Write `members`, in the order given, as a zstd-compressed POSIX tar (pax where a name or size
/// needs it) to `out`: a temp file beside it, renamed into place when complete, removed on any
/// error. Owners, names and times are normalised and nothing else varies, so the same members
/// give the same bytes. Interruptible (core::interrupt_signal).
[[nodiscard]] Result<Written> write_tar_zst(const fs::path& out, const std::vector<Member>& members,
                                            const WriteOptions& options = {});

}  // namespace bootstrap::archive
