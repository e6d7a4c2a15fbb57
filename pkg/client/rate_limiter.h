#pragma once
// Client-side rate limiting, as client-go's flowcontrol.NewTokenBucketRateLimiter: a bucket of
// `burst` tokens refilled at `qps` per second; each request takes one token, waiting for it when
// the bucket is empty. kube-scheduler's defaults are --kube-api-qps=50 --kube-api-burst=100.
// Tokens are reserved in arrival order, so concurrent callers queue fairly.

#include <mutex>
#include <stop_token>

#include "pkg/client/backoff.h"

namespace berth::client {

class TokenBucket {
 public:
  // qps <= 0 disables limiting (client-go disables it for a negative QPS; RestClient maps 0 to
  // client-go's default of 5 before getting here).
  // Time is read from, and waits are slept on, `clock`, which must outlive the bucket.
  TokenBucket(double qps, int burst, util::Clock& clock = util::realClock());

  // Takes a token, reserving a future one when none is left; returns how long the caller must
  // wait before sending (zero when a token was available).
  Duration reserve();
  // reserve() and then sleep on the clock; false when `stop` was requested while waiting.
  bool wait(std::stop_token stop);

 private:
  std::mutex mu_;
  double qps_;
  double burst_;
  util::Clock& clock_;
  double tokens_;  // may go negative: tokens reserved by callers still waiting
  TimePoint last_;
};

}  // namespace berth::client
