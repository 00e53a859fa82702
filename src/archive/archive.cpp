#include "archive/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"

namespace bootstrap::archive {

namespace {

using Components = std::vector<std::string>;

// An archive path's components; "." and empty ones (from "./a//b/") are dropped.
Components split(std::string_view path) {
    Components parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string_view::npos) slash = path.size();
        auto part = path.substr(start, slash - start);
        if (!part.empty() && part != ".") parts.emplace_back(part);
        start = slash + 1;
    }
    return parts;
}

std::string join(const Components& parts, size_t count) {
    std::string out;
    for (size_t i = 0; i < count && i < parts.size(); ++i) {
        if (i) out += '/';
        out += parts[i];
    }
    return out;
}

// Why a member path (or a hardlink's target) may not be written below the root, or "".
std::string unsafe_path(std::string_view path, const Components& parts) {
    if (path.empty()) return "empty path";
    if (path.front() == '/') return "absolute path";
    for (const auto& p : parts)
        if (p == "..") return "path contains '..'";
    return {};
}

const char* entry_path(archive_entry* entry) {
    // The multibyte name is NULL when it cannot be converted to the (C) locale; the raw UTF-8
    // bytes are what a POSIX file system stores anyway.
    const char* p = archive_entry_pathname(entry);
    return p ? p : archive_entry_pathname_utf8(entry);
}

const char* entry_symlink(archive_entry* entry) {
    const char* p = archive_entry_symlink(entry);
    return p ? p : archive_entry_symlink_utf8(entry);
}

const char* entry_hardlink(archive_entry* entry) {
    const char* p = archive_entry_hardlink(entry);
    return p ? p : archive_entry_hardlink_utf8(entry);
}

// Checks that need more than one entry: a symlink, then a write or a hardlink through it.
// Symlink targets are relative, lead with their ".." (so every ".." is taken from a real
// directory, never from behind another symlink) and may not climb above the root; which directory
// depth each reaches is kept, since stripping the top directory makes depth 0 the outside.
class LinkGuard {
public:
    std::string check_member(const Components& parts) const {
        for (size_t n = 1; n <= parts.size(); ++n) {
            auto prefix = join(parts, n);
            if (m_symlinks.count(prefix))
                return n == parts.size() ? fmt::format("replaces the symlink '{}'", prefix)
                                         : fmt::format("goes through the symlink '{}'", prefix);
        }
        return {};
    }

    std::string check_symlink(const Components& parts, std::string_view target) {
        if (target.empty()) return "symlink with an empty target";
        if (target.front() == '/') return fmt::format("symlink to the absolute path '{}'", target);
        auto hops = split(target);
        size_t ups = 0;
        while (ups < hops.size() && hops[ups] == "..") ++ups;
        for (size_t i = ups; i < hops.size(); ++i)
            if (hops[i] == "..") return fmt::format("symlink target '{}' has '..' after a name", target);
        size_t depth = parts.size() - 1;  // of the directory holding the link
        if (ups > depth) return fmt::format("symlink target '{}' leaves the archive", target);
        m_min_depth = std::min(m_min_depth, depth - ups);
        return {};
    }

    std::string check_hardlink(const Components& target) const {
        if (m_symlinks.count(join(target, target.size()))) return "hardlink to a symlink";
        auto why = check_member(target);
        return why.empty() ? why : "hardlink target " + why;  // "... goes through the symlink"
    }

    void add_symlink(const Components& parts) { m_symlinks.insert(join(parts, parts.size())); }

    /// Whether every symlink still points inside once the top directory becomes the root.
    bool symlinks_stay_below_top() const { return m_min_depth >= 1; }

private:
    std::set<std::string> m_symlinks;
    size_t m_min_depth = SIZE_MAX;
};

// libarchive converts member names to the current locale's charset; under the C locale a program
// starts in, a non-ASCII name (a UTF-8 flagged zip member, say) comes back NULL. A UTF-8 locale
// for this thread only (uselocale) lets names through as the bytes they are.
class Utf8Names {
public:
    Utf8Names() : m_locale(::newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{})) {
        if (m_locale) m_previous = ::uselocale(m_locale);
    }
    ~Utf8Names() {
        if (!m_locale) return;
        ::uselocale(m_previous);
        ::freelocale(m_locale);
    }
    Utf8Names(const Utf8Names&) = delete;
    Utf8Names& operator=(const Utf8Names&) = delete;

private:
    locale_t m_locale;
    locale_t m_previous = LC_GLOBAL_LOCALE;
};

struct ReadDeleter {
    void operator()(struct archive* a) const { archive_read_free(a); }
};
struct WriteDeleter {
    void operator()(struct archive* a) const { archive_write_free(a); }
};
using ReadArchive = std::unique_ptr<struct archive, ReadDeleter>;
using WriteArchive = std::unique_ptr<struct archive, WriteDeleter>;

std::string reason(struct archive* a) {
    const char* s = archive_error_string(a);
    return s ? s : "unknown libarchive error";
}

/// libarchive's reason, with what is read when it is a format that is not registered (7z, rar,
/// cpio, ...).
std::string read_problem(struct archive* a) {
    std::string why = reason(a);
    if (why.find("Unrecognized archive format") != std::string::npos)
        why += " (bootstrap reads tar and zip archives, compressed with gzip, bzip2, xz, lzma, lzip, zstd or compress)";
    return why;
}

// What sources and packs come as: tar (sdists, GitHub and release tarballs, packs) and zip
// (sdists, GitHub archives), compressed with gzip, bzip2, xz/lzma/lzip, zstd or compress. Only
// these are registered, so the static link takes only their code and libraries (no libxml2 for
// xar, no lz4, no 7-Zip/RAR/CAB/ISO readers; see CMakeLists.txt, BOOTSTRAP_PORTABLE).
void support_formats(struct archive* a) {
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_bzip2(a);
    archive_read_support_filter_xz(a);
    archive_read_support_filter_lzma(a);
    archive_read_support_filter_lzip(a);
    archive_read_support_filter_zstd(a);
    archive_read_support_filter_compress(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_zip(a);
}

// Extraction into the temporary root: per entry, validate, rewrite the path (and hardlink target)
// to an absolute one below the root, sanitise the mode, write header then data blocks.
class Extractor {
public:
    Extractor(const fs::path& file, const fs::path& root, const ExtractOptions& options)
        : m_file(file), m_root(root), m_options(options) {}

    Result<Extracted> run() {
        Utf8Names utf8;  // outlives both handles
        ReadArchive in(archive_read_new());
        WriteArchive out(archive_write_disk_new());
        if (!in || !out) return fail(ErrorCode::internal, "cannot allocate libarchive handles");
        support_formats(in.get());
        // TIME and PERM (mode sanitised per entry, no OWNER so no setuid); SECURE_* as a second
        // line behind our own checks. Not NOABSOLUTEPATHS: our rewritten paths are absolute.
        archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                      ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                                      ARCHIVE_EXTRACT_SECURE_NODOTDOT);
        if (archive_read_open_filename(in.get(), m_file.c_str(), 1 << 16) != ARCHIVE_OK)
            return cannot(read_problem(in.get()));
        for (;;) {
            if (core::interrupt_signal() != 0) return interrupted();
            archive_entry* entry = nullptr;
            int r = archive_read_next_header(in.get(), &entry);
            if (r == ARCHIVE_EOF) break;
            if (r < ARCHIVE_WARN) return cannot(read_problem(in.get()));
            BS_CHECK(write_entry(in.get(), out.get(), entry));
        }
        if (archive_write_close(out.get()) < ARCHIVE_WARN) return cannot(reason(out.get()));
        return m_result;
    }

    bool symlinks_stay_below_top() const { return m_links.symlinks_stay_below_top(); }

private:
    Status write_entry(struct archive* in, struct archive* out, archive_entry* entry) {
        const char* raw = entry_path(entry);
        if (raw == nullptr) return cannot(fmt::format("unreadable member name: {}", reason(in)));
        std::string name = raw;
        auto parts = split(name);
        if (auto why = unsafe_path(name, parts); !why.empty()) return unsafe(name, why);
        if (parts.empty()) return {};  // "./": the root itself
        if (auto why = m_links.check_member(parts); !why.empty()) return unsafe(name, why);
        if (m_options.refuse_duplicates && !m_seen.insert(join(parts, parts.size())).second)
            return unsafe(name, "a second entry for the same path (it would replace the first unseen)");
        BS_TRY(auto target, absolute(name, parts));
        archive_entry_set_pathname(entry, target.c_str());

        bool is_dir = false;
        if (const char* hard = entry_hardlink(entry)) {
            std::string link = hard;
            auto link_parts = split(link);
            if (auto why = unsafe_path(link, link_parts); !why.empty()) return unsafe(name, "hardlink target: " + why);
            if (link_parts.empty()) return unsafe(name, "hardlink to the root directory");
            if (auto why = m_links.check_hardlink(link_parts); !why.empty()) return unsafe(name, why);
            BS_TRY(auto link_target, absolute(name, link_parts));
            archive_entry_set_hardlink(entry, link_target.c_str());
        } else {
            switch (archive_entry_filetype(entry)) {
                case AE_IFREG: break;
                case AE_IFDIR: is_dir = true; break;
                case AE_IFLNK: {
                    const char* sym = entry_symlink(entry);
                    std::string link = sym ? sym : "";
                    if (auto why = m_links.check_symlink(parts, link); !why.empty()) return unsafe(name, why);
                    archive_entry_set_symlink(entry, link.c_str());
                    m_links.add_symlink(parts);
                    break;
                }
                case AE_IFCHR:
                case AE_IFBLK: return unsafe(name, "device file");
                case AE_IFIFO: return unsafe(name, "fifo");
                default: return unsafe(name, "neither a file, a directory nor a link");
            }
        }
        // As Python's tarfile "data" filter (PEP 706): no setuid/setgid/sticky, no group/other
        // write; the owner may always read and write (and enter and remove directories).
        auto perm = archive_entry_perm(entry) & 0755;
        archive_entry_set_perm(entry, is_dir ? (perm | 0700) : (perm | 0600));

        // A member that says up front it would pass the limit is refused before its header.
        if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0)
            BS_CHECK(check_total(name, static_cast<uint64_t>(archive_entry_size(entry))));
        if (archive_write_header(out, entry) < ARCHIVE_WARN) return cannot(fmt::format("'{}': {}", name, reason(out)));
        uint64_t member_end = 0;  // the member's size so far: data and holes before it
        for (;;) {
            if (core::interrupt_signal() != 0) return interrupted();
            const void* block = nullptr;
            size_t size = 0;
            la_int64_t offset = 0;
            int r = archive_read_data_block(in, &block, &size, &offset);
            if (r == ARCHIVE_EOF) break;
            if (r < ARCHIVE_WARN) return cannot(fmt::format("'{}': {}", name, reason(in)));
            uint64_t end = static_cast<uint64_t>(std::max<la_int64_t>(offset, 0)) + size;
            if (end > member_end) {
                BS_CHECK(check_total(name, end));
                BS_CHECK(check_ratio(name, end, in));
                member_end = end;
            }
            if (archive_write_data_block(out, block, size, offset) < ARCHIVE_WARN)
                return cannot(fmt::format("'{}': {}", name, reason(out)));
            m_result.bytes += size;
        }
        m_written += member_end;
        if (archive_write_finish_entry(out) < ARCHIVE_WARN) return cannot(fmt::format("'{}': {}", name, reason(out)));
        if (!is_dir) ++m_result.files;
        return {};
    }

    // The limits, with the member being written at `member_size` (data and holes): the whole
    // tree's size, and its ratio to the archive's bytes read so far, so that a bomb shows at
    // its first member. A member's declared size meets only the first: little of the archive
    // is read when its header is.
    Status check_total(const std::string& name, uint64_t member_size) const {
        if (m_written + member_size <= m_options.max_bytes) return {};
        return fail(ErrorCode::io, fmt::format("refusing to extract {}: member '{}' would take the extracted "
                                               "tree past {} (the limit on an archive's contents)",
                                               m_file.string(), name, core::format_size(m_options.max_bytes)));
    }

    Status check_ratio(const std::string& name, uint64_t member_size, struct archive* in) const {
        uint64_t total = m_written + member_size;
        if (total <= m_options.ratio_floor) return {};
        la_int64_t read = archive_filter_bytes(in, -1);  // of the file, before decompression
        double packed = static_cast<double>(std::max<la_int64_t>(read, 1));
        if (static_cast<double>(total) <= m_options.max_ratio * packed) return {};
        return fail(ErrorCode::io, fmt::format("refusing to extract {}: member '{}' expands more than {:g}:1 ({} "
                                               "out of {} of the archive read so far); a decompression bomb?",
                                               m_file.string(), name, m_options.max_ratio, core::format_size(total),
                                               core::format_size(static_cast<uint64_t>(read))));
    }

    // libarchive chdir()s into a path PATH_MAX or longer to create it piecewise, which would
    // move the whole process; such entries are refused instead.
    Result<std::string> absolute(const std::string& name, const Components& parts) const {
        std::string path = (m_root / join(parts, parts.size())).string();
        if (path.size() >= PATH_MAX - 1) return unsafe(name, "path too long");
        return path;
    }

    tl::unexpected<Error> unsafe(const std::string& name, const std::string& why) const {
        return fail(ErrorCode::io, fmt::format("refusing unsafe entry '{}' in {}: {}", name, m_file.string(), why));
    }
    tl::unexpected<Error> cannot(const std::string& why) const {
        return fail(ErrorCode::io, fmt::format("cannot extract {}: {}", m_file.string(), why));
    }
    tl::unexpected<Error> interrupted() const {
        return fail(ErrorCode::interrupted, fmt::format("interrupted while extracting {}", m_file.string()));
    }

    fs::path m_file;
    fs::path m_root;
    const ExtractOptions& m_options;
    LinkGuard m_links;
    std::set<std::string> m_seen;  // the paths extracted so far (refuse_duplicates)
    Extracted m_result;
    uint64_t m_written = 0;  // sizes of the members finished so far
};

// The single top-level directory of an extracted tree, or "" when there is none.
std::string single_top_dir(const fs::path& root) {
    std::error_code ec;
    std::string top;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        if (!top.empty() || !e.is_directory(ec) || e.is_symlink(ec)) return {};
        top = e.path().filename().string();
    }
    return top;
}

}  // namespace

Result<Extracted> extract(const fs::path& archive_file, const fs::path& dest, const ExtractOptions& options) {
    fs::path target = dest.has_filename() ? dest : dest.parent_path();
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target, ec)))
        return fail(ErrorCode::io, fmt::format("cannot extract {} into {}: it already exists", archive_file.string(),
                                               target.string()));
    fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    BS_CHECK(core::create_directories(parent));
    // libarchive's SECURE_SYMLINKS check walks every component of our absolute paths, so the
    // root must not sit below a symlink (/tmp -> /private/tmp, a symlinked home, ...).
    parent = fs::canonical(parent, ec);
    if (ec)
        return fail(ErrorCode::io, fmt::format("cannot resolve {}: {}", target.parent_path().string(), ec.message()));
    target = parent / target.filename();
    fs::path temp = parent / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
    if (!fs::create_directory(temp, ec) || ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot create {}: {}", temp.string(), ec ? ec.message() : "it already exists"));
    auto abandon = [&](Error error) -> Result<Extracted> {
        std::error_code ignored;
        fs::remove_all(temp, ignored);
        return tl::unexpected<Error>(std::move(error));
    };

    Extractor extractor(archive_file, temp, options);
    auto extracted = extractor.run();
    if (!extracted) return abandon(std::move(extracted.error()));

    fs::path from = temp;
    if (options.strip_top) {
        auto top = single_top_dir(temp);
        if (!top.empty()) {
            if (!extractor.symlinks_stay_below_top())
                return abandon(Error{ErrorCode::io,
                                     fmt::format("refusing unsafe entry '{}' in {}: a symlink "
                                                 "below it leaves the top directory to be stripped",
                                                 top, archive_file.string()),
                                     {}});
            extracted->stripped = top;
            from = temp / top;
        }
    }
    // Never replaces an empty directory that appeared at dest meanwhile.
    if (auto renamed = core::rename_no_replace(from, target); !renamed) return abandon(std::move(renamed.error()));
    if (from != temp) fs::remove(temp, ec);  // now empty
    return extracted;
}

}  // namespace bootstrap::archive
