// Writing a deterministic tar.zst (archive.hpp: write_tar_zst).

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "archive/archive.hpp"
#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"

#ifdef BOOTSTRAP_STATIC_LIBARCHIVE
// libarchive's pax writer reports an entry type it cannot write through a helper that lives in
// archive_write_set_format.o, next to the writer-by-name table, which references every writer
// (xar's needs libxml2, and so ICU). Defined here, the static link resolves the pax writer's call
// without that member and links only the pax writer. It is never reached by write_tar_zst, which
// writes files, directories and symlinks alone; it says what libarchive's own says.
extern "C" void __archive_write_entry_filetype_unsupported(struct archive* a, struct archive_entry* entry,
                                                           const char* format) {
    archive_set_error(a, EINVAL, "%s: %s format cannot archive this file type (mode 0%o)",
                      archive_entry_pathname(entry), format, static_cast<unsigned>(archive_entry_filetype(entry)));
}
#endif

namespace bootstrap::archive {

namespace {

struct WriterDeleter {
    void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
    void operator()(archive_entry* e) const { archive_entry_free(e); }
};

constexpr size_t k_chunk = 1 << 20;

class Writer {
public:
    Writer(const fs::path& out, const WriteOptions& options) : m_out(out), m_options(options) {}

    Result<Written> run(const std::vector<Member>& members, const std::string& temp) {
        m_archive.reset(archive_write_new());
        if (!m_archive) return cannot("out of memory");
        if (archive_write_set_format_pax_restricted(m_archive.get()) != ARCHIVE_OK ||
            archive_write_add_filter_zstd(m_archive.get()) != ARCHIVE_OK ||
            archive_write_set_filter_option(m_archive.get(), "zstd", "compression-level",
                                            std::to_string(m_options.zstd_level).c_str()) != ARCHIVE_OK ||
            // zstd's workers compress while this thread reads files; its output does not depend
            // on how many there are (any count >= 1 gives the same frames), so packs stay
            // byte-identical across machines.
            archive_write_set_filter_option(m_archive.get(), "zstd", "threads",
                                            std::to_string(m_options.threads).c_str()) != ARCHIVE_OK ||
            // One block size for every archive: the last block is padded the same way each time.
            archive_write_set_bytes_in_last_block(m_archive.get(), 1) != ARCHIVE_OK ||
            archive_write_open_filename(m_archive.get(), temp.c_str()) != ARCHIVE_OK)
            return cannot(archive_error_string(m_archive.get()));
        std::vector<char> buffer(k_chunk);
        for (const auto& m : members) {
            if (core::interrupt_signal())
                return fail(ErrorCode::interrupted, fmt::format("interrupted while writing {}", m_out.string()));
            BS_CHECK(add(m, buffer));
        }
        if (archive_write_close(m_archive.get()) != ARCHIVE_OK) return cannot(archive_error_string(m_archive.get()));
        m_written.members = members.size();
        return m_written;
    }

private:
    Status add(const Member& m, std::vector<char>& buffer) {
        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        archive_entry_set_pathname_utf8(entry.get(), m.name.c_str());
        archive_entry_set_uid(entry.get(), 0);
        archive_entry_set_gid(entry.get(), 0);
        archive_entry_set_mtime(entry.get(), m_options.mtime, 0);
        core::Fd fd;
        uint64_t size = 0;
        switch (m.type) {
            case Member::Type::directory:
                archive_entry_set_filetype(entry.get(), AE_IFDIR);
                archive_entry_set_perm(entry.get(), m.mode & 07777);
                break;
            case Member::Type::symlink:
                archive_entry_set_filetype(entry.get(), AE_IFLNK);
                archive_entry_set_perm(entry.get(), 0777);
                archive_entry_set_symlink_utf8(entry.get(), m.link_target.c_str());
                break;
            case Member::Type::file:
                archive_entry_set_filetype(entry.get(), AE_IFREG);
                archive_entry_set_perm(entry.get(), m.mode & 07777);
                if (m.data) {
                    size = m.data->size();
                } else {
                    fd = core::Fd(::open(m.source.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
                    struct stat st {};
                    if (!fd || ::fstat(fd.get(), &st) != 0)
                        return fail(ErrorCode::io, fmt::format("cannot read {} for {}: {}", m.source.string(),
                                                               m_out.string(), std::strerror(errno)));
                    if (!S_ISREG(st.st_mode))
                        return fail(ErrorCode::io, fmt::format("cannot pack {}: it is {}", m.source.string(),
                                                               core::describe_file_type(st.st_mode)));
                    size = static_cast<uint64_t>(st.st_size);
                }
                archive_entry_set_size(entry.get(), static_cast<la_int64_t>(size));
                break;
        }
        if (archive_write_header(m_archive.get(), entry.get()) != ARCHIVE_OK)
            return cannot(fmt::format("{}: {}", m.name, archive_error_string(m_archive.get())));
        if (m.type != Member::Type::file) return {};
        if (m.data) return write_data(m.name, m.data->data(), m.data->size());
        // Exactly the size the header promised: a file that grows or shrinks meanwhile is an
        // error, not a corrupt member.
        uint64_t left = size;
        while (left > 0) {
            ssize_t n = ::read(fd.get(), buffer.data(), std::min<uint64_t>(left, buffer.size()));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                return fail(ErrorCode::io, fmt::format("cannot pack {}: {}", m.source.string(),
                                                       n < 0 ? std::strerror(errno) : "it shrank while being read"));
            BS_CHECK(write_data(m.name, buffer.data(), static_cast<size_t>(n)));
            left -= static_cast<uint64_t>(n);
        }
        char probe = 0;
        if (::read(fd.get(), &probe, 1) > 0)
            return fail(ErrorCode::io, fmt::format("cannot pack {}: it grew while being read", m.source.string()));
        return {};
    }

    Status write_data(const std::string& name, const char* data, size_t size) {
        while (size > 0) {
            la_ssize_t n = archive_write_data(m_archive.get(), data, size);
            if (n <= 0) return cannot(fmt::format("{}: {}", name, archive_error_string(m_archive.get())));
            data += n;
            size -= static_cast<size_t>(n);
            m_written.bytes_in += static_cast<uint64_t>(n);
        }
        return {};
    }

    tl::unexpected<Error> cannot(const std::string& why) const {
        return fail(ErrorCode::io,
                    fmt::format("cannot write {}: {}", m_out.string(), why.empty() ? "unknown error" : why));
    }

    fs::path m_out;
    const WriteOptions& m_options;
    std::unique_ptr<struct archive, WriterDeleter> m_archive;
    Written m_written;
};

}  // namespace

Result<Written> write_tar_zst(const fs::path& out, const std::vector<Member>& members, const WriteOptions& options) {
    if (out.has_parent_path()) BS_CHECK(core::create_directories(out.parent_path()));
    std::string temp = fmt::format("{}.tmp-{}-XXXXXX", out.string(), ::getpid());
    core::Fd placeholder(::mkstemp(temp.data()));
    if (!placeholder)
        return fail(ErrorCode::io,
                    fmt::format("cannot create a temporary file next to {}: {}", out.string(), std::strerror(errno)));
    placeholder.reset();
    Writer writer(out, options);
    auto written = writer.run(members, temp);
    if (written) {
        struct stat st {};
        if (::stat(temp.c_str(), &st) == 0) written->bytes_out = static_cast<uint64_t>(st.st_size);
        if (::chmod(temp.c_str(), 0644) == 0 && ::rename(temp.c_str(), out.c_str()) == 0) return written;
        written = fail(ErrorCode::io, fmt::format("cannot rename into {}: {}", out.string(), std::strerror(errno)));
    }
    ::unlink(temp.c_str());
    return written;
}

}  // namespace bootstrap::archive
