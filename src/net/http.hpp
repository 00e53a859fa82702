#pragma once
// HTTP GET with libcurl (which stays inside net/): timeouts, a low-speed floor, retries with
// exponential backoff, Retry-After honoured (capped), and "can this be retried" decided from the
// result, as data.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace bootstrap::net {

struct Request {
    std::string url;
    std::map<std::string, std::string> headers;
    std::chrono::seconds connect_timeout{10};
    std::chrono::seconds read_timeout{30};  // abort when no byte arrives for this long
    int retries = 3;                        // extra attempts after the first
    double backoff_base = 0.5;              // seconds; doubles per attempt, capped at 30
    double max_retry_after = 300;           // seconds; a longer Retry-After is cut to this
    uint64_t max_bytes = 256ull << 20;      // a longer body fails the request (not retried)
    /// The whole request (every attempt and the waits between them) ends by then: an
    /// ErrorCode::timeout error naming the URL.
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct Response {
    long status = 0;
    std::string body;
    std::string content_type;
    std::string effective_url;
    int attempts = 0;
};

/// True for answers worth another try: connection problems, timeouts, 408, 429 and 5xx.
[[nodiscard]] bool is_retryable(long status);

/// GET `request.url`. A non-2xx final answer is an Error naming the URL and the status; a
/// transport failure names the URL and curl's reason; a body over `max_bytes` is refused.
/// Retry-After is honoured up to `max_retry_after`. Interruptible (core::interrupt_signal).
[[nodiscard]] Result<Response> get(const Request& request);

}  // namespace bootstrap::net
