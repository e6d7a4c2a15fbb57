#include "pkg/client/rate_limiter.h"

#include <algorithm>
#include <utility>

namespace berth::client {

TokenBucket::TokenBucket(double qps, int burst, util::Clock& clock)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock),
      tokens_(burst_),
      last_(clock_.monotonicNow()) {}

Duration TokenBucket::reserve() {
  if (qps_ <= 0) {
    return Duration::zero();
  }
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.monotonicNow();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) {
    return Duration::zero();
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::wait(std::stop_token stop) {
  const Duration d = reserve();
  if (d <= Duration::zero()) {
    return !stop.stop_requested();
  }
  return clock_.sleepFor(d, std::move(stop));
}

}  // namespace berth::client
