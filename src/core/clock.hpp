#pragma once
// Wall-clock strings: UTC timestamps for journals and manifests, and run ids.
//
// SOURCE_DATE_EPOCH (reproducible-builds.org) stands in for "now" in everything written into
// state, and makes run ids a function of their seed: an image built twice from the same inputs
// then records the same times and run ids.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace bootstrap::core {

/// A SOURCE_DATE_EPOCH value: null or "" is unset (nullopt); a decimal count of seconds since
/// 1970 is that time; anything else is a usage error naming the value.
[[nodiscard]] Result<std::optional<std::int64_t>> parse_source_date_epoch(const char* value);

/// This process's SOURCE_DATE_EPOCH, parsed (see parse_source_date_epoch).
[[nodiscard]] Result<std::optional<std::int64_t>> source_date_epoch();

/// `t` (seconds since 1970) in UTC, formatted with strftime.
[[nodiscard]] std::string format_utc(std::int64_t t, const char* format);

/// Now in UTC, formatted with strftime (e.g. "%Y-%m-%dT%H:%M:%SZ"); SOURCE_DATE_EPOCH when it
/// is set (a malformed one is ignored here: commands that write state check it first).
[[nodiscard]] std::string utc_now(const char* format);

/// A recorded time (ISO 8601, or its date alone) as a person reads it: "during the image build"
/// when it is the time an image's build recorded (`build_time`: SOURCE_DATE_EPOCH there, often
/// 0, which would read as 1970-01-01), else `time` as it is.
[[nodiscard]] std::string shown_time(std::string_view time, const std::optional<std::string>& build_time);

/// ISO 8601 UTC, "2026-11-30T08:15:00Z".
[[nodiscard]] std::string utc_iso8601();

/// A run id, unique among the entries of `logs` (run ids name log directories): normally
/// "20261130T081500Z-<pid>" (sorts by time). Under SOURCE_DATE_EPOCH the time is the epoch and
/// the pid is the first 8 hex digits of sha256(`seed`) (a digest of what the run does), so the
/// same run of the same inputs gets the same id. A taken id gets ".2", ".3", ...
[[nodiscard]] std::string new_run_id(std::string_view seed, const std::filesystem::path& logs);

}  // namespace bootstrap::core
