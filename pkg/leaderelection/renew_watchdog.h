#pragma once
// RenewWatchdog: cancels a lease call still running at the renew deadline, as client-go runs each
// renewal round under a context that expires then, so a partitioned leader gives up on time and
// not a request timeout later. One thread for the elector's lifetime, armed per attempt; the
// deadline is read on the elector's clock.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "pkg/util/clock.h"

namespace berth::leaderelection {

class RenewWatchdog {
 public:
  // `clock` must outlive the watchdog.
  explicit RenewWatchdog(util::Clock& clock);
  RenewWatchdog(const RenewWatchdog&) = delete;
  RenewWatchdog& operator=(const RenewWatchdog&) = delete;

  // Requests a stop on `attempt` once the clock reaches `deadline`, unless disarmed first.
  // Replaces any earlier arming.
  void arm(util::MonotonicTime deadline, std::stop_source attempt);
  // After it returns, the watchdog no longer touches the attempt it was armed with.
  void disarm();

 private:
  struct Armed {
    util::MonotonicTime deadline;
    std::stop_source attempt;
  };

  void loop(std::stop_token stop);

  util::Clock& clock_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::optional<Armed> armed_;  // guarded by mu_
  uint64_t generation_ = 0;     // guarded by mu_; bumped by arm and disarm to wake the loop
  std::jthread thread_;         // last: starts once the state above exists
};

}  // namespace berth::leaderelection
