#include "pkg/leaderelection/renew_watchdog.h"

#include <utility>

namespace berth::leaderelection {

RenewWatchdog::RenewWatchdog(util::Clock& clock)
    : clock_(clock), thread_([this](std::stop_token stop) { loop(std::move(stop)); }) {}

void RenewWatchdog::arm(util::MonotonicTime deadline, std::stop_source attempt) {
  {
    std::lock_guard lock(mu_);
    armed_ = Armed{deadline, std::move(attempt)};
    ++generation_;
  }
  cv_.notify_all();
}

void RenewWatchdog::disarm() {
  {
    std::lock_guard lock(mu_);
    armed_.reset();
    ++generation_;
  }
  cv_.notify_all();
}

void RenewWatchdog::loop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    const uint64_t seen = generation_;
    if (!armed_) {
      cv_.wait(lock, stop, [&] { return generation_ != seen; });
      continue;
    }
    const util::Duration left = armed_->deadline - clock_.monotonicNow();
    if (left <= util::Duration::zero()) {
      armed_->attempt.request_stop();
      armed_.reset();
      continue;
    }
    // A relative wait: the deadline is on the injected clock, which need not be steady_clock.
    cv_.wait_for(lock, stop, left, [&] { return generation_ != seen; });
  }
}

}  // namespace berth::leaderelection
