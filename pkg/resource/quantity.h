#pragma once
// Quantity: Kubernetes' resource.Quantity, a fixed-point decimal with a unit suffix ("100m",
// "1.5Gi", "2e3"). Parsing follows upstream's grammar and rejections; arithmetic is exact. The
// scheduler reads quantities as integers: CPU in milli-units and everything else in units, both
// rounded up (away from zero) as upstream's MilliValue() and Value() do.
//
// Representation: a whole number of nano-units in an __int128. Upstream never keeps anything finer
// than 1n (parsing rounds the magnitude up to it), so this is exact for every value whose magnitude
// is at most 10^29 units. Larger magnitudes, which upstream keeps as big decimals,
// saturate at ±10^29 here; BinarySI values saturate at 2^63-1 units as upstream's parser does.

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::resource {

class Quantity {
 public:
  // How the quantity is written back: the suffix family it was parsed with.
  enum class Format { DecimalSI, BinarySI, DecimalExponent };

  Quantity() = default;

  // Parses upstream's grammar: <signedNumber><suffix>, suffix one of "", n u m k M G T P E,
  // Ki Mi Gi Ti Pi Ei, or e/E<signedNumber>. Accepts exactly what upstream's ParseQuantity accepts
  // (including its oddities: "+", "-", "." and a bare suffix such as "Ki" parse as zero). The error
  // message is exactly `invalid quantity "<text>"` (text escaped, cut at 64 bytes); callers prefix
  // the object and field.
  static util::Result<Quantity> parse(std::string_view text);

  static Quantity fromMilli(int64_t milli, Format format = Format::DecimalSI);
  static Quantity fromValue(int64_t value, Format format = Format::DecimalSI);

  // The value rounded up to an integer (saturating at int64 limits), as upstream's Value().
  int64_t value() const;
  // The value times 1000 rounded up (saturating), as upstream's MilliValue().
  int64_t milliValue() const;

  bool isZero() const { return nanos_ == 0; }
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }
  Format format() const { return format_; }

  // Exact comparison and arithmetic (saturating at ±10^29 units). Like upstream, adding to or
  // subtracting from a zero quantity takes the other operand's format.
  int cmp(const Quantity& other) const;
  Quantity& add(const Quantity& other);
  Quantity& sub(const Quantity& other);

  // Canonical form as upstream's String(): "100m", "1536Mi", "1500", "1e3" …
  std::string toString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.cmp(b) == 0; }

 private:
  Quantity(__int128 nanos, Format format) : nanos_(nanos), format_(format) {}

  // value = nanos_ * 10^-9, |nanos_| <= kMaxNanos (10^38).
  __int128 nanos_ = 0;
  Format format_ = Format::DecimalSI;
};

}  // namespace berth::resource
