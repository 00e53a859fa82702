#pragma once
// Wall-clock strings: UTC timestamps for journals and manifests, and run ids.

#include <string>

namespace bootstrap::core {

/// Now in UTC, formatted with strftime (e.g. "%Y-%m-%dT%H:%M:%SZ").
[[nodiscard]] std::string utc_now(const char* format);

/// ISO 8601 UTC, "2026-11-30T08:15:00Z".
[[nodiscard]] std::string utc_iso8601();

/// A run id: "20261130T081500Z-<pid>" (sorts by time; unique per process).
[[nodiscard]] std::string new_run_id();

}  // namespace bootstrap::core
