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

namespace bootstrap::net::detail {

/// What the final response's headers said; those of redirects and 1xx answers are dropped.
struct ResponseHead {
    long status = 0;  // stays 0 for file://, which has no headers
    std::string content_type;
    std::optional<uint64_t> content_length;
    std::optional<uint64_t> range_start;  // first byte of a "Content-Range: bytes N-M/T" answer
    std::optional<double> retry_after;    // seconds; only the delta-seconds form
};

struct TransferSpec {
    std::string url;
    std::map<std::string, std::string> headers;
    std::chrono::seconds connect_timeout{10};
    std::chrono::seconds read_timeout{30};  // abort when no byte arrives for this long
    std::optional<uint64_t> range_from;     // sends "Range: bytes=N-" (file:// honours it too)
    /// Each chunk of the body, with the head of the response it belongs to; false aborts.
    std::function<bool(const ResponseHead&, std::string_view)> on_body;
};

struct TransferResult {
    bool completed = false;      // the transfer ran to its end (any status)
    bool interrupted = false;    // core::interrupt_signal() was seen
    bool aborted = false;        // on_body returned false
    bool permanent = false;      // a transport failure no retry can fix (bad URL, no such file)
    bool range_refused = false;  // 416, or a file:// range past the end
    long status = 0;             // final HTTP status; 0 for file:// or when nothing answered
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

/// Seconds to wait before attempt `failures + 1`: Retry-After when given, else
/// `backoff_base * 2^(failures - 1)`, capped at 30.
[[nodiscard]] double retry_delay(const TransferResult& r, double backoff_base, int failures);


}  // namespace bootstrap::net::detail
