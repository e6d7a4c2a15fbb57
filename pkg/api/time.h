#pragma once
// Timestamps as the API writes them: RFC 3339 text for metav1.Time (seconds) and metav1.MicroTime
// (microseconds), and the one conversion from a util::Clock's system time.

#include <string>
#include <string_view>

#include "pkg/api/types.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::api {

// RFC 3339 ("2024-05-01T10:00:00Z", with optional fraction and offset) to and from Timestamp.
util::Result<Timestamp> parseTimestamp(std::string_view text);
std::string formatTimestamp(Timestamp t);       // seconds: metav1.Time
std::string formatMicroTimestamp(Timestamp t);  // microseconds: metav1.MicroTime

// The system time `t` truncated to microseconds (Clock::systemNow() -> Timestamp).
Timestamp toTimestamp(util::SystemTime t);

}  // namespace berth::api
