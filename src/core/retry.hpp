#pragma once
// The one rule for how long to wait between attempts: exponential backoff, or a server's
// Retry-After, capped. Used by net's GETs and downloads and by git fetches of build sources.

#include <optional>
#include <string>

namespace bootstrap::core {

/// No backoff wait is longer than this many seconds.
inline constexpr double k_max_backoff = 30;
/// Retry-After values above this many seconds are cut to it (a server may not park us for a day).
inline constexpr double k_max_retry_after = 300;

/// The wait before another attempt, and why it is that long.
struct RetryDelay {
    double seconds = 0;
    std::optional<double> asked;  // the server's Retry-After, when it was cut to the cap
    /// "" or "the server's Retry-After of 99999 s was capped at 300 s".
    [[nodiscard]] std::string note() const;
};

/// Seconds to wait before attempt `failures + 1` (failures >= 1): `retry_after` when given,
/// but at most `max_retry_after`; else `backoff_base * 2^(failures - 1)`, at most k_max_backoff.
[[nodiscard]] RetryDelay retry_delay(double backoff_base, int failures,
                                     std::optional<double> retry_after = std::nullopt,
                                     double max_retry_after = k_max_retry_after);

}  // namespace bootstrap::core
