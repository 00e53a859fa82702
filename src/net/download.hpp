#pragma once
// Downloading one file whose sha256 is known: resumable (`<dest>.part` and Range requests),
// retried like net::get, verified before it is renamed into place.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace bootstrap::net {

namespace fs = std::filesystem;

/// The most a download whose size nobody declared may bring: 4 GiB.
inline constexpr uint64_t k_default_max_download = 4ull << 30;

/// One failed attempt that is about to be retried.
struct DownloadRetry {
    int attempt = 0;      // the attempt that failed, from 1
    std::string problem;  // "HTTP status 503", "slower than 1.0 KiB/s for 60 s (...)", ...
    double wait_seconds = 0;
    std::string note;  // "" or "the server's Retry-After of 99999 s was capped at 300 s"
};

struct DownloadRequest {
    std::string url;     // http(s):// or file://
    fs::path dest;       // final file
    std::string sha256;  // required, lowercase hex
    std::chrono::seconds connect_timeout{10};
    std::chrono::seconds read_timeout{30};  // abort when no byte arrives for this long
    int retries = 3;                        // extra attempts after the first
    double backoff_base = 0.5;              // seconds; doubles per attempt, capped at 30
    double max_retry_after = 300;           // seconds; a longer Retry-After is cut to this
    /// The file may not be larger: a declared size above it is refused before a byte is
    /// written, and a body without one is cut off there (neither is retried).
    uint64_t max_bytes = k_default_max_download;
    /// An attempt slower than this many bytes/s over `low_speed_time` fails (retryably).
    uint64_t low_speed_limit = 1024;
    std::chrono::milliseconds low_speed_time{std::chrono::seconds(60)};
    /// No attempt runs, and no wait lasts, past this moment (ErrorCode::timeout).
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // May be empty; called as bytes arrive; total is 0 when unknown.
    std::function<void(uint64_t done, uint64_t total)> on_progress;
    // May be empty; called before each wait for another attempt.
    std::function<void(const DownloadRetry&)> on_retry;
};

struct Downloaded {
    fs::path path;               // == request.dest
    uint64_t bytes = 0;          // size of the file
    int attempts = 0;            // requests made (0 when already_there)
    uint64_t resumed_from = 0;   // offset the completing request started at (0: from scratch)
    bool already_there = false;  // dest existed with the right sha256; nothing was fetched
    uint64_t discarded = 0;      // bytes of a stale .part thrown away (too large, or its range
                                 // refused or answered wrongly by the server)
};

/// Fetch `request.url` to `request.dest` unless dest already has the sha256. Bytes go to
/// `<dest>.part`, resumed with a Range request after a retryable failure or an interrupted
/// earlier run — only when the server answers 206 for exactly that range and the .part is
/// smaller than the file (else the .part is discarded and the file fetched whole); the sha256
/// is checked before the rename (a mismatch removes the .part, is never retried and names the
/// URL and both digests). A file over `max_bytes` or a failed write removes the .part; an
/// interrupt or the deadline keeps it for resuming.
[[nodiscard]] Result<Downloaded> download(const DownloadRequest& request);

}  // namespace bootstrap::net
