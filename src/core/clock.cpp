#include "core/clock.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "core/sha256.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

Result<std::optional<std::int64_t>> parse_source_date_epoch(const char* value) {
    if (value == nullptr || *value == '\0') return std::optional<std::int64_t>{};
    auto seconds = parse_int<std::int64_t>(value);
    // strftime's %Y has four digits up to the end of year 9999 (253402300799).
    if (!seconds || *seconds < 0 || *seconds > 253402300799)
        return fail(ErrorCode::usage,
                    fmt::format("SOURCE_DATE_EPOCH is not a number of seconds since 1970: '{}'", value),
                    "set it to a non-negative integer (e.g. `git log -1 --format=%ct`) or unset it");
    return std::optional<std::int64_t>{*seconds};
}

Result<std::optional<std::int64_t>> source_date_epoch() {
    return parse_source_date_epoch(std::getenv("SOURCE_DATE_EPOCH"));
}

std::string format_utc(std::int64_t t, const char* format) {
    const auto seconds = static_cast<std::time_t>(t);
    std::tm tm{};
    if (gmtime_r(&seconds, &tm) == nullptr) return {};
    char buf[64];
    if (std::strftime(buf, sizeof buf, format, &tm) == 0) return {};
    return buf;
}

namespace {
std::optional<std::int64_t> fixed_now() {
    auto epoch = source_date_epoch();
    return epoch ? *epoch : std::nullopt;
}
}  // namespace

std::string utc_now(const char* format) {
    return format_utc(fixed_now().value_or(static_cast<std::int64_t>(std::time(nullptr))), format);
}

std::string shown_time(std::string_view time, const std::optional<std::string>& build_time) {
    if (build_time && time.size() >= 10 && core::starts_with(*build_time, time)) return "during the image build";
    return std::string(time);
}

std::string utc_iso8601() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }

std::string new_run_id(std::string_view seed, const std::filesystem::path& logs) {
    const auto epoch = fixed_now();
    const std::string base = epoch ? format_utc(*epoch, "%Y%m%dT%H%M%SZ") + "-" + sha256_hex(seed).substr(0, 8)
                                   : utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(::getpid());
    std::string id = base;
    std::error_code ec;
    for (int n = 2; !logs.empty() && std::filesystem::exists(logs / id, ec); ++n) id = fmt::format("{}.{}", base, n);
    return id;
}

}  // namespace bootstrap::core
