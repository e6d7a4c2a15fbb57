#pragma once
// Time and chance for retry loops, injectable so tests never sleep or guess.
//
// Backoff is client-go's jittered exponential backoff (wait.Backoff with a reset, as the
// reflector's NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)): each failure waits
// base * (1 + jitter * u), u uniform in [0, 1), then base doubles up to `max`; after `resetAfter`
// without a failure the base starts from `initial` again.

#include <chrono>
#include <functional>
#include <stop_token>

#include "pkg/util/sleep.h"

namespace berth::client {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;
// The monotonic clock; tests pass a fake one.
using SteadyClock = std::function<TimePoint()>;
SteadyClock realClock();

// A uniform draw in [0, 1); tests pass a fixed sequence.
using Random = std::function<double()>;
Random defaultRandom();

struct BackoffOptions {
  Duration initial = std::chrono::milliseconds(800);
  Duration max = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  Duration resetAfter = std::chrono::minutes(2);
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, SteadyClock clock = realClock(),
                   Random random = defaultRandom());

  // The wait before the next attempt; advances the base.
  Duration next();
  // Starts again from `initial` (e.g. after a success that proves the server is back).
  void reset();

 private:
  BackoffOptions options_;
  SteadyClock clock_;
  Random random_;
  Duration base_;
  TimePoint last_{};
  bool started_ = false;
};

using util::sleepFor;
// util::sleepFor, or a test's recorder.
using Sleep = std::function<bool(Duration, std::stop_token)>;

}  // namespace berth::client
