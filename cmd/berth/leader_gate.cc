#include "cmd/berth/leader_gate.h"

#include <thread>

#include "pkg/log/log.h"

namespace berth::cmd {

void LeaderGate::startedLeading() {
  {
    std::lock_guard lock(mu_);
    leading_ = true;
  }
  cv_.notify_all();
}

void LeaderGate::stoppedLeading() {
  if (shutdown_.stop_requested()) return;
  {
    // Under the lock, so that run() cannot miss the wake-up between its check and its wait.
    std::lock_guard lock(mu_);
    lost_.request_stop();
  }
  cv_.notify_all();
}

int LeaderGate::run(const std::function<void(std::stop_token)>& elector,
                    const std::function<void(std::stop_token)>& lead,
                    const std::function<void()>& onLost) {
  std::stop_source electorStop;
  std::jthread election([&] { elector(electorStop.get_token()); });
  bool leads = false;
  {
    std::unique_lock lock(mu_);
    leads = cv_.wait(lock, shutdown_, [&] { return leading_ || lost_.stop_requested(); });
  }
  if (leads && !lost_.stop_requested()) {
    log::info(0, "Started leading: scheduling");
    std::stop_source leadStop;
    std::stop_callback onShutdown(shutdown_, [&leadStop] { leadStop.request_stop(); });
    std::stop_callback onLostLease(lost_.get_token(), [&onLost] { onLost(); });
    lead(leadStop.get_token());
  }
  // Finished our bindings (or never led): hand the lease back so a standby takes over now.
  electorStop.request_stop();
  election.join();
  return lost_.stop_requested() ? 1 : 0;
}

}  // namespace berth::cmd
