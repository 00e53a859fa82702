#include "core/fs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace bootstrap::core {

Result<std::string> read_file(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                    fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            return fail(ErrorCode::io,
                        fmt::format("cannot read {}: {}", path.string(), std::strerror(err)));
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

std::string describe_file_type(unsigned mode) {
    switch (mode & S_IFMT) {
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFDIR: return "a directory";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symbolic link";
        case S_IFREG: return "a regular file";
    }
    return "of an unknown file type";
}

std::string format_size(std::uint64_t bytes) {
    constexpr std::uint64_t k_mib = 1024 * 1024;
    if (bytes < 1024) return fmt::format("{} bytes", bytes);
    if (bytes < k_mib) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
    if (bytes % k_mib == 0 && bytes < 1024 * k_mib) return fmt::format("{} MiB", bytes / k_mib);
    if (bytes < 1024 * k_mib) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / k_mib);
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * k_mib));
}

Result<std::string> read_regular_file(const fs::path& path, std::uint64_t max_bytes) {
    // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever. It has no
    // effect on reading a regular file, which is all that is read here.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return fail(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                    fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    auto refuse = [&](std::string why) {
        ::close(fd);
        return fail(ErrorCode::io, fmt::format("cannot read {}: {}", path.string(), why));
    };
    struct stat st {};
    if (::fstat(fd, &st) != 0) return refuse(std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return refuse(fmt::format("not a regular file ({})", describe_file_type(st.st_mode)));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes)
        return refuse(fmt::format("larger than {} ({})", format_size(max_bytes), format_size(size)));
    std::string out;
    out.reserve(static_cast<size_t>(size));
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return refuse(std::strerror(errno));
        }
        if (n == 0) break;
        // The file may grow while it is read (or be a procfs file that reports size 0).
        if (out.size() + static_cast<size_t>(n) > max_bytes)
            return refuse(fmt::format("larger than {}", format_size(max_bytes)));
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

Status create_directories(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot create directory {}: {}", path.string(), ec.message()));
    return {};
}

Status write_file_atomic(const fs::path& path, std::string_view content) {
    if (path.has_parent_path()) BS_CHECK(core::create_directories(path.parent_path()));
    std::string tmpl = path.string() + ".tmp-XXXXXX";
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        return fail(ErrorCode::io, fmt::format("cannot create a temporary file next to {}: {}",
                                               path.string(), std::strerror(errno)));
    auto abandon = [&](const char* what) {
        int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io,
                    fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(err)));
    };
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return abandon("write");
        }
        done += static_cast<size_t>(n);
    }
    ::fchmod(fd, 0644);
    if (::fsync(fd) != 0) return abandon("sync");
    if (::close(fd) != 0) {
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io, fmt::format("cannot close {}", path.string()));
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io,
                    fmt::format("cannot rename into {}: {}", path.string(), std::strerror(err)));
    }
    return {};
}

Status write_file_exclusive(const fs::path& path, std::string_view content, bool* exists) {
    if (exists) *exists = false;
    if (path.has_parent_path()) BS_CHECK(core::create_directories(path.parent_path()));
    std::string tmpl = path.string() + ".tmp-XXXXXX";
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        return fail(ErrorCode::io, fmt::format("cannot create a temporary file next to {}: {}",
                                               path.string(), std::strerror(errno)));
    auto abandon = [&](const char* what, int err) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io,
                    fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(err)));
    };
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return abandon("write", errno);
        }
        done += static_cast<size_t>(n);
    }
    ::fchmod(fd, 0644);
    if (::fsync(fd) != 0) return abandon("sync", errno);
    if (::close(fd) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io, fmt::format("cannot close {}: {}", path.string(), std::strerror(err)));
    }
    // link(2), unlike rename(2), fails when the name is taken: two writers never clobber one.
    int rc = ::link(tmpl.c_str(), path.c_str());
    int err = errno;
    ::unlink(tmpl.c_str());
    if (rc != 0) {
        if (err == EEXIST && exists) *exists = true;
        return fail(ErrorCode::io, fmt::format("cannot create {}: {}", path.string(),
                                               err == EEXIST ? "it already exists" : std::strerror(err)));
    }
    return {};
}

TempDir::TempDir(std::string_view prefix) {
    std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error(fmt::format("mkdtemp {}: {}", tmpl, std::strerror(errno)));
    m_path = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
}

std::string expand_home(std::string_view path, std::string_view home) {
    if (home.empty()) return std::string(path);
    for (std::string_view prefix : {"~", "$HOME", "${HOME}"}) {
        if (!path.starts_with(prefix)) continue;
        auto rest = path.substr(prefix.size());
        if (rest.empty() || rest.front() == '/') return std::string(home) + std::string(rest);
    }
    return std::string(path);
}

}  // namespace bootstrap::core
