#include "pkg/util/duration.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <string>

namespace berth::util {
namespace {

// Go's %q for the ASCII text durations are made of.
std::string goQuote(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

Result<std::chrono::nanoseconds> parseGoDuration(std::string_view text) {
  const auto invalid = [text] {
    return invalidArgument("time: invalid duration " + goQuote(text));
  };
  std::string_view s = text;
  if (s.empty()) {
    return invalid();
  }
  bool negative = false;
  if (s.front() == '-' || s.front() == '+') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") {
    return std::chrono::nanoseconds(0);
  }
  if (s.empty()) {
    return invalid();
  }
  struct Unit {
    std::string_view name;
    uint64_t nanos;
  };
  static constexpr Unit kUnits[] = {
      {"ns", 1},
      {"us", 1000},
      {"\xC2\xB5s", 1000},  // U+00B5 micro sign
      {"\xCE\xBCs", 1000},  // U+03BC Greek mu
      {"ms", 1000'000},
      {"s", 1000'000'000},
      {"m", 60ULL * 1000'000'000},
      {"h", 3600ULL * 1000'000'000},
  };
  constexpr uint64_t kLimit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1;
  uint64_t total = 0;
  while (!s.empty()) {
    size_t i = 0;
    uint64_t whole = 0;
    bool anyDigit = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      anyDigit = true;
      if (whole > (kLimit - (s[i] - '0')) / 10) {
        return invalid();
      }
      whole = whole * 10 + (s[i] - '0');
      ++i;
    }
    uint64_t frac = 0;
    uint64_t scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        anyDigit = true;
        if (scale < 1000'000'000'000'000'000ULL) {  // more digits add nothing below a nanosecond
          frac = frac * 10 + (s[i] - '0');
          scale *= 10;
        }
        ++i;
      }
    }
    if (!anyDigit) {
      return invalid();
    }
    size_t unitEnd = i;
    while (unitEnd < s.size() && s[unitEnd] != '.' &&
           !std::isdigit(static_cast<unsigned char>(s[unitEnd]))) {
      ++unitEnd;
    }
    std::string_view unitName = s.substr(i, unitEnd - i);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (u.name == unitName) {
        unit = &u;
      }
    }
    if (unitName.empty()) {
      return invalidArgument("time: missing unit in duration " + goQuote(text));
    }
    if (unit == nullptr) {
      return invalidArgument("time: unknown unit " + goQuote(unitName) + " in duration " +
                             goQuote(text));
    }
    if (whole > kLimit / unit->nanos) {
      return invalid();
    }
    uint64_t value = whole * unit->nanos;
    // frac < scale <= 1e18 and nanos <= 3.6e12: compute in long double to avoid overflow.
    value += static_cast<uint64_t>(static_cast<long double>(frac) * unit->nanos / scale);
    if (value > kLimit || total > kLimit - value) {
      return invalid();
    }
    total += value;
    s.remove_prefix(unitEnd);
  }
  if (total == kLimit) {
    if (negative) {
      return std::chrono::nanoseconds(std::numeric_limits<int64_t>::min());
    }
    return invalid();
  }
  return std::chrono::nanoseconds(negative ? -static_cast<int64_t>(total)
                                           : static_cast<int64_t>(total));
}

std::string formatGoDuration(int64_t millis) {
  if (millis == 0) return "0s";
  const std::string sign = millis < 0 ? "-" : "";
  const uint64_t ms = millis < 0 ? -static_cast<uint64_t>(millis) : static_cast<uint64_t>(millis);
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  // Every unit below the largest one is written: "1h0m5s", "5m0s".
  const uint64_t hours = ms / 3'600'000;
  const uint64_t minutes = ms / 60'000 % 60;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += std::to_string(ms / 1000 % 60);
  if (const uint64_t frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(frac + 1000).substr(1);  // three digits
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + "s";
}

}  // namespace berth::util
