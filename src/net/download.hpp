#pragma once
// Downloading one file whose sha256 is known: resumable (`<dest>.part` and Range requests),
// retried like net::get, verified before it is renamed into place.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/error.hpp"

namespace bootstrap::net {

namespace fs = std::filesystem;

struct DownloadRequest {
    std::string url;                         // http(s):// or file://
    fs::path dest;                           // final file
    std::string sha256;                      // required, lowercase hex
    std::chrono::seconds connect_timeout{10};
    std::chrono::seconds read_timeout{30};   // abort when no byte arrives for this long
    int retries = 3;                         // extra attempts after the first
    double backoff_base = 0.5;               // seconds; doubles per attempt, capped at 30
    // May be empty; called as bytes arrive; total is 0 when unknown.
    std::function<void(uint64_t done, uint64_t total)> on_progress;
};

struct Downloaded {
    fs::path path;              // == request.dest
    uint64_t bytes = 0;         // size of the file
    int attempts = 0;           // requests made (0 when already_there)
    uint64_t resumed_from = 0;  // offset the completing request started at (0: from scratch)
    bool already_there = false; // dest existed with the right sha256; nothing was fetched
};

/// Fetch `request.url` to `request.dest` unless dest already has the sha256. Bytes go to
/// `<dest>.part`, resumed with a Range request after a retryable failure or an interrupted
/// earlier run; the sha256 is checked before the rename (a mismatch removes the .part, is never
/// retried and names the URL and both digests). An interrupt keeps the .part for resuming.
[[nodiscard]] Result<Downloaded> download(const DownloadRequest& request);

}  // namespace bootstrap::net
