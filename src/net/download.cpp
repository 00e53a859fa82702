#include "net/download.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/fd.hpp"
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
        core::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
        if (!fd) return fail(ErrorCode::io, fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
        return PartFile(path, std::move(fd));
    }

    const fs::path& path() const { return m_path; }

    Result<uint64_t> size() const {
        struct stat st {};
        if (::fstat(m_fd.get(), &st) != 0) return error("stat");
        return static_cast<uint64_t>(st.st_size);
    }

    Status truncate() {
        if (::ftruncate(m_fd.get(), 0) != 0) return error("truncate");
        return {};
    }

    Status append(std::string_view data) {
        while (!data.empty()) {
            ssize_t n = ::write(m_fd.get(), data.data(), data.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                return error("write");
            }
            data.remove_prefix(static_cast<size_t>(n));
        }
        return {};
    }

    Status sync() {
        if (::fsync(m_fd.get()) != 0) return error("sync");
        return {};
    }

private:
    PartFile(fs::path path, core::Fd fd) : m_path(std::move(path)), m_fd(std::move(fd)) {}
    tl::unexpected<Error> error(const char* what) const {
        return fail(ErrorCode::io, fmt::format("cannot {} {}: {}", what, m_path.string(), std::strerror(errno)));
    }

    fs::path m_path;
    core::Fd m_fd;
};

// Where one attempt's body goes, decided by the first chunk's response head: 206 (or file://,
// which honours the range) appends at the .part's end — only when the Content-Range starts
// exactly there and its total is larger; another 2xx is the whole file, so the .part is emptied
// first. The file's size, as declared (Content-Range's total, Content-Length) or else the
// request's max_bytes, bounds what is written. (Error answers' bodies are never read: libcurl
// fails them at their status line, see CURLOPT_FAILONERROR.)
class Sink {
public:
    Sink(PartFile& part, uint64_t offset, const DownloadRequest& request)
        : m_part(part), m_offset(offset), m_done(offset), m_request(request) {}

    bool write(const detail::ResponseHead& head, std::string_view chunk) {
        if (!m_decided && !decide(head)) return false;
        if (!m_writing) return true;
        if (m_done + chunk.size() > m_limit) {
            m_overflow = true;
            return false;
        }
        if (auto ok = m_part.append(chunk); !ok) {
            // A full disk must not keep the next run from downloading: give the space back.
            (void)m_part.truncate();
            m_error = std::move(ok.error());
            m_error->message += " (the partial download was removed)";
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
    /// The declared size, when it is over max_bytes (nothing was written).
    std::optional<uint64_t> too_large() const { return m_too_large; }
    /// More bytes came than the declared size or max_bytes allows.
    bool overflow() const { return m_overflow; }
    uint64_t limit() const { return m_limit; }
    bool size_declared() const { return m_declared; }
    uint64_t done() const { return m_done; }
    uint64_t total() const { return m_total; }
    std::optional<Error>& error() { return m_error; }

private:
    bool decide(const detail::ResponseHead& head) {
        m_decided = true;
        bool ok_status = head.status == 0 || (head.status >= 200 && head.status < 300);
        if (!ok_status) return true;  // m_writing stays false
        bool appending = head.status == 0 || head.status == 206;
        if (head.status == 206 && (!head.range_start || *head.range_start != m_offset ||
                                   (head.range_total && *head.range_total <= m_offset))) {
            m_bad_range = true;  // not the bytes we asked for: start over
            return false;
        }
        uint64_t base = appending ? m_offset : 0;
        std::optional<uint64_t> declared;
        if (head.status == 206 && head.range_total) declared = *head.range_total;
        else if (head.status != 0 && head.content_length) declared = base + *head.content_length;
        if (declared && *declared > m_request.max_bytes) {
            m_too_large = declared;
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
        m_declared = declared.has_value();
        m_limit = declared.value_or(m_request.max_bytes);
        m_total = declared.value_or(head.content_length ? base + *head.content_length : 0);
        m_writing = true;
        return true;
    }

    PartFile& m_part;
    uint64_t m_offset;
    uint64_t m_done;
    uint64_t m_total = 0;
    uint64_t m_limit = 0;
    const DownloadRequest& m_request;
    bool m_decided = false;
    bool m_writing = false;
    bool m_restarted = false;
    bool m_bad_range = false;
    bool m_declared = false;
    bool m_overflow = false;
    std::optional<uint64_t> m_too_large;
    std::optional<Error> m_error;
};

// The last step: the .part is complete; check it and move it into place, or remove it.
Result<uint64_t> commit(PartFile& part, const DownloadRequest& request) {
    BS_CHECK(part.sync());
    BS_TRY(auto got, core::sha256_file(part.path()));
    if (got != request.sha256) {
        std::error_code ec;
        fs::remove(part.path(), ec);
        return fail(ErrorCode::network,
                    fmt::format("checksum mismatch for {}: expected {}, got {}", request.url, request.sha256, got));
    }
    BS_TRY(auto size, part.size());
    if (::rename(part.path().c_str(), request.dest.c_str()) != 0)
        return fail(ErrorCode::io, fmt::format("cannot rename {} to {}: {}", part.path().string(),
                                               request.dest.string(), std::strerror(errno)));
    return size;
}

std::string attempts_text(int n) { return fmt::format("{} attempt{}", n, n == 1 ? "" : "s"); }

}  // namespace

// Attempt loop. Each attempt asks for the bytes after the .part's current size. Then:
//   completed with 2xx (or file://) -> commit: verify, rename, done (a mismatch is final);
//   416, or a 206 for other bytes   -> empty the .part and start over, once, without waiting;
//   over the size limit             -> remove the .part; final;
//   worth retrying, retries left    -> wait Retry-After (capped) or backoff, attempt again;
//   otherwise                       -> error naming the URL and the last status or reason.
// The deadline ends it wherever it falls (an attempt, or a wait that would outlast it). An
// interrupt at any point returns at once; both keep the .part for resuming.
Result<Downloaded> download(const DownloadRequest& request) {
    if (!core::is_sha256_hex(request.sha256))
        return fail(ErrorCode::usage, fmt::format("cannot download {}: sha256 '{}' is not 64 lowercase hex digits",
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
    if (request.dest.has_parent_path()) BS_CHECK(core::create_directories(request.dest.parent_path()));
    BS_TRY(auto part, PartFile::open(request.dest.string() + ".part"));
    // Whatever way this returns, a .part with nothing in it is not worth keeping.
    struct DropEmpty {
        const fs::path& path;
        ~DropEmpty() {
            std::error_code ignored;
            if (fs::file_size(path, ignored) == 0) fs::remove(path, ignored);
        }
    } drop_empty{part.path()};
    // A .part larger than any file we would accept (an earlier run's endless body, or one with
    // a larger limit) cannot be the start of this one.
    BS_TRY(uint64_t stale, part.size());
    if (stale > request.max_bytes) {
        BS_CHECK(part.truncate());
        result.discarded += stale;
    }
    BS_TRY(auto session, detail::Session::open());
    auto interrupted = [&] {
        return fail(ErrorCode::interrupted, fmt::format("interrupted while downloading {}", request.url));
    };
    auto out_of_time = [&](const std::string& why) -> tl::unexpected<Error> {
        auto have = part.size().value_or(0);
        return fail(
            ErrorCode::timeout,
            fmt::format(
                "download of {} ran out of time after {}: {}{}", request.url, attempts_text(result.attempts), why,
                have == 0 ? std::string()
                          : fmt::format(" ({} kept in {} to resume)", core::format_size(have), part.path().string())));
    };
    auto past_deadline = [&] { return request.deadline && std::chrono::steady_clock::now() >= *request.deadline; };

    bool started_over = false;  // after a 416 or a wrong 206
    std::string capped;         // the last wait's note when a Retry-After was cut to the cap
    int failures = 0;
    for (;;) {
        if (past_deadline()) return out_of_time("the deadline passed before the next attempt");
        BS_TRY(uint64_t offset, part.size());
        Sink sink(part, offset, request);
        detail::TransferSpec spec;
        spec.url = request.url;
        spec.connect_timeout = request.connect_timeout;
        spec.read_timeout = request.read_timeout;
        spec.low_speed_limit = request.low_speed_limit;
        spec.low_speed_time = request.low_speed_time;
        spec.deadline = request.deadline;
        if (offset > 0) spec.range_from = offset;
        spec.on_body = [&](const detail::ResponseHead& head, std::string_view chunk) {
            return sink.write(head, chunk);
        };
        auto r = session.perform(spec);
        ++result.attempts;
        if (sink.error()) return tl::unexpected<Error>(std::move(*sink.error()));
        if (r.interrupted) return interrupted();
        if (r.completed && sink.settle(r.head) && !sink.error() && !sink.bad_range() && !sink.too_large() &&
            r.problem.empty()) {
            result.resumed_from = sink.restarted() ? 0 : offset;
            BS_TRY(result.bytes, commit(part, request));
            return result;
        }
        if (sink.error()) return tl::unexpected<Error>(std::move(*sink.error()));
        if (sink.too_large() || sink.overflow()) {
            BS_CHECK(part.truncate());
            std::string why = sink.too_large()
                                  ? fmt::format("the server declares {} ({} bytes), more than the limit of {}",
                                                core::format_size(*sink.too_large()), *sink.too_large(),
                                                core::format_size(request.max_bytes))
                              : sink.size_declared()
                                  ? fmt::format("more than the declared {} arrived", core::format_size(sink.limit()))
                                  : fmt::format("no size was declared and more than the limit of {} arrived",
                                                core::format_size(sink.limit()));
            return fail(ErrorCode::network,
                        fmt::format("download of {} refused: {}; the partial file was removed", request.url, why));
        }
        if (r.deadline_passed) return out_of_time(r.problem);
        if ((r.range_refused || sink.bad_range()) && offset > 0 && !started_over) {
            started_over = true;
            result.discarded += offset;
            BS_CHECK(part.truncate());
            continue;
        }
        if (sink.bad_range()) BS_CHECK(part.truncate());
        std::string problem = sink.bad_range() ? "the server answered a different range than asked" : r.problem;
        if (!(detail::worth_retrying(r) || sink.bad_range()) || failures >= request.retries)
            return fail(ErrorCode::network,
                        fmt::format("download of {} failed after {}: {}{}", request.url, attempts_text(result.attempts),
                                    problem, capped.empty() ? "" : " (" + capped + ")"));
        ++failures;
        auto wait = detail::retry_delay(r, request.backoff_base, failures, request.max_retry_after);
        std::string note = wait.note();
        if (!note.empty()) capped = note;
        if (request.deadline &&
            std::chrono::steady_clock::now() + std::chrono::duration<double>(wait.seconds) >= *request.deadline)
            return out_of_time(
                fmt::format("{}, and the wait of {:.0f} s before another attempt "
                            "would end past the deadline{}",
                            problem, wait.seconds, note.empty() ? "" : " (" + note + ")"));
        if (request.on_retry) request.on_retry(DownloadRetry{result.attempts, problem, wait.seconds, note});
        if (!core::sleep_interruptible(wait.seconds)) return interrupted();
    }
}

}  // namespace bootstrap::net
