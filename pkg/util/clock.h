#pragma once
// Clock: time as a dependency (Envoy's TimeSource, kube's clock.Clock). Intervals (backoff, TTLs,
// lease renewals) are measured on the monotonic clock, which never jumps; the system clock gives
// the timestamps shown to users. Core units take a `Clock&` so tests drive time by hand with
// FakeClock instead of sleeping.

#include <atomic>
#include <chrono>

namespace berth::util {

using MonotonicTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::steady_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  // For computing intervals.
  virtual MonotonicTime monotonicNow() const = 0;
  // For timestamps presented to users and written to the API.
  virtual SystemTime systemNow() const = 0;
};

class RealClock final : public Clock {
 public:
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
  SystemTime systemNow() const override { return std::chrono::system_clock::now(); }
};

// The process-wide real clock (stateless, so sharing it is safe).
inline Clock& realClock() {
  static RealClock clock;
  return clock;
}

// A clock that moves only when told; both readings advance together. Safe to read from other
// threads while a test advances it.
class FakeClock final : public Clock {
 public:
  // Starts at an arbitrary fixed point (2024-01-01T00:00:00Z on the system clock).
  FakeClock() = default;

  MonotonicTime monotonicNow() const override { return MonotonicTime(Duration(offset_.load())); }
  SystemTime systemNow() const override {
    return SystemTime(
        std::chrono::duration_cast<SystemTime::duration>(kSystemEpoch + Duration(offset_.load())));
  }

  void advance(Duration d) { offset_ += d.count(); }

 private:
  static constexpr std::chrono::seconds kSystemEpoch{1704067200};
  // Starts at one hour so that "now minus a few minutes" stays positive on the monotonic clock.
  std::atomic<Duration::rep> offset_{
      std::chrono::duration_cast<Duration>(std::chrono::hours(1)).count()};
};

}  // namespace berth::util
