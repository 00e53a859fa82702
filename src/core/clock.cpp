#include "core/clock.hpp"

#include <unistd.h>

#include <ctime>

namespace bootstrap::core {

std::string utc_now(const char* format) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, format, &tm);
    return buf;
}

std::string utc_iso8601() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }

std::string new_run_id() { return utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(::getpid()); }

}  // namespace bootstrap::core
