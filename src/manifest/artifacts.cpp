#include "manifest/artifacts.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/sha256.hpp"

namespace bootstrap::manifest {

namespace {

bool is_temp_name(const std::string& name) { return name.find(".tmp-") != std::string::npos; }

/// A name unique to this process and call, for a temp file next to its destination.
std::string temp_name(const std::string& final_name) {
    static std::atomic<unsigned> counter{0};
    return fmt::format(".{}.tmp-{}-{}", final_name, ::getpid(), counter++);
}

Error io_error(const std::string& what, const fs::path& path, int err) {
    return Error{ErrorCode::io, fmt::format("{} {}: {}", what, path.string(), std::strerror(err)), {}};
}

/// Copy `from` to a fresh file `to` (O_EXCL), fsync it, give it `from`'s mtime, and return the
/// sha256 of the bytes written. Removes `to` on any failure.
Result<std::string> copy_and_hash(const fs::path& from, const fs::path& to) {
    core::Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) return tl::unexpected(io_error("cannot read wheel", from, errno));
    core::Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!out) return tl::unexpected(io_error("cannot create", to, errno));
    core::Sha256 hash;
    std::vector<char> buf(1 << 20);
    std::optional<Error> error;
    for (;;) {
        ssize_t n = ::read(in.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            error = io_error("cannot read wheel", from, errno);
            break;
        }
        if (n == 0) break;
        hash.update(std::string_view(buf.data(), static_cast<size_t>(n)));
        for (ssize_t done = 0; done < n;) {
            ssize_t w = ::write(out.get(), buf.data() + done, static_cast<size_t>(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                error = io_error("cannot write", to, errno);
                break;
            }
            done += w;
        }
        if (error) break;
    }
    // uv records a local wheel's mtime in the installed `uv_cache.json` (part of RECORD), so a
    // restore reproduces the original RECORD only if the stored copy keeps the mtime.
    struct stat st {};
    if (!error && ::fstat(in.get(), &st) == 0) {
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        ::futimens(out.get(), times);
    }
    if (!error && ::fsync(out.get()) != 0) error = io_error("cannot sync", to, errno);
    in.reset();
    if (out.close() != 0 && !error) error = io_error("cannot write", to, errno);
    if (error) {
        std::error_code ec;
        fs::remove(to, ec);
        return tl::unexpected(*error);
    }
    return hash.hex();
}

}  // namespace

fs::path bootstrap_home(const std::map<std::string, std::string>& env) {
    auto get = [&](const char* name) -> std::string {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
    };
    if (auto home = get("BOOTSTRAP_HOME"); !home.empty()) return home;
    if (auto xdg = get("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "bootstrap";
    if (auto home = get("HOME"); !home.empty()) return fs::path(home) / ".cache" / "bootstrap";
    return fs::temp_directory_path() / "bootstrap";
}

fs::path artifact_store_root(const std::map<std::string, std::string>& env) {
    return bootstrap_home(env) / "artifacts";
}

fs::path ArtifactStore::entry_dir(const std::string& sha256) const {
    return m_root / "sha256" / sha256.substr(0, 2) / sha256;
}

Result<std::string> ArtifactStore::add(const fs::path& wheel) {
    const std::string name = wheel.filename().string();
    if (!fs::is_regular_file(wheel))
        return fail(ErrorCode::not_found,
                    fmt::format("cannot keep {} in the artifact store: not a file", wheel.string()));
    if (name.size() < 5 || name.substr(name.size() - 4) != ".whl")
        return fail(ErrorCode::usage, fmt::format("cannot keep {} in the artifact store: not a wheel "
                                                  "(*.whl)",
                                                  wheel.string()));
    BS_TRY(auto digest, core::sha256_file(wheel));
    const fs::path dir = entry_dir(digest);
    const fs::path dest = dir / name;
    std::error_code ec;
    // Entries are only ever published by rename after their digest was checked, so an entry
    // with the right size is complete.
    if (fs::is_regular_file(dest, ec) && fs::file_size(dest, ec) == fs::file_size(wheel, ec)) return digest;
    fs::create_directories(dir, ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot create artifact store directory {}: {}", dir.string(), ec.message()));
    const fs::path tmp = dir / temp_name(name);
    BS_TRY(auto copied, copy_and_hash(wheel, tmp));
    if (copied != digest) {
        fs::remove(tmp, ec);
        return fail(ErrorCode::io, fmt::format("cannot keep {} in the artifact store: it changed while "
                                               "being copied (sha256 {} then {})",
                                               wheel.string(), digest, copied));
    }
    // rename(2) replaces atomically: concurrent adders of the same wheel publish identical bytes.
    if (::rename(tmp.c_str(), dest.c_str()) != 0) {
        int err = errno;
        fs::remove(tmp, ec);
        return tl::unexpected(io_error("cannot publish artifact", dest, err));
    }
    return digest;
}

std::optional<fs::path> ArtifactStore::find(const std::string& sha256) const {
    if (!core::is_sha256_hex(sha256)) return std::nullopt;
    std::error_code ec;
    std::vector<fs::path> wheels;
    for (const auto& entry : fs::directory_iterator(entry_dir(sha256), ec)) {
        const std::string name = entry.path().filename().string();
        if (is_temp_name(name) || entry.path().extension() != ".whl") continue;
        if (entry.is_regular_file(ec) && entry.file_size(ec) > 0) wheels.push_back(entry.path());
    }
    if (wheels.empty()) return std::nullopt;
    std::sort(wheels.begin(), wheels.end());
    return wheels.front();
}

Status ArtifactStore::verify(const std::string& sha256) const {
    auto wheel = find(sha256);
    if (!wheel)
        return fail(ErrorCode::not_found,
                    fmt::format("artifact sha256:{} is not in the store {}", sha256, m_root.string()));
    BS_TRY(auto actual, core::sha256_file(*wheel));
    if (actual != sha256)
        return fail(ErrorCode::io, fmt::format("artifact {} is corrupt: its sha256 is {}, expected {}", wheel->string(),
                                               actual, sha256));
    return {};
}

}  // namespace bootstrap::manifest
