#include "core/fs.hpp"

#include "core/interrupt.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

Result<std::string> read_file(const fs::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return fail(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                    fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    std::string out;
    // A regular file's size, known up front, saves growing (and copying) the string; never more
    // than 64 MiB of it (a sparse file may claim terabytes).
    constexpr off_t k_most_ahead = off_t{64} << 20;
    if (struct stat st{}; ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        out.reserve(static_cast<size_t>(std::min(st.st_size, k_most_ahead)));
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(ErrorCode::io, fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

Result<std::string> read_file_tail(const fs::path& path, std::uint64_t from, std::uint64_t max_bytes) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd)
        return fail(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                    fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(ErrorCode::io, fmt::format("cannot read {}: not a regular file", path.string()));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    auto offset = static_cast<off_t>(std::max(from, size > max_bytes ? size - max_bytes : 0));
    std::string out;
    out.reserve(static_cast<size_t>(std::min(max_bytes, size - std::min(size, static_cast<std::uint64_t>(offset)))));
    char buf[65536];
    while (out.size() < max_bytes) {
        const size_t want = std::min(sizeof buf, static_cast<size_t>(max_bytes - out.size()));
        ssize_t n = ::pread(fd.get(), buf, want, offset);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(ErrorCode::io, fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
        offset += n;
    }
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

namespace {

std::optional<std::string> kernel_filesystem_of(const struct statfs& st, const fs::path& path) {
    struct Kind {
        unsigned long magic;
        const char* name;
    };
    static constexpr Kind k_kinds[] = {
        {PROC_SUPER_MAGIC, "proc"},     {SYSFS_MAGIC, "sysfs"},           {DEVPTS_SUPER_MAGIC, "devpts"},
        {CGROUP_SUPER_MAGIC, "cgroup"}, {CGROUP2_SUPER_MAGIC, "cgroup2"}, {DEBUGFS_MAGIC, "debugfs"},
        {TRACEFS_MAGIC, "tracefs"},     {SECURITYFS_MAGIC, "securityfs"}, {BPF_FS_MAGIC, "bpf"},
        {PSTOREFS_MAGIC, "pstore"},     {EFIVARFS_MAGIC, "efivarfs"},     {0x62656570UL, "configfs"},
        {SELINUX_MAGIC, "selinuxfs"},   {0x65735543UL, "fusectl"},
    };
    const auto magic = static_cast<unsigned long>(st.f_type) & 0xffffffffUL;
    for (const auto& k : k_kinds)
        if (magic == k.magic) return std::string(k.name);
    // devtmpfs reports tmpfs's magic: told by where it is mounted.
    if (magic == TMPFS_MAGIC && !path.empty()) {
        std::error_code ec;
        const auto real = fs::weakly_canonical(path, ec);
        const auto rel = real.lexically_relative("/dev");
        if (!ec && !rel.empty() && *rel.begin() != "..") return std::string("devtmpfs");
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> kernel_filesystem(const fs::path& path) {
    struct statfs st {};
    if (::statfs(path.c_str(), &st) != 0) return std::nullopt;
    return kernel_filesystem_of(st, path);
}

std::optional<std::string> kernel_filesystem(int fd) {
    struct statfs st {};
    if (::fstatfs(fd, &st) != 0) return std::nullopt;
    // No path: what is open is a file, and a device file of devtmpfs is no regular file anyway
    // (callers check that first), so resolving /proc/self/fd/N on every read would buy nothing.
    return kernel_filesystem_of(st, {});
}

std::optional<fs::path> reaches_kernel_tree(const fs::path& dir) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    if (ec) return std::nullopt;
    for (const char* k : {"/proc", "/sys", "/dev"}) {
        const fs::path kernel(k);
        auto inside = real.lexically_relative(kernel);
        auto above = kernel.lexically_relative(real);
        if ((!inside.empty() && *inside.begin() != "..") || (!above.empty() && *above.begin() != "..")) return kernel;
    }
    if (kernel_filesystem(real)) return real;
    return std::nullopt;
}

Result<std::string> read_regular_file(const fs::path& path, std::uint64_t max_bytes) {
    // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever. It has no
    // effect on reading a regular file, which is all that is read here.
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd)
        return fail(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                    fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    auto refuse = [&](std::string why) {
        return fail(ErrorCode::io, fmt::format("cannot read {}: {}", path.string(), why));
    };
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return refuse(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return refuse(fmt::format("not a regular file ({})", describe_file_type(st.st_mode)));
    if (auto kernel = kernel_filesystem(fd.get()))
        return refuse(fmt::format("a file of the kernel's {} filesystem, not data", *kernel));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes) return refuse(fmt::format("larger than {} ({})", format_size(max_bytes), format_size(size)));
    std::string out;
    out.reserve(static_cast<size_t>(size));
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return refuse(std::strerror(errno));
        }
        if (n == 0) break;
        if (interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("interrupted while reading {}", path.string()));
        // The file may grow while it is read (or be a procfs file that reports size 0).
        if (out.size() + static_cast<size_t>(n) > max_bytes)
            return refuse(fmt::format("larger than {}", format_size(max_bytes)));
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

void append_log_line(const fs::path& log, std::string_view line) {
    if (log.empty()) return;
    if (log.has_parent_path()) (void)core::create_directories(log.parent_path());
    Fd fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!fd) return;
    std::string text(line);
    text += '\n';
    std::string_view rest = text;
    while (!rest.empty()) {
        ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        rest.remove_prefix(static_cast<size_t>(n));
    }
}

Status create_directories(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot create directory {}: {}", path.string(), ec.message()));
    return {};
}

namespace {

/// Writes `content` to a new temporary file next to `path` (0644, synced, closed) and returns
/// its name; nothing is left behind on failure. The pid in the name lets a later run tell a dead
/// writer's leftover from a live one's temp file.
Result<std::string> write_temp_beside(const fs::path& path, std::string_view content, unsigned mode = 0644,
                                      Durability durability = Durability::synced) {
    if (path.has_parent_path()) BS_CHECK(core::create_directories(path.parent_path()));
    std::string tmpl = fmt::format("{}.tmp-{}-XXXXXX", path.string(), ::getpid());
    Fd fd(::mkstemp(tmpl.data()));
    if (!fd)
        return fail(ErrorCode::io,
                    fmt::format("cannot create a temporary file next to {}: {}", path.string(), std::strerror(errno)));
    auto abandon = [&](const char* what, int err) {
        fd.reset();
        ::unlink(tmpl.c_str());
        return fail(ErrorCode::io, fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(err)));
    };
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return abandon("write", errno);
        }
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return abandon("set the mode of", errno);
    if (durability == Durability::synced && ::fsync(fd.get()) != 0) return abandon("sync", errno);
    if (fd.close() != 0) return abandon("close", errno);
    return tmpl;
}

}  // namespace

Status write_file_atomic(const fs::path& path, std::string_view content, unsigned mode, Durability durability) {
    BS_TRY(std::string tmp, write_temp_beside(path, content, mode, durability));
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        return fail(ErrorCode::io, fmt::format("cannot rename into {}: {}", path.string(), std::strerror(err)));
    }
    return {};
}

Status rename_no_replace(const fs::path& from, const fs::path& to) {
    int r = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
    if (r != 0 && errno == EINVAL) r = ::rename(from.c_str(), to.c_str());  // fs lacks the flag
    if (r != 0)
        return fail(ErrorCode::io,
                    fmt::format("cannot rename {} to {}: {}", from.string(), to.string(), std::strerror(errno)));
    return {};
}

bool process_alive(long pid) {
    if (pid <= 0) return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

long pid_after(std::string_view name, std::string_view prefix) {
    if (!name.starts_with(prefix)) return 0;
    auto rest = name.substr(prefix.size());
    size_t digits = 0;
    while (digits < rest.size() && digits < 10 && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0) return 0;
    if (digits < rest.size() && rest[digits] != '-' && rest[digits] != '.') return 0;
    return parse_int<long>(rest.substr(0, digits)).value_or(0);
}

long temp_name_pid(std::string_view name) {
    auto at = name.rfind(".tmp-");
    if (at == std::string_view::npos) return 0;
    return pid_after(name.substr(at), ".tmp-");
}

std::vector<fs::path> remove_dead_leftovers(const fs::path& dir, const std::function<long(std::string_view)>& pid_of) {
    std::vector<fs::path> removed;
    std::error_code ec;
    const long self = ::getpid();
    std::vector<fs::path> dead;  // collected first: removing while reading the directory may skip
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        long pid = pid_of(entry.path().filename().string());
        if (pid > 0 && pid != self && !process_alive(pid)) dead.push_back(entry.path());
    }
    for (const auto& path : dead) {
        std::error_code rm;
        fs::remove_all(path, rm);
        if (!rm) removed.push_back(path);
    }
    return removed;
}

std::string format_size(uint64_t bytes) {
    static const char* const k_units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return fmt::format("{} B", bytes);
    double v = static_cast<double>(bytes) / 1024;
    size_t unit = 0;
    while (v >= 1024 && unit + 1 < std::size(k_units)) v /= 1024, ++unit;
    if (v == static_cast<double>(static_cast<uint64_t>(v))) return fmt::format("{:.0f} {}", v, k_units[unit]);
    return fmt::format("{:.1f} {}", v, k_units[unit]);
}

std::optional<uint64_t> parse_size(std::string_view text) {
    std::string s(text);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == 0 || s.find_first_not_of(' ', 0) != 0) return std::nullopt;
    std::string number = s.substr(0, i);
    if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
    size_t u = i;
    while (u < s.size() && s[u] == ' ') ++u;
    std::string unit;
    for (char c : s.substr(u)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const std::pair<const char*, double> k_units[] = {
        {"", 1},     {"b", 1},    {"k", 1e3},   {"kb", 1e3},     {"m", 1e6},      {"mb", 1e6},     {"g", 1e9},
        {"gb", 1e9}, {"t", 1e12}, {"tb", 1e12}, {"kib", 0x1p10}, {"mib", 0x1p20}, {"gib", 0x1p30}, {"tib", 0x1p40},
    };
    for (const auto& [name, factor] : k_units) {
        if (unit != name) continue;
        if (number.find('.') == std::string::npos && factor == 1) {  // exact, no float rounding
            return parse_int<uint64_t>(number);
        }
        auto v = parse_double(number);  // digits and one '.': only its size can fail it
        if (!v || !(*v * factor < 0x1p64)) return std::nullopt;
        return static_cast<uint64_t>(*v * factor);
    }
    return std::nullopt;
}

Status write_file_exclusive(const fs::path& path, std::string_view content, bool* exists) {
    if (exists) *exists = false;
    BS_TRY(std::string tmp, write_temp_beside(path, content));
    // link(2), unlike rename(2), fails when the name is taken: two writers never clobber one.
    int rc = ::link(tmp.c_str(), path.c_str());
    int err = errno;
    ::unlink(tmp.c_str());
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
