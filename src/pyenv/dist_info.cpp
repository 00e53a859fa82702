#include "pyenv/dist_info.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::pyenv {

namespace {

constexpr std::string_view k_dist_info_suffix = ".dist-info";

using core::Fd;

/// Opens a dist-info file without blocking and only when it is a regular file of at most
/// k_max_dist_info_file bytes; otherwise `why` says what it is ("METADATA missing", "METADATA
/// is not a regular file (a FIFO)", ...). Installers write these files; a hostile or damaged
/// venv must not hang or exhaust a scan.
Fd open_dist_file(int dir_fd, const char* name, std::string& why) {
    Fd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd.is_open()) {
        why = errno == ENOENT ? fmt::format("{} missing", name)
                              : fmt::format("{} unreadable: {}", name, std::strerror(errno));
        return fd;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        why = fmt::format("{} unreadable: {}", name, std::strerror(errno));
        return Fd(-1);
    }
    if (!S_ISREG(st.st_mode)) {
        why = fmt::format("{} is not a regular file ({})", name, core::describe_file_type(st.st_mode));
        return Fd(-1);
    }
    if (static_cast<std::uint64_t>(st.st_size) > k_max_dist_info_file) {
        why = fmt::format("{} is larger than {} ({})", name, core::format_size(k_max_dist_info_file),
                          core::format_size(static_cast<std::uint64_t>(st.st_size)));
        return Fd(-1);
    }
    return fd;
}

/// Reads the RFC 822 header block of a METADATA file line by line and stops at the first
/// blank line, so the long description (often most of the file) is never read. The buffer
/// is the caller's, reused across files. Linear in the bytes read however long a line is (the
/// newline search resumes where the last one stopped), and never more than
/// k_max_dist_info_file bytes: past that, too_large() is set and the headers end.
class HeaderReader {
public:
    HeaderReader(int fd, std::string& buffer) : m_fd(fd), m_buf(buffer) { m_buf.clear(); }

    /// The next header line without its line ending; false at the blank line or end of file.
    bool next(std::string_view& line) {
        for (;;) {
            size_t nl = m_buf.find('\n', m_scan);
            if (nl != std::string::npos || m_eof) {
                size_t end = nl == std::string::npos ? m_buf.size() : nl;
                if (end == m_start && nl == std::string::npos) return false;  // EOF
                line = std::string_view(m_buf).substr(m_start, end - m_start);
                m_start = m_scan = nl == std::string::npos ? m_buf.size() : nl + 1;
                if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
                return !line.empty();
            }
            m_scan = m_buf.size();  // no newline up to here: the next search starts here
            // Drop the lines already returned once they are at least half the buffer, so a
            // long line is moved a bounded number of times (amortised linear).
            if (m_start > 0 && m_start >= m_buf.size() / 2) {
                m_buf.erase(0, m_start);
                m_scan -= m_start;
                m_start = 0;
            }
            if (m_read >= k_max_dist_info_file) {
                m_too_large = true;
                m_eof = true;
                return false;
            }
            char chunk[16384];
            ssize_t n = ::read(m_fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                m_eof = true;
            } else {
                m_buf.append(chunk, static_cast<size_t>(n));
                m_read += static_cast<std::uint64_t>(n);
            }
        }
    }

    /// The headers ran past k_max_dist_info_file bytes (the file grew after it was checked).
    [[nodiscard]] bool too_large() const { return m_too_large; }

private:
    int m_fd;
    std::string& m_buf;
    size_t m_start = 0;  // where the next line begins
    size_t m_scan = 0;   // where the newline search resumes (>= m_start)
    std::uint64_t m_read = 0;
    bool m_eof = false;
    bool m_too_large = false;
};

/// "Name: torch" → value when the header name matches (header names are case-insensitive).
bool header_value(std::string_view line, std::string_view key, std::string_view& value) {
    if (line.size() <= key.size() || line[key.size()] != ':') return false;
    for (size_t i = 0; i < key.size(); ++i) {
        char c = line[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != key[i]) return false;
    }
    value = core::trim(line.substr(key.size() + 1));
    return true;
}

std::string read_small_file(int dir_fd, const char* name) {
    std::string why;
    Fd fd = open_dist_file(dir_fd, name, why);
    if (!fd.is_open()) return {};
    char buf[256];
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    return n > 0 ? std::string(core::trim(std::string_view(buf, static_cast<size_t>(n)))) : "";
}

core::FileStamp stamp_of(const struct stat& st) {
    return {static_cast<std::uint64_t>(st.st_size),
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
            static_cast<std::uint64_t>(st.st_ino)};
}

/// The stamp of each directory `names` lists in `dir_fd` (nullopt: not a directory, or gone):
/// what a memo's entries are checked against. A large site-packages is stat'ed by a few threads
/// (the kernel's path walk is most of a settled scan); where no thread can be started the
/// caller's does it all.
std::vector<std::optional<core::FileStamp>> directory_stamps(int dir_fd, const std::vector<std::string>& names) {
    std::vector<std::optional<core::FileStamp>> out(names.size());
    auto work = [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            struct stat st {};
            if (::fstatat(dir_fd, names[i].c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode)) out[i] = stamp_of(st);
        }
    };
    constexpr size_t k_per_thread = 512;
    const size_t threads =
        std::clamp<size_t>(std::min<size_t>(names.size() / k_per_thread, std::thread::hardware_concurrency()), 1, 4);
    const size_t chunk = (names.size() + threads - 1) / threads;
    auto range = [&](size_t t) {
        return std::pair{std::min(names.size(), t * chunk), std::min(names.size(), (t + 1) * chunk)};
    };
    std::vector<std::thread> pool;
    size_t started = 1;
    for (; started < threads; ++started) {
        try {
            auto [begin, end] = range(started);
            pool.emplace_back(work, begin, end);
        } catch (const std::system_error&) {
            break;
        }
    }
    for (size_t t = 0; t < threads; ++t)
        if (t == 0 || t >= started) {
            auto [begin, end] = range(t);
            work(begin, end);
        }
    for (auto& thread : pool) thread.join();
    return out;
}

/// "{name}-{version}.dist-info" → name and version (the version "" when there is no dash).
void names_from_directory(std::string_view entry, Distribution& dist) {
    std::string_view stem = entry.substr(0, entry.size() - k_dist_info_suffix.size());
    size_t dash = stem.find('-');
    if (dist.name.empty()) dist.name = std::string(stem.substr(0, dash));
    if (dist.version.empty() && dash != std::string_view::npos) dist.version = std::string(stem.substr(dash + 1));
}

/// What one pass over METADATA's headers gives: Name, Version and every Requires-Dist (a
/// folded one joined with a space; a header name is case-insensitive).
struct MetadataHeaders {
    std::string name, version;
    bool have_name = false, have_version = false;
    std::vector<std::string> requires_dist;
    bool too_large = false;  // the headers ran past k_max_dist_info_file
};

MetadataHeaders read_headers(int fd, std::string& buffer) {
    MetadataHeaders out;
    HeaderReader headers(fd, buffer);
    std::string_view line, value;
    bool continuing = false;  // the previous header was a Requires-Dist that may be folded
    while (headers.next(line)) {
        if (continuing && (line.front() == ' ' || line.front() == '\t')) {
            out.requires_dist.back() += ' ';
            out.requires_dist.back() += core::trim(line);
            continue;
        }
        continuing = header_value(line, "requires-dist", value);
        if (continuing) {
            out.requires_dist.emplace_back(value);
        } else if (!out.have_name && header_value(line, "name", value)) {
            out.name = std::string(value);
            out.have_name = true;
        } else if (!out.have_version && header_value(line, "version", value)) {
            out.version = std::string(value);
            out.have_version = true;
        }
    }
    out.too_large = headers.too_large();
    return out;
}

/// Fill `dist` from one `*.dist-info` directory; false when it is not a usable one. A
/// directory whose METADATA or RECORD cannot be used is still filled in (name and version
/// from the directory name) with `broken` saying why.
bool read_dist_info(int site_fd, std::string_view entry, std::string& buffer, Distribution& dist) {
    Fd dir(::openat(site_fd, std::string(entry).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
    if (!dir.is_open()) return false;
    struct stat dir_st {};
    if (::fstat(dir.get(), &dir_st) == 0) dist.dir_stamp = stamp_of(dir_st);
    Fd metadata = open_dist_file(dir.get(), "METADATA", dist.broken);
    if (metadata.is_open()) {
        MetadataHeaders headers = read_headers(metadata.get(), buffer);
        dist.name = std::move(headers.name);
        dist.version = std::move(headers.version);
        if (headers.too_large)
            dist.broken = fmt::format("METADATA is larger than {}", core::format_size(k_max_dist_info_file));
        else dist.requires_dist = std::move(headers.requires_dist);
    }
    // A METADATA without them is broken; the directory name "{name}-{version}.dist-info"
    // still says what is installed.
    names_from_directory(entry, dist);
    if (dist.name.empty()) return false;
    dist.normalized_name = normalize_name(dist.name);

    struct stat st {};
    if (::fstatat(dir.get(), "RECORD", &st, 0) == 0) {
        if (!S_ISREG(st.st_mode) && dist.broken.empty())
            dist.broken = fmt::format("RECORD is not a regular file ({})", core::describe_file_type(st.st_mode));
        else if (static_cast<std::uint64_t>(st.st_size) > k_max_dist_info_file && dist.broken.empty())
            dist.broken = fmt::format("RECORD is larger than {} ({})", core::format_size(k_max_dist_info_file),
                                      core::format_size(static_cast<std::uint64_t>(st.st_size)));
        dist.record_stamp = stamp_of(st);
    }
    dist.installer = read_small_file(dir.get(), "INSTALLER");
    dist.requested = ::faccessat(dir.get(), "REQUESTED", F_OK, 0) == 0;
    return true;
}

/// Two dist-info directories for one project (an interrupted upgrade) — keep the newer one,
/// which is what Python's importlib.metadata would most likely have been left pointing at.
bool newer(const Distribution& a, const Distribution& b) {
    auto va = Version::parse(a.version), vb = Version::parse(b.version);
    if (va && vb) return *va > *vb;
    return a.dist_info().filename() > b.dist_info().filename();
}

}  // namespace

Result<std::map<std::string, Distribution>> scan_site_packages(const std::filesystem::path& site_packages,
                                                               const std::vector<std::string>& only,
                                                               bool include_broken, const ScanMemo* memo) {
    DIR* dir = ::opendir(site_packages.c_str());
    if (dir == nullptr)
        return fail(
            errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
            fmt::format("cannot list installed packages in {}: {}", site_packages.string(), std::strerror(errno)));
    std::vector<std::string> names;  // the dist-info directories, in directory order
    while (dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name.size() <= k_dist_info_suffix.size() ||
            name.substr(name.size() - k_dist_info_suffix.size()) != k_dist_info_suffix)
            continue;
        if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN && entry->d_type != DT_LNK) continue;
        if (!only.empty() &&
            std::find(only.begin(), only.end(), normalize_name(name.substr(0, name.find('-')))) == only.end())
            continue;
        names.emplace_back(name);
    }
    const auto stamps = memo ? directory_stamps(::dirfd(dir), names) : std::vector<std::optional<core::FileStamp>>();
    std::map<std::string, Distribution> out;
    std::string buffer;
    buffer.reserve(16384);
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        Distribution dist;
        // A memo's entry holds while the directory's stamp is the same; else the dist-info is
        // read (which also finds what is wrong with it).
        if (!(memo && stamps[i] && memo->recall(site_packages, name, *stamps[i], dist)) &&
            !read_dist_info(::dirfd(dir), name, buffer, dist))
            continue;
        if (!dist.broken.empty() && !include_broken) continue;
        // As (site_packages / name).native() spells it, without building a path.
        dist.dist_info_path = site_packages.native();
        if (!dist.dist_info_path.empty() && dist.dist_info_path.back() != '/') dist.dist_info_path += '/';
        dist.dist_info_path += name;
        std::string key = dist.normalized_name;
        // try_emplace leaves `dist` untouched when the key is taken, so it can still compete.
        // A broken one wins over a whole one: it is what needs attention (and it makes the
        // installers fail).
        auto [it, inserted] = out.try_emplace(key, std::move(dist));
        if (!inserted &&
            (dist.broken.empty() == it->second.broken.empty() ? newer(dist, it->second) : !dist.broken.empty()))
            it->second = std::move(dist);
    }
    ::closedir(dir);
    return out;
}

Result<std::vector<Requirement>> read_requires_dist(const Distribution& dist) {
    if (dist.requires_dist && dist.requires_dist->empty()) return std::vector<Requirement>{};  // most of them
    std::filesystem::path path = dist.dist_info() / "METADATA";
    std::vector<std::string> read;
    if (!dist.requires_dist) {
        Fd dir(::open(dist.dist_info().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
        std::string why;
        Fd fd = dir.is_open() ? open_dist_file(dir.get(), "METADATA", why) : Fd(-1);
        if (!dir.is_open()) why = fmt::format("{}: {}", dist.dist_info().string(), std::strerror(errno));
        if (!fd.is_open())
            return fail(why.ends_with(" missing") ? ErrorCode::not_found : ErrorCode::io,
                        fmt::format("cannot read {}: {}", path.string(), why));
        std::string buffer;
        MetadataHeaders headers = read_headers(fd.get(), buffer);
        if (headers.too_large)
            return fail(ErrorCode::io, fmt::format("cannot read {}: its headers run past {}", path.string(),
                                                   core::format_size(k_max_dist_info_file)));
        read = std::move(headers.requires_dist);
    }
    const std::vector<std::string>& values = dist.requires_dist ? *dist.requires_dist : read;
    std::vector<Requirement> out;
    out.reserve(values.size());
    for (const std::string& text : values) {
        auto req = Requirement::parse(text);
        if (!req)
            return fail(ErrorCode::io, fmt::format("bad Requires-Dist in {}: {}", path.string(), req.error().message));
        out.push_back(std::move(*req));
    }
    return out;
}

namespace {

bool is_uv_cache_row(std::string_view path) {
    return path.ends_with("/uv_cache.json") && path.find(".dist-info/") != std::string_view::npos;
}

/// `../../../bin/NAME` (any number of `../`, then bin/ and a file name): a file installed into
/// the venv's scripts directory, outside site-packages.
bool is_script_row(std::string_view path) {
    size_t ups = 0;
    while (path.substr(ups * 3).starts_with("../")) ++ups;
    std::string_view rest = path.substr(ups * 3);
    return ups > 0 && rest.starts_with("bin/") && rest.size() > 4 && rest.find('/', 4) == std::string_view::npos;
}

/// SHA-256 of the rows of RECORD text whose path `drop` does not match, in their order.
template <class Drop>
std::string filtered_digest(std::string_view record_text, Drop drop) {
    std::string kept;
    kept.reserve(record_text.size());
    size_t start = 0;
    while (start < record_text.size()) {
        size_t end = record_text.find('\n', start);
        end = end == std::string_view::npos ? record_text.size() : end + 1;
        std::string_view row = record_text.substr(start, end - start);
        auto comma = row.find(',');
        std::string_view path = row.substr(0, comma);
        if (!drop(path)) kept.append(row);
        start = end;
    }
    return core::sha256_hex(kept);
}

}  // namespace

std::string record_text_digest(std::string_view record_text) {
    if (record_text.find("/uv_cache.json,") == std::string_view::npos) return core::sha256_hex(record_text);
    return filtered_digest(record_text, is_uv_cache_row);
}

std::string portable_record_text_digest(std::string_view record_text) {
    return filtered_digest(record_text,
                           [](std::string_view path) { return is_uv_cache_row(path) || is_script_row(path); });
}

Result<std::string> record_digest(const Distribution& dist) {
    BS_TRY(auto text, core::read_regular_file(dist.dist_info() / "RECORD", k_max_dist_info_file));
    return record_text_digest(text);
}

Result<RecordDigests> record_digests(const Distribution& dist) {
    BS_TRY(auto text, core::read_regular_file(dist.dist_info() / "RECORD", k_max_dist_info_file));
    return RecordDigests{record_text_digest(text), portable_record_text_digest(text)};
}

namespace {

/// The walk behind is_satisfied: one requirement, then what the installed dist requires,
/// depth first. The path from the top requirement is an explicit stack of Frames, not the call
/// stack: a chain of 20,000 installed distributions each requiring the next overflowed it.
///
/// Each frame walks its distribution's extras ("" first, then the requested ones), each extra's
/// Requires-Dist in order. A dependency is first checked itself (enter); when its distribution
/// has requirements of its own, a frame is pushed for it and its verdict comes back to the
/// parent when that frame is popped (done). A failed dependency fails its parent, unless the
/// recipe allows that conflict, up to the top.
class SatisfactionCheck {
public:
    SatisfactionCheck(const std::map<std::string, Distribution>& installed, std::string* why_not,
                      const std::set<std::pair<std::string, std::string>>& allowed_conflicts)
        : m_installed(installed), m_why_not(why_not), m_allowed(allowed_conflicts) {}

    bool check(const Requirement& req, MarkerEnv& env, bool prereleases) {
        std::vector<Frame> stack;
        Verdict verdict = enter(req, env, prereleases, nullptr, stack);
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (verdict != Verdict::pending) {  // the verdict on f's current dependency
                const Requirement& dep = f.deps[f.dep];
                bool ok = verdict == Verdict::holds ||
                          // the recipe overrides this pin on purpose
                          (m_allowed.count({f.dist->normalized_name, dep.normalized_name}) &&
                           m_installed.count(dep.normalized_name));
                verdict = Verdict::pending;
                if (!ok) {
                    verdict = done(stack, env, false);
                    continue;
                }
                ++f.dep;
            }
            if (f.walking && f.dep < f.deps.size()) {
                // Dependencies were chosen by a resolver; accept installed pre-releases there,
                // as `pip check` does. (`f` may move when enter pushes: copy what it needs.)
                const Requirement dep = f.deps[f.dep];
                const Distribution* required_by = f.dist;
                verdict = enter(dep, env, true, required_by, stack);
                continue;
            }
            if (f.walking) {  // this extra's dependencies all hold
                env["extra"] = f.saved_extra;
                f.walking = false;
                ++f.extra;
            }
            // Each "name[extra]" is walked once: that stops cycles.
            auto first_visit = [&] { return m_visited.emplace(f.dist, f.extras[f.extra]).second; };
            while (f.extra < f.extras.size() && !first_visit()) ++f.extra;
            if (f.extra == f.extras.size()) {
                verdict = done(stack, env, true);
                continue;
            }
            auto deps = read_requires_dist(*f.dist);
            if (!deps) {
                verdict = done(stack, env, fail(deps.error().message));
                continue;
            }
            f.deps = std::move(*deps);
            f.dep = 0;
            f.walking = true;
            f.saved_extra = env["extra"];
            env["extra"] = f.extras[f.extra];
        }
        return verdict == Verdict::holds;
    }

private:
    enum class Verdict { pending, holds, fails };
    static Verdict verdict_of(bool ok) { return ok ? Verdict::holds : Verdict::fails; }

    /// One distribution whose requirements are being walked.
    struct Frame {
        const Distribution* dist = nullptr;
        std::vector<std::string> extras;  // "" and the requested extras
        size_t extra = 0;                 // the extra being walked (or next to walk)
        bool walking = false;             // deps hold extras[extra]'s Requires-Dist
        std::vector<Requirement> deps;
        size_t dep = 0;
        std::string saved_extra;  // env["extra"] before this frame set it
    };

    /// Pop the top frame with its verdict, restoring the marker env it changed.
    static Verdict done(std::vector<Frame>& stack, MarkerEnv& env, bool ok) {
        if (stack.back().walking) env["extra"] = stack.back().saved_extra;
        stack.pop_back();
        return verdict_of(ok);
    }

    /// Check `req` itself: its verdict, or pending after pushing a frame to walk what its
    /// distribution requires. `required_by` is the distribution whose Requires-Dist `req` is,
    /// nullptr for the top-level requirement. (The reasons' strings are built only on refusal.)
    Verdict enter(const Requirement& req, const MarkerEnv& env, bool prereleases, const Distribution* required_by,
                  std::vector<Frame>& stack) {
        if (req.marker && !req.marker->evaluate(env)) return Verdict::holds;
        auto suffix = [&] {
            return required_by == nullptr ? std::string()
                                          : " (required by " + required_by->name + " " + required_by->version + ")";
        };

        auto it = m_installed.find(req.normalized_name);
        if (it == m_installed.end()) return refuse(req.name + " is not installed" + suffix());
        const Distribution& dist = it->second;
        auto installed = [&] { return dist.name + " " + dist.version; };

        if (!req.url.empty())
            return refuse(
                fmt::format("{} @ {} is a direct URL requirement, which cannot be "
                            "checked against the installed {}{}",
                            req.name, req.url, installed(), suffix()));
        if (!req.specifier.empty()) {
            auto version = Version::parse(dist.version);
            if (!version)
                return refuse(
                    fmt::format("{} has a version that is not PEP 440, so it cannot "
                                "satisfy {}{}{}",
                                installed(), req.name, req.specifier.str(), suffix()));
            if (!req.specifier.contains(*version, prereleases)) {
                bool only_prerelease = req.specifier.contains(*version, true);
                return refuse(fmt::format("{} does not satisfy {}{}{}{}", installed(), req.name, req.specifier.str(),
                                          only_prerelease ? " (it is a pre-release, and "
                                                            "pre-releases are not allowed)"
                                                          : "",
                                          suffix()));
            }
        }

        // Base dependencies (extra == "") and those of each requested extra, each only once.
        Frame frame;
        frame.dist = &dist;
        frame.extras.push_back("");
        frame.extras.insert(frame.extras.end(), req.extras.begin(), req.extras.end());
        stack.push_back(std::move(frame));
        return Verdict::pending;
    }

    Verdict refuse(std::string reason) { return verdict_of(fail(std::move(reason))); }

private:
    bool fail(std::string reason) {
        if (m_why_not) *m_why_not = std::move(reason);
        return false;
    }

    const std::map<std::string, Distribution>& m_installed;
    std::string* m_why_not;
    const std::set<std::pair<std::string, std::string>>& m_allowed;
    std::set<std::pair<const Distribution*, std::string>> m_visited;  // name[extra] walked: stops cycles
};

}  // namespace

bool is_satisfied(const Requirement& req, const std::map<std::string, Distribution>& installed, const MarkerEnv& env,
                  bool prereleases, std::string* why_not,
                  const std::set<std::pair<std::string, std::string>>& allowed_conflicts) {
    MarkerEnv walk_env = env;
    if (!walk_env.count("extra")) walk_env["extra"] = "";
    return SatisfactionCheck(installed, why_not, allowed_conflicts).check(req, walk_env, prereleases);
}

Result<std::vector<std::string>> installed_closure(const std::vector<Requirement>& requirements,
                                                   const std::map<std::string, Distribution>& installed,
                                                   const MarkerEnv& env) {
    // A worklist of {distribution, extra}: each pair's Requires-Dist is read once, so cycles
    // end and a long chain needs no deep call stack.
    std::set<std::string> names;
    std::set<std::pair<std::string, std::string>> walked;
    std::vector<std::pair<const Distribution*, std::string>> work;
    MarkerEnv walk_env = env;
    auto enter = [&](const Requirement& req, const std::string& extra) {
        walk_env["extra"] = extra;
        if (req.marker && !req.marker->evaluate(walk_env)) return;
        auto it = installed.find(req.normalized_name);
        if (it == installed.end()) return;
        names.insert(it->first);
        work.emplace_back(&it->second, "");
        for (const auto& e : req.extras) work.emplace_back(&it->second, e);
    };
    for (const auto& req : requirements) enter(req, "");
    while (!work.empty()) {
        auto [dist, extra] = work.back();
        work.pop_back();
        if (!walked.insert({dist->normalized_name, extra}).second) continue;
        BS_TRY(auto deps, read_requires_dist(*dist));
        for (const auto& dep : deps) enter(dep, extra);
    }
    return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace bootstrap::pyenv
