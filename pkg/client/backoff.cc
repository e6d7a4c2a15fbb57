#include "pkg/client/backoff.h"

#include <algorithm>

namespace berth::client {

Backoff::Backoff(BackoffOptions options, util::Clock& clock, util::Random& random)
    : options_(options), clock_(clock), random_(random), base_(options.initial) {}

Duration Backoff::next() {
  const TimePoint now = clock_.monotonicNow();
  if (started_ && now - last_ >= options_.resetAfter) {
    base_ = options_.initial;
  }
  started_ = true;
  last_ = now;
  const Duration wait = std::chrono::duration_cast<Duration>(
      base_ * (1.0 + options_.jitter * std::clamp(random_.uniform(), 0.0, 1.0)));
  base_ = std::min(std::chrono::duration_cast<Duration>(base_ * options_.factor), options_.max);
  return wait;
}

void Backoff::reset() {
  base_ = options_.initial;
  started_ = false;
}

}  // namespace berth::client
