#include "core/retry.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace bootstrap::core {

RetryDelay retry_delay(double backoff_base, int failures, std::optional<double> retry_after, double max_retry_after) {
    RetryDelay d;
    if (retry_after) {
        d.seconds = std::min(*retry_after, max_retry_after);
        if (*retry_after > max_retry_after) d.asked = retry_after;
        return d;
    }
    // The shift is bounded: 2^16 times any sane base is past the cap already.
    const int doublings = std::clamp(failures - 1, 0, 16);
    d.seconds = std::min(k_max_backoff, backoff_base * static_cast<double>(1u << doublings));
    return d;
}

std::string RetryDelay::note() const {
    if (!asked) return {};
    return fmt::format("the server's Retry-After of {:g} s was capped at {:g} s", *asked, seconds);
}

}  // namespace bootstrap::core
