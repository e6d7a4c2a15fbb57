#pragma once
// Jittered exponential backoff for retry loops, on an injected clock and random source so tests
// never sleep or guess.
//
// Backoff is client-go's jittered exponential backoff (wait.Backoff with a reset, as the
// reflector's NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)): each failure waits
// base * (1 + jitter * u), u uniform in [0, 1), then base doubles up to `max`; after `resetAfter`
// without a failure the base starts from `initial` again.

#include <chrono>

#include "pkg/util/clock.h"
#include "pkg/util/random.h"

namespace berth::client {

using Duration = util::Duration;
using TimePoint = util::MonotonicTime;

struct BackoffOptions {
  Duration initial = std::chrono::milliseconds(800);
  Duration max = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  Duration resetAfter = std::chrono::minutes(2);
};

class Backoff {
 public:
  // The clock and random source must outlive the backoff.
  explicit Backoff(BackoffOptions options = {}, util::Clock& clock = util::realClock(),
                   util::Random& random = util::defaultRandom());

  // The wait before the next attempt; advances the base.
  Duration next();
  // Starts again from `initial` (e.g. after a success that proves the server is back).
  void reset();

 private:
  BackoffOptions options_;
  util::Clock& clock_;
  util::Random& random_;
  Duration base_;
  TimePoint last_{};
  bool started_ = false;
};

}  // namespace berth::client
