#pragma once
// Go's time.ParseDuration, the syntax of every duration in berth's flags and configuration
// ("1m30s", "500ms", "-1.5h", "0"; units ns, us, µs, ms, s, m, h).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::util {

// The duration in nanoseconds, or InvalidArgument with Go's message: `time: invalid duration
// "x"`, `time: missing unit in duration "1"`, `time: unknown unit "x" in duration "1x"`.
Result<std::chrono::nanoseconds> parseGoDuration(std::string_view text);

// Go's Duration.String for a whole number of milliseconds: "0s", "500ms", "1.5s", "5m0s",
// "1h0m5s", "-2s". parseGoDuration reads it back.
std::string formatGoDuration(int64_t millis);

}  // namespace berth::util
