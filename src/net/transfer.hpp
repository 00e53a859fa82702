#pragma once
// Internal to net/: one libcurl easy handle driven through attempts. get() and download() share
// its setup (timeouts, redirects, interrupt polling, response-header parsing, Range) and the
// retry rules; no curl type leaves this pair of files.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/retry.hpp"

namespace bootstrap::net::detail {

/// What the final response's headers said; those of redirects and 1xx answers are dropped.
struct ResponseHead {
    long status = 0;  // stays 0 for file://, which has no headers
    std::string content_type;
    std::optional<uint64_t> content_length;
    std::optional<uint64_t> range_start;  // first byte of a "Content-Range: bytes N-M/T" answer
    std::optional<uint64_t> range_total;  // its T (absent for "*")
    std::optional<double> retry_after;    // seconds; only the delta-seconds form
};

struct TransferSpec {
    std::string url;
    std::map<std::string, std::string> headers;
    std::chrono::seconds connect_timeout{10};
    std::chrono::seconds read_timeout{30};  // abort when no byte arrives for this long
    /// Abort (retryably) when fewer than `low_speed_limit` bytes/s arrive, averaged over the
    /// last `low_speed_time`; a zero in either turns the check off.
    uint64_t low_speed_limit = 1024;
    std::chrono::milliseconds low_speed_time{std::chrono::seconds(60)};
    /// Abort (not retryably) at this moment, whatever is happening.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::optional<uint64_t> range_from;  // sends "Range: bytes=N-" (file:// honours it too)
    /// Each chunk of the body, with the head of the response it belongs to; false aborts.
    std::function<bool(const ResponseHead&, std::string_view)> on_body;
};

struct TransferResult {
    bool completed = false;        // the transfer ran to its end (any status)
    bool interrupted = false;      // core::interrupt_signal() was seen
    bool aborted = false;          // on_body returned false
    bool permanent = false;        // a transport failure no retry can fix (bad URL, no such file)
    bool range_refused = false;    // 416, or a file:// range past the end
    bool too_slow = false;         // below the low-speed limit for the low-speed time (retryable)
    bool deadline_passed = false;  // spec.deadline came first (not retryable)
    long status = 0;               // final HTTP status; 0 for file:// or when nothing answered
    ResponseHead head;
    std::string problem;  // why it did not complete, or "HTTP status N"
    std::string effective_url;
};

/// One easy handle (its connection is reused across attempts). libcurl is loaded on first use.
class Session {
public:
    [[nodiscard]] static Result<Session> open();
    Session(Session&& other) noexcept;
    Session& operator=(Session&&) = delete;
    ~Session();

    TransferResult perform(const TransferSpec& spec);

private:
    explicit Session(void* handle) : m_handle(handle) {}
    void* m_handle;  // CURL*
};

/// True when an attempt that ended like `r` is worth another try (is_retryable on the status).
[[nodiscard]] bool worth_retrying(const TransferResult& r);

/// core::retry_delay with the server's Retry-After from `r`: Retry-After when given, but at
/// most `max_retry_after`; else `backoff_base * 2^(failures - 1)`, capped at 30.
[[nodiscard]] core::RetryDelay retry_delay(const TransferResult& r, double backoff_base, int failures,
                                           double max_retry_after);

/// Retry-After values above this many seconds are cut to it.
inline constexpr double k_max_retry_after = core::k_max_retry_after;

}  // namespace bootstrap::net::detail
