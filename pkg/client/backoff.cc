#include "pkg/client/backoff.h"

#include <algorithm>
#include <memory>
#include <random>

namespace berth::client {

SteadyClock realClock() {
  return [] { return std::chrono::steady_clock::now(); };
}

Random defaultRandom() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  auto mu = std::make_shared<std::mutex>();
  return [engine, mu] {
    std::lock_guard<std::mutex> lock(*mu);
    return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
  };
}

Backoff::Backoff(BackoffOptions options, SteadyClock clock, Random random)
    : options_(options),
      clock_(std::move(clock)),
      random_(std::move(random)),
      base_(options.initial) {}

Duration Backoff::next() {
  const TimePoint now = clock_();
  if (started_ && now - last_ >= options_.resetAfter) {
    base_ = options_.initial;
  }
  started_ = true;
  last_ = now;
  const Duration wait = std::chrono::duration_cast<Duration>(
      base_ * (1.0 + options_.jitter * std::clamp(random_(), 0.0, 1.0)));
  base_ = std::min(std::chrono::duration_cast<Duration>(base_ * options_.factor), options_.max);
  return wait;
}

void Backoff::reset() {
  base_ = options_.initial;
  started_ = false;
}

}  // namespace berth::client
