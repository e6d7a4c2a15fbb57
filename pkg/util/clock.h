#pragma once
// Clock: time as a dependency (Envoy's TimeSource, kube's clock.Clock). Intervals (backoff, TTLs,
// lease renewals) are measured on the monotonic clock, which never jumps; the system clock gives
// the timestamps shown to users. Waits go through the clock too, so every unit that takes a
// `Clock&` can be driven by FakeClock: its sleeps advance its time and return at once (kube's
// FakeClock.Sleep steps the clock), and no test waits out a timer.

#include <atomic>
#include <chrono>
#include <mutex>
#include <stop_token>
#include <vector>

#include "pkg/util/sleep.h"

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
  // Waits `d` unless `stop` is requested first; false when stopped (util::sleepFor's contract).
  virtual bool sleepFor(Duration d, std::stop_token stop) = 0;
};

class RealClock final : public Clock {
 public:
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
  SystemTime systemNow() const override { return std::chrono::system_clock::now(); }
  bool sleepFor(Duration d, std::stop_token stop) override {
    return util::sleepFor(d, std::move(stop));
  }
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
  // Starts at an arbitrary fixed point (2024-01-01T01:00:00Z on the system clock).
  FakeClock() = default;
  // Starts with systemNow() == start.
  explicit FakeClock(SystemTime start)
      : system_base_(std::chrono::duration_cast<Duration>(start.time_since_epoch()) - kStart) {}

  MonotonicTime monotonicNow() const override { return MonotonicTime(Duration(offset_.load())); }
  SystemTime systemNow() const override {
    return SystemTime(
        std::chrono::duration_cast<SystemTime::duration>(system_base_ + Duration(offset_.load())));
  }
  // Records the wait and advances by it at once; a stopped wait neither advances nor is recorded.
  bool sleepFor(Duration d, std::stop_token stop) override {
    if (stop.stop_requested()) return false;
    {
      std::lock_guard lock(mu_);
      sleeps_.push_back(d);
    }
    advance(d);
    return true;
  }

  void advance(Duration d) { offset_ += d.count(); }
  // Every wait sleepFor was asked for, in order.
  std::vector<Duration> sleeps() const {
    std::lock_guard lock(mu_);
    return sleeps_;
  }

 private:
  // Starts at one hour so that "now minus a few minutes" stays positive on the monotonic clock.
  static constexpr Duration kStart = std::chrono::hours(1);
  // The system time at monotonic zero.
  Duration system_base_ = std::chrono::seconds(1704067200);
  std::atomic<Duration::rep> offset_{kStart.count()};
  mutable std::mutex mu_;
  std::vector<Duration> sleeps_;
};

}  // namespace berth::util
