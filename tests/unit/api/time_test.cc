#include "pkg/api/time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace berth::api {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(Timestamp, ParseTimestampAcceptsRfc3339) {
  struct Case {
    std::string_view text;
    int64_t micros;
  };
  const Case cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2024-05-01T10:00:00Z", 1714557600 * kSecond},
      {"2024-05-01T10:00:00.123456Z", 1714557600 * kSecond + 123456},
      // Fractions are truncated to microseconds, any number of digits, '.' or ',' as Go accepts.
      {"2024-05-01T10:00:00.1234567891Z", 1714557600 * kSecond + 123456},
      {"2024-05-01T10:00:00.5Z", 1714557600 * kSecond + 500000},
      {"2024-05-01T10:00:00,5Z", 1714557600 * kSecond + 500000},
      {"2024-05-01T12:00:00+02:00", 1714557600 * kSecond},
      {"2024-05-01T05:30:00-04:30", 1714557600 * kSecond},
      {"2024-05-01T10:00:00-00:00", 1714557600 * kSecond},
      {"2024-02-29T00:00:00Z", 1709164800 * kSecond},
      {"2000-02-29T23:59:59Z", 951868799 * kSecond},
      {"1969-12-31T23:59:59Z", -1 * kSecond},
      {"1969-12-31T23:59:59.75Z", -1 * kSecond + 750000},
      {"1900-01-01T00:00:00Z", -2208988800 * kSecond},
      {"0001-01-01T00:00:00Z", -62135596800 * kSecond},
      {"9999-12-31T23:59:59Z", 253402300799 * kSecond},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = parseTimestamp(c.text);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->micros, c.micros);
  }
}

TEST(Timestamp, ParseTimestampRejectsMalformedText) {
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"", R"(invalid RFC 3339 time "": want the form 2006-01-02T15:04:05Z07:00)"},
      {"2024-05-01",
       R"(invalid RFC 3339 time "2024-05-01": want the form 2006-01-02T15:04:05Z07:00)"},
      {"2024-05-01 10:00:00Z",
       R"(invalid RFC 3339 time "2024-05-01 10:00:00Z": want the form 2006-01-02T15:04:05Z07:00)"},
      {"2024-5-01T10:00:00Z",
       R"(invalid RFC 3339 time "2024-5-01T10:00:00Z": want the form 2006-01-02T15:04:05Z07:00)"},
      {"2024-05-01T10:00:00",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00": want a time zone: Z or an offset like +01:00)"},
      {"2024-05-01T10:00:00z",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00z": want a time zone: Z or an offset like +01:00)"},
      {"2024-05-01T10:00:00+0200",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00+0200": want a time zone offset like +01:00)"},
      {"2024-05-01T10:00:00+24:00",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00+24:00": time zone offset out of range)"},
      {"2024-05-01T10:00:00.Z",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00.Z": want digits after the decimal point)"},
      {"2024-05-01T10:00:00ZZ",
       R"(invalid RFC 3339 time "2024-05-01T10:00:00ZZ": extra text after the time zone)"},
      {"2024-13-01T10:00:00Z",
       R"(invalid RFC 3339 time "2024-13-01T10:00:00Z": month out of range)"},
      {"2024-00-01T10:00:00Z",
       R"(invalid RFC 3339 time "2024-00-01T10:00:00Z": month out of range)"},
      {"2023-02-29T10:00:00Z", R"(invalid RFC 3339 time "2023-02-29T10:00:00Z": day out of range)"},
      {"1900-02-29T10:00:00Z", R"(invalid RFC 3339 time "1900-02-29T10:00:00Z": day out of range)"},
      {"2024-04-31T10:00:00Z", R"(invalid RFC 3339 time "2024-04-31T10:00:00Z": day out of range)"},
      {"2024-05-01T24:00:00Z",
       R"(invalid RFC 3339 time "2024-05-01T24:00:00Z": hour out of range)"},
      {"2024-05-01T10:60:00Z",
       R"(invalid RFC 3339 time "2024-05-01T10:60:00Z": minute out of range)"},
      {"2024-05-01T10:00:60Z",
       R"(invalid RFC 3339 time "2024-05-01T10:00:60Z": second out of range)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = parseTimestamp(c.text);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().message, c.message);
    EXPECT_EQ(t.error().code, util::ErrorCode::InvalidArgument);
  }
}

TEST(Timestamp, FormatTimestampWritesUtcSeconds) {
  struct Case {
    int64_t micros;
    std::string_view seconds;
    std::string_view micro;
  };
  const Case cases[] = {
      {0, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z"},
      {1714557600 * kSecond, "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.000000Z"},
      {1714557600 * kSecond + 123456, "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123456Z"},
      {1709164800 * kSecond + 999999, "2024-02-29T00:00:00Z", "2024-02-29T00:00:00.999999Z"},
      {951868799 * kSecond, "2000-02-29T23:59:59Z", "2000-02-29T23:59:59.000000Z"},
      {978307199 * kSecond, "2000-12-31T23:59:59Z", "2000-12-31T23:59:59.000000Z"},
      // Before the epoch the fraction still counts forward from the second below.
      {-1 * kSecond + 250000, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.250000Z"},
      {-1, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.999999Z"},
      {-62135596800 * kSecond, "0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"},
      {253402300799 * kSecond, "9999-12-31T23:59:59Z", "9999-12-31T23:59:59.000000Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.micros);
    EXPECT_EQ(formatTimestamp(Timestamp{c.micros}), c.seconds);
    EXPECT_EQ(formatMicroTimestamp(Timestamp{c.micros}), c.micro);
  }
}

TEST(Timestamp, TimestampsRoundTripEveryDayOfFourCenturies) {
  // Walk day by day from 1600 to 2400 (two 400-year cycles around the epoch, leap days included)
  // so the civil-date arithmetic is checked against itself in both directions.
  const int64_t start = -11676096000;  // 1600-01-01T00:00:00Z
  const int64_t end = 13569465600;     // 2400-01-01T00:00:00Z
  int64_t previous_day = 0;
  for (int64_t s = start; s < end; s += 86400) {
    const Timestamp t{s * kSecond + 42};
    const std::string text = formatMicroTimestamp(t);
    auto back = parseTimestamp(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.error().message;
    ASSERT_EQ(back->micros, t.micros) << text;
    const int day = std::stoi(text.substr(8, 2));
    ASSERT_TRUE(day == previous_day + 1 || day == 1) << text;
    previous_day = day;
  }
}

TEST(Timestamp, ToTimestampTruncatesSystemTimeToMicroseconds) {
  const util::SystemTime t{std::chrono::seconds(1714557600) +
                           std::chrono::nanoseconds(123'456'789)};
  EXPECT_EQ(toTimestamp(t).micros, 1714557600 * kSecond + 123456);
  EXPECT_EQ(formatMicroTimestamp(toTimestamp(t)), "2024-05-01T10:00:00.123456Z");
  util::FakeClock clock;
  EXPECT_EQ(formatTimestamp(toTimestamp(clock.systemNow())), "2024-01-01T01:00:00Z");
}

}  // namespace
}  // namespace berth::api
