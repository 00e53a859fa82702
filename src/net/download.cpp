#include "net/download.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/sha256.hpp"
#include "net/http.hpp"
#include "net/transfer.hpp"

namespace bootstrap::net {

namespace {

// `<dest>.part`, opened for appending: whatever arrives is added to what an earlier attempt
// (or an earlier run) left, unless the server starts over.
class PartFile {
public:
    static Result<PartFile> open(const fs::path& path) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
            return fail(ErrorCode::io,
                        fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
        return PartFile(path, fd);
    }
    PartFile(PartFile&& other) noexcept : m_path(std::move(other.m_path)), m_fd(other.m_fd) {
        other.m_fd = -1;
    }
    PartFile& operator=(PartFile&&) = delete;
    ~PartFile() {
        if (m_fd >= 0) ::close(m_fd);
    }

    const fs::path& path() const { return m_path; }

    Result<uint64_t> size() const {
        struct stat st {};
        if (::fstat(m_fd, &st) != 0) return error("stat");
        return static_cast<uint64_t>(st.st_size);
    }

    Status truncate() {
        if (::ftruncate(m_fd, 0) != 0) return error("truncate");
        return {};
    }

    Status append(std::string_view data) {
        while (!data.empty()) {
            ssize_t n = ::write(m_fd, data.data(), data.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                return error("write");
            }
            data.remove_prefix(static_cast<size_t>(n));
        }
        return {};
    }

    Status sync() {
        if (::fsync(m_fd) != 0) return error("sync");
        return {};
    }

private:
    PartFile(fs::path path, int fd) : m_path(std::move(path)), m_fd(fd) {}
    tl::unexpected<Error> error(const char* what) const {
        return fail(ErrorCode::io,
                    fmt::format("cannot {} {}: {}", what, m_path.string(), std::strerror(errno)));
    }

    fs::path m_path;
    int m_fd = -1;
};

// Where one attempt's body goes, decided by the first chunk's response head: 206 (or file://,
// which honours the range) appends at the .part's end; another 2xx is the whole file, so the
// .part is emptied first; any other status's body is an error page and is dropped.
class Sink {
public:
    Sink(PartFile& part, uint64_t offset, const DownloadRequest& request)
        : m_part(part), m_offset(offset), m_done(offset), m_request(request) {}

    bool write(const detail::ResponseHead& head, std::string_view chunk) {
        if (!m_decided && !decide(head)) return false;
        if (!m_writing) return true;
        if (auto ok = m_part.append(chunk); !ok) {
            m_error = std::move(ok.error());
            return false;
        }
        m_done += chunk.size();
        if (m_request.on_progress) m_request.on_progress(m_done, m_total);
        return true;
    }

    /// After a completed transfer whose body was empty, so that write() never decided.
    bool settle(const detail::ResponseHead& head) { return m_decided || decide(head); }

    bool restarted() const { return m_restarted; }
    bool bad_range() const { return m_bad_range; }
    std::optional<Error>& error() { return m_error; }

private:
    bool decide(const detail::ResponseHead& head) {
        m_decided = true;
        bool ok_status = head.status == 0 || (head.status >= 200 && head.status < 300);
        if (!ok_status) return true;  // m_writing stays false
        bool appending = head.status == 0 || head.status == 206;
        if (head.status == 206 && head.range_start && *head.range_start != m_offset) {
            m_bad_range = true;  // not the bytes we asked for: the next attempt starts over
            return false;
        }
        if (!appending && m_offset > 0) {
            if (auto ok = m_part.truncate(); !ok) {
                m_error = std::move(ok.error());
                return false;
            }
            m_restarted = true;
            m_done = 0;
        }
        uint64_t base = appending ? m_offset : 0;
        m_total = head.content_length ? base + *head.content_length : 0;
        m_writing = true;
        return true;
    }

    PartFile& m_part;
    uint64_t m_offset;
    uint64_t m_done;
    uint64_t m_total = 0;
    const DownloadRequest& m_request;
    bool m_decided = false;
    bool m_writing = false;
    bool m_restarted = false;
    bool m_bad_range = false;
    std::optional<Error> m_error;
};

bool is_sha256_hex(std::string_view s) {
    if (s.size() != 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

// The last step: the .part is complete; check it and move it into place, or remove it.
Result<uint64_t> commit(PartFile& part, const DownloadRequest& request) {
    BS_CHECK(part.sync());
    BS_TRY(auto got, core::sha256_file(part.path()));
    if (got != request.sha256) {
        std::error_code ec;
        fs::remove(part.path(), ec);
        return fail(ErrorCode::network, fmt::format("checksum mismatch for {}: expected {}, got {}",
                                                    request.url, request.sha256, got));
    }
    BS_TRY(auto size, part.size());
    if (::rename(part.path().c_str(), request.dest.c_str()) != 0)
        return fail(ErrorCode::io, fmt::format("cannot rename {} to {}: {}", part.path().string(),
                                               request.dest.string(), std::strerror(errno)));
    return size;
}

}  // namespace

// Attempt loop. Each attempt asks for the bytes after the .part's current size. Then:
//   completed with 2xx (or file://) -> commit: verify, rename, done (a mismatch is final);
//   range refused (416)             -> empty the .part and start over, once, without waiting;
//   worth retrying, retries left    -> wait Retry-After or backoff, attempt again;
//   otherwise                       -> error naming the URL and the last status or reason.
// An interrupt at any point returns at once and keeps the .part.
Result<Downloaded> download(const DownloadRequest& request) {
    if (!is_sha256_hex(request.sha256))
        return fail(ErrorCode::usage,
                    fmt::format("cannot download {}: sha256 '{}' is not 64 lowercase hex digits",
                                request.url, request.sha256));
    Downloaded result;
    result.path = request.dest;
    std::error_code ec;
    if (fs::is_regular_file(request.dest, ec)) {
        BS_TRY(auto have, core::sha256_file(request.dest));
        if (have == request.sha256) {
            result.already_there = true;
            result.bytes = fs::file_size(request.dest, ec);
            return result;
        }
    }
    if (request.dest.has_parent_path())
        BS_CHECK(core::create_directories(request.dest.parent_path()));
    BS_TRY(auto part, PartFile::open(request.dest.string() + ".part"));
    // Whatever way this returns, a .part with nothing in it is not worth keeping.
    struct DropEmpty {
        const fs::path& path;
        ~DropEmpty() {
            std::error_code ignored;
            if (fs::file_size(path, ignored) == 0) fs::remove(path, ignored);
        }
    } drop_empty{part.path()};
    BS_TRY(auto session, detail::Session::open());
    auto interrupted = [&] {
        return fail(ErrorCode::interrupted, fmt::format("interrupted while downloading {}",
                                                        request.url));
    };

    bool started_over = false;  // after a 416
    int failures = 0;
    for (;;) {
        BS_TRY(uint64_t offset, part.size());
        Sink sink(part, offset, request);
        detail::TransferSpec spec;
        spec.url = request.url;
        spec.connect_timeout = request.connect_timeout;
        spec.read_timeout = request.read_timeout;
        if (offset > 0) spec.range_from = offset;
        spec.on_body = [&](const detail::ResponseHead& head, std::string_view chunk) {
            return sink.write(head, chunk);
        };
        auto r = session.perform(spec);
        ++result.attempts;
        if (sink.error()) return tl::unexpected<Error>(std::move(*sink.error()));
        if (r.interrupted) return interrupted();
        if (r.completed && sink.settle(r.head) && !sink.error() && r.problem.empty()) {
            result.resumed_from = sink.restarted() ? 0 : offset;
            BS_TRY(result.bytes, commit(part, request));
            return result;
        }
        if (sink.error()) return tl::unexpected<Error>(std::move(*sink.error()));
        if (r.range_refused && offset > 0 && !started_over) {
            started_over = true;
            BS_CHECK(part.truncate());
            continue;
        }
        if (sink.bad_range()) BS_CHECK(part.truncate());
        std::string problem =
            sink.bad_range() ? "the server answered a different range than asked" : r.problem;
        if (!(detail::worth_retrying(r) || sink.bad_range()) || failures >= request.retries)
            return fail(ErrorCode::network,
                        fmt::format("download of {} failed after {} attempt{}: {}", request.url,
                                    result.attempts, result.attempts == 1 ? "" : "s", problem));
        ++failures;
        if (!core::sleep_interruptible(detail::retry_delay(r, request.backoff_base, failures)))
            return interrupted();
    }
}

}  // namespace bootstrap::net
