#include "pkg/resource/quantity.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace berth::resource {
namespace {

// numeric_limits is not specialised for __int128 in strict (non-GNU) C++ mode.
using u128 = unsigned __int128;
using i128 = __int128;

constexpr int64_t kNanosPerUnit = 1'000'000'000;
constexpr int64_t kNanosPerMilli = 1'000'000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

constexpr std::array<u128, 39> makePowersOfTen() {
  std::array<u128, 39> powers{};
  u128 value = 1;
  for (u128& p : powers) {
    p = value;
    value *= 10;
  }
  return powers;
}
constexpr std::array<u128, 39> kPow10 = makePowersOfTen();  // 10^0 .. 10^38

// Beyond this magnitude (10^29 units) values saturate; it keeps every sum of two within __int128.
constexpr u128 kMaxNanos = kPow10[38];
// Upstream's parser caps BinarySI quantities at 2^63-1 units.
constexpr u128 kMaxBinaryNanos = static_cast<u128>(kInt64Max) * kNanosPerUnit;
// Upstream keeps exponents in an int32 scale that it negates, so it accepts ±(2^31-1).
constexpr int64_t kMaxExponent = std::numeric_limits<int32_t>::max();
// Inputs come from API objects and files: keep error messages bounded.
constexpr size_t kMaxQuotedBytes = 64;

util::Error invalidQuantity(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string message = "invalid quantity \"";
  const size_t shown = std::min(text.size(), kMaxQuotedBytes);
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      message += '\\';
      message += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      message += static_cast<char>(c);
    } else {
      message += "\\x";
      message += kHex[c >> 4];
      message += kHex[c & 0xf];
    }
  }
  if (shown < text.size()) {
    message += "...";
  }
  message += '"';
  return util::invalidArgument(std::move(message));
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The letters upstream's scanner collects into a suffix before an optional signed integer.
bool isSuffixLetter(char c) {
  switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P':
      return true;
    default:
      return false;
  }
}

struct Suffix {
  int32_t exponent = 0;  // of 10, or of 2 when binary
  bool binary = false;
  Quantity::Format format = Quantity::Format::DecimalSI;
};

// Interprets a scanned suffix as upstream's suffixer does: a named suffix (case-sensitive), or
// e/E followed by a signed decimal integer within ±(2^31-1).
bool interpretSuffix(std::string_view s, Suffix& out) {
  using Format = Quantity::Format;
  if (s.size() <= 1) {
    int32_t exponent = 0;
    switch (s.empty() ? '\0' : s[0]) {
      case '\0':
        exponent = 0;
        break;
      case 'n':
        exponent = -9;
        break;
      case 'u':
        exponent = -6;
        break;
      case 'm':
        exponent = -3;
        break;
      case 'k':
        exponent = 3;
        break;
      case 'M':
        exponent = 6;
        break;
      case 'G':
        exponent = 9;
        break;
      case 'T':
        exponent = 12;
        break;
      case 'P':
        exponent = 15;
        break;
      case 'E':
        exponent = 18;
        break;
      default:
        return false;
    }
    out = Suffix{exponent, false, Format::DecimalSI};
    return true;
  }
  if (s.size() == 2 && s[1] == 'i') {
    int32_t exponent = 0;
    switch (s[0]) {
      case 'K':
        exponent = 10;
        break;
      case 'M':
        exponent = 20;
        break;
      case 'G':
        exponent = 30;
        break;
      case 'T':
        exponent = 40;
        break;
      case 'P':
        exponent = 50;
        break;
      case 'E':
        exponent = 60;
        break;
      default:
        return false;
    }
    out = Suffix{exponent, true, Format::BinarySI};
    return true;
  }
  if (s[0] != 'e' && s[0] != 'E') {
    return false;
  }
  size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) {
    return false;
  }
  int64_t exponent = 0;
  for (; i < s.size(); ++i) {
    if (!isDigit(s[i])) {
      return false;
    }
    exponent = exponent * 10 + (s[i] - '0');
    if (exponent > kMaxExponent) {
      return false;
    }
  }
  out =
      Suffix{static_cast<int32_t>(negative ? -exponent : exponent), false, Format::DecimalExponent};
  return true;
}

// Sums digit * 10^weight (weight in powers of ten of a nano-unit), remembering whether a non-zero
// digit fell below 1n (the magnitude then rounds up, as upstream does) or at/above 10^38 nanos.
class NanoAccumulator {
 public:
  void add(unsigned digit, int64_t weight) {
    if (digit == 0) {
      return;
    }
    if (weight < 0) {
      inexact_ = true;
    } else if (weight >= 38) {
      saturated_ = true;
    } else {
      // Each weight is added once, so the sum stays below 10^38.
      sum_ += digit * kPow10[weight];
    }
  }

  u128 magnitude(u128 limit) const {
    if (saturated_) {
      return limit;
    }
    const u128 rounded = sum_ + (inexact_ ? 1 : 0);
    return std::min(rounded, limit);
  }

 private:
  u128 sum_ = 0;
  bool inexact_ = false;
  bool saturated_ = false;
};

u128 magnitudeOf(i128 v) { return v < 0 ? u128{0} - static_cast<u128>(v) : static_cast<u128>(v); }

i128 clampNanos(i128 v) {
  const auto max = static_cast<i128>(kMaxNanos);
  return v > max ? max : (v < -max ? -max : v);
}

i128 saturatingAdd(i128 a, i128 b) {
  i128 sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return a > 0 ? static_cast<i128>(kMaxNanos) : -static_cast<i128>(kMaxNanos);
  }
  return clampNanos(sum);
}

// ceil(|nanos| / per) with the sign of nanos (away from zero), saturated to int64.
int64_t scaledAwayFromZero(i128 nanos, int64_t per) {
  const u128 magnitude = magnitudeOf(nanos);
  u128 quotient = 0;
  bool remainder = false;
  if (magnitude <= std::numeric_limits<uint64_t>::max()) {
    // Typical quantities fit 64 bits; this avoids a slow 128-bit division.
    const auto narrow = static_cast<uint64_t>(magnitude);
    quotient = narrow / static_cast<uint64_t>(per);
    remainder = narrow % static_cast<uint64_t>(per) != 0;
  } else {
    quotient = magnitude / static_cast<u128>(per);
    remainder = magnitude % static_cast<u128>(per) != 0;
  }
  if (remainder) {
    ++quotient;
  }
  if (nanos >= 0) {
    return quotient > static_cast<u128>(kInt64Max) ? kInt64Max : static_cast<int64_t>(quotient);
  }
  if (quotient > static_cast<u128>(kInt64Max)) {
    return kInt64Min;
  }
  return -static_cast<int64_t>(quotient);
}

void appendUnsigned(std::string& out, u128 v) {
  constexpr uint64_t kChunk = 10'000'000'000'000'000'000ULL;  // 10^19
  char buf[24];
  if (v <= std::numeric_limits<uint64_t>::max()) {
    const auto res = std::to_chars(buf, buf + sizeof(buf), static_cast<uint64_t>(v));
    out.append(buf, res.ptr);
    return;
  }
  appendUnsigned(out, v / kChunk);
  const auto low = static_cast<uint64_t>(v % kChunk);
  const auto res = std::to_chars(buf, buf + sizeof(buf), low);
  out.append(19 - static_cast<size_t>(res.ptr - buf), '0');
  out.append(buf, res.ptr);
}

// Appends a non-zero magnitude in upstream's canonical decimal form: no fractional digits, the
// exponent the largest multiple of 3 that keeps the mantissa whole, then the suffix.
void appendDecimal(std::string& out, u128 nanos, Quantity::Format format) {
  u128 mantissa = nanos;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  const int excess = ((exponent % 3) + 3) % 3;
  mantissa *= kPow10[excess];  // cannot overflow: at least `excess` zeros were stripped
  exponent -= excess;
  appendUnsigned(out, mantissa);

  // The exponent never falls below -9: it starts there and only rounds down to a multiple of 3.
  if (format == Quantity::Format::DecimalSI && exponent <= 18) {
    static constexpr std::array<std::string_view, 10> kDecimalSuffixes = {"n", "u", "m", "",  "k",
                                                                          "M", "G", "T", "P", "E"};
    out += kDecimalSuffixes[static_cast<size_t>((exponent + 9) / 3)];
    return;
  }
  // DecimalExponent, or DecimalSI beyond its suffixes: upstream falls back to e-notation.
  if (exponent != 0) {
    out += 'e';
    out += std::to_string(exponent);
  }
}

}  // namespace

util::Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) {
    return invalidQuantity(text);
  }
  // Scan as upstream does: [+-] digits [. digits] then [suffix letters][+-][digits] to the end.
  // Digits are optional on both sides of '.', so "+", "." and "Ki" scan (and parse) as zero.
  const size_t end = text.size();
  size_t pos = 0;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    ++pos;
  }
  const size_t whole_begin = pos;
  while (pos < end && isDigit(text[pos])) {
    ++pos;
  }
  const std::string_view whole = text.substr(whole_begin, pos - whole_begin);
  std::string_view fraction;
  if (pos < end && text[pos] == '.') {
    const size_t fraction_begin = ++pos;
    while (pos < end && isDigit(text[pos])) {
      ++pos;
    }
    fraction = text.substr(fraction_begin, pos - fraction_begin);
  }
  const size_t suffix_begin = pos;
  while (pos < end && isSuffixLetter(text[pos])) {
    ++pos;
  }
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) {
    ++pos;
  }
  while (pos < end && isDigit(text[pos])) {
    ++pos;
  }
  Suffix suffix;
  if (pos != end || !interpretSuffix(text.substr(suffix_begin), suffix)) {
    return invalidQuantity(text);
  }

  // Walk the digits from the least significant one, adding each at its power of ten in nanos.
  // Binary suffixes multiply by 2^exponent on the way (carry fits: digit * 2^60 + carry < 2^64).
  NanoAccumulator accumulator;
  int64_t weight =
      9 - static_cast<int64_t>(fraction.size()) + (suffix.binary ? 0 : suffix.exponent);
  const uint64_t multiplier = suffix.binary ? (uint64_t{1} << suffix.exponent) : 1;
  uint64_t carry = 0;
  auto step = [&](char c) {
    const uint64_t v = static_cast<uint64_t>(c - '0') * multiplier + carry;
    accumulator.add(static_cast<unsigned>(v % 10), weight++);
    carry = v / 10;
  };
  std::for_each(fraction.rbegin(), fraction.rend(), step);
  std::for_each(whole.rbegin(), whole.rend(), step);
  for (; carry != 0; carry /= 10) {
    accumulator.add(static_cast<unsigned>(carry % 10), weight++);
  }

  const u128 magnitude = accumulator.magnitude(suffix.binary ? kMaxBinaryNanos : kMaxNanos);
  Format format = suffix.format;
  if (format == Format::BinarySI && magnitude != 0 && magnitude < kNanosPerUnit) {
    format = Format::DecimalSI;  // upstream keeps BinarySI only for magnitudes of at least 1
  }
  const auto nanos = static_cast<i128>(magnitude);
  return Quantity(negative ? -nanos : nanos, format);
}

Quantity Quantity::fromMilli(int64_t milli, Format format) {
  return Quantity(static_cast<i128>(milli) * kNanosPerMilli, format);
}

Quantity Quantity::fromValue(int64_t value, Format format) {
  return Quantity(static_cast<i128>(value) * kNanosPerUnit, format);
}

int64_t Quantity::value() const { return scaledAwayFromZero(nanos_, kNanosPerUnit); }

int64_t Quantity::milliValue() const { return scaledAwayFromZero(nanos_, kNanosPerMilli); }

int Quantity::cmp(const Quantity& other) const {
  return nanos_ < other.nanos_ ? -1 : (nanos_ > other.nanos_ ? 1 : 0);
}

Quantity& Quantity::add(const Quantity& other) {
  if (nanos_ == 0) {
    format_ = other.format_;
  }
  nanos_ = saturatingAdd(nanos_, other.nanos_);
  return *this;
}

Quantity& Quantity::sub(const Quantity& other) {
  if (nanos_ == 0) {
    format_ = other.format_;
  }
  nanos_ = saturatingAdd(nanos_, -other.nanos_);  // |other| <= 10^38, so negation is safe
  return *this;
}

std::string Quantity::toString() const {
  if (nanos_ == 0) {
    return "0";
  }
  std::string out;
  if (nanos_ < 0) {
    out += '-';
  }
  const u128 magnitude = magnitudeOf(nanos_);
  Format format = format_;
  if (format == Format::BinarySI) {
    // Upstream writes |v| < 1024 and non-integers in decimal rather than round them.
    if (magnitude < static_cast<u128>(1024) * kNanosPerUnit || magnitude % kNanosPerUnit != 0) {
      format = Format::DecimalSI;
    } else {
      u128 units = magnitude / kNanosPerUnit;
      size_t power = 0;
      while (units % 1024 == 0) {
        units /= 1024;
        ++power;
      }
      static constexpr std::array<std::string_view, 7> kBinarySuffixes = {"",   "Ki", "Mi", "Gi",
                                                                          "Ti", "Pi", "Ei"};
      if (power < kBinarySuffixes.size()) {
        appendUnsigned(out, units);
        out += kBinarySuffixes[power];
        return out;
      }
      // Past Ei there is no binary suffix: upstream falls back to exact e-notation.
      format = Format::DecimalExponent;
    }
  }
  appendDecimal(out, magnitude, format);
  return out;
}

}  // namespace berth::resource
