// Quantity parsing ("100m", "1.5Gi", "2e3"): the text of every resource request, limit, capacity
// and allocatable berth reads.
// Invariants: the canonical form of a parsed quantity parses to an equal quantity and is its own
// canonical form (upstream's String() round-trips); value(), milliValue() and arithmetic on any
// parsed quantity are defined behaviour (UBSan checks the 128-bit arithmetic).

#include "fuzz/fuzz_check.h"
#include "pkg/resource/quantity.h"

using berth::fuzz::check;
using berth::resource::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parsed = Quantity::parse(berth::fuzz::asText(data, size));
  if (!parsed.ok()) {
    return 0;
  }
  const Quantity& q = *parsed;
  static_cast<void>(q.value());
  static_cast<void>(q.milliValue());

  const std::string canonical = q.toString();
  const auto again = Quantity::parse(canonical);
  check(again.ok(), "the canonical form parses", canonical);
  check(*again == q, "the canonical form is the same quantity", canonical);
  check(again->toString() == canonical, "the canonical form is canonical", canonical);

  Quantity sum = q;
  sum.add(q);
  sum.sub(q);
  sum.sub(q);
  static_cast<void>(sum.cmp(q));
  static_cast<void>(sum.toString());
  static_cast<void>(Quantity::fromMilli(q.milliValue(), q.format()).toString());
  static_cast<void>(Quantity::fromValue(q.value(), q.format()).toString());
  return 0;
}
