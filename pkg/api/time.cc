// RFC 3339 timestamps as metav1.Time and metav1.MicroTime write and read them. The calendar math is
// done here on purpose: timegm and strptime depend on the C library and the process locale.

#include "pkg/api/time.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace berth::api {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;
constexpr int64_t kDaysPer400Years = 146'097;
// Days from 0000-01-01 to 1970-01-01 in the proleptic Gregorian calendar.
constexpr int64_t kUnixEpochDay = 719'528;

bool isLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int daysInMonth(int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && isLeapYear(y) ? 29 : kDays[m - 1];
}

// Days from 0000-01-01 to January 1st of year y (0 <= y).
int64_t daysBeforeYear(int64_t y) {
  if (y == 0) {
    return 0;
  }
  const int64_t p = y - 1;
  return 365 * y + p / 4 - p / 100 + p / 400 + 1;  // +1: year 0 is a leap year
}

int64_t daysBeforeMonth(int64_t y, int m) {
  int64_t days = 0;
  for (int i = 1; i < m; ++i) {
    days += daysInMonth(y, i);
  }
  return days;
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

struct Civil {
  int64_t year;
  int month;
  int day;
  int hour;
  int minute;
  int second;
  int64_t micros;
};

Civil toCivil(Timestamp t) {
  const int64_t total_seconds = floorDiv(t.micros, kMicrosPerSecond);
  const int64_t micros = t.micros - total_seconds * kMicrosPerSecond;
  const int64_t day_number = floorDiv(total_seconds, kSecondsPerDay);
  int64_t second_of_day = total_seconds - day_number * kSecondsPerDay;

  // Shift into whole 400-year cycles so the year search below only sees 0 <= days < one cycle.
  const int64_t days_since_year0 = day_number + kUnixEpochDay;
  const int64_t cycles = floorDiv(days_since_year0, kDaysPer400Years);
  int64_t day_in_cycle = days_since_year0 - cycles * kDaysPer400Years;
  int64_t year = day_in_cycle / 366;
  while (daysBeforeYear(year + 1) <= day_in_cycle) {
    ++year;
  }
  day_in_cycle -= daysBeforeYear(year);
  int month = 1;
  while (day_in_cycle >= daysInMonth(year, month)) {
    day_in_cycle -= daysInMonth(year, month);
    ++month;
  }
  Civil c{};
  c.year = year + cycles * 400;
  c.month = month;
  c.day = static_cast<int>(day_in_cycle) + 1;
  c.hour = static_cast<int>(second_of_day / 3600);
  second_of_day %= 3600;
  c.minute = static_cast<int>(second_of_day / 60);
  c.second = static_cast<int>(second_of_day % 60);
  c.micros = micros;
  return c;
}

std::string format(Timestamp t, bool with_micros) {
  const Civil c = toCivil(t);
  char buf[64];
  if (with_micros) {
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                  static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second,
                  static_cast<long long>(c.micros));
  } else {
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02dZ",
                  static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second);
  }
  return buf;
}

// A cursor over the text that reads fixed-width digit fields, as Go's RFC 3339 layout requires.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool digits(int width, int& out) {
    if (text_.size() - pos_ < static_cast<size_t>(width)) {
      return false;
    }
    int v = 0;
    for (int i = 0; i < width; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') {
        return false;
      }
      v = v * 10 + (c - '0');
    }
    pos_ += width;
    out = v;
    return true;
  }
  bool literal(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool isDigit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip() { ++pos_; }
  bool done() const { return pos_ == text_.size(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

util::Result<Timestamp> parseTimestamp(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return util::invalidArgument("invalid RFC 3339 time \"" + std::string(text) +
                                 "\": " + std::string(why));
  };
  Scanner s(text);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!s.digits(4, year) || !s.literal('-') || !s.digits(2, month) || !s.literal('-') ||
      !s.digits(2, day) || !s.literal('T') || !s.digits(2, hour) || !s.literal(':') ||
      !s.digits(2, minute) || !s.literal(':') || !s.digits(2, second)) {
    return fail("want the form 2006-01-02T15:04:05Z07:00");
  }
  if (month < 1 || month > 12) {
    return fail("month out of range");
  }
  if (day < 1 || day > daysInMonth(year, month)) {
    return fail("day out of range");
  }
  if (hour > 23) {
    return fail("hour out of range");
  }
  if (minute > 59) {
    return fail("minute out of range");
  }
  if (second > 59) {
    return fail("second out of range");
  }
  // Go accepts any number of fraction digits (after '.' or ','); we keep microseconds.
  int64_t micros = 0;
  if (s.peek() == '.' || s.peek() == ',') {
    s.skip();
    if (!s.isDigit()) {
      return fail("want digits after the decimal point");
    }
    int64_t scale = 100'000;
    while (s.isDigit()) {
      micros += (s.peek() - '0') * scale;
      scale /= 10;
      s.skip();
    }
  }
  int offset_seconds = 0;
  if (s.literal('Z')) {
    // UTC
  } else if (s.peek() == '+' || s.peek() == '-') {
    const int sign = s.peek() == '-' ? -1 : 1;
    s.skip();
    int oh = 0, om = 0;
    if (!s.digits(2, oh) || !s.literal(':') || !s.digits(2, om)) {
      return fail("want a time zone offset like +01:00");
    }
    if (oh > 23 || om > 59) {
      return fail("time zone offset out of range");
    }
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else {
    return fail("want a time zone: Z or an offset like +01:00");
  }
  if (!s.done()) {
    return fail("extra text after the time zone");
  }
  const int64_t days =
      daysBeforeYear(year) + daysBeforeMonth(year, month) + (day - 1) - kUnixEpochDay;
  const int64_t seconds =
      days * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset_seconds;
  return Timestamp{seconds * kMicrosPerSecond + micros};
}

// metav1.Time has second precision: the fraction is dropped, not rounded, as Go's Format does.
std::string formatTimestamp(Timestamp t) { return format(t, false); }

std::string formatMicroTimestamp(Timestamp t) { return format(t, true); }

Timestamp toTimestamp(util::SystemTime t) {
  return Timestamp{
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count()};
}

}  // namespace berth::api
