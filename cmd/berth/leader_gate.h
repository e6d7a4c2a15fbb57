#pragma once
// LeaderGate: the daemon's hand-off between leader election and the scheduling loop. The elector
// runs on its own thread and reports through startedLeading/stoppedLeading; run() schedules only
// while this replica leads, and hands the lease back after the loop has finished its bindings.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>

namespace berth::cmd {

class LeaderGate {
 public:
  // `shutdown` is the process's stop (SIGTERM): it ends the wait and the loop.
  explicit LeaderGate(std::stop_token shutdown) : shutdown_(std::move(shutdown)) {}

  // The elector's onStartedLeading and onStoppedLeading, called on its thread. Losing the lease
  // during shutdown is ignored: the replica is letting go itself.
  void startedLeading();
  void stoppedLeading();

  // Runs `elector` on a thread until the gate is done with it. Once leading (and until shutdown),
  // runs `lead` on the calling thread; `onLost` is called, on the elector's thread, if the lease is
  // lost meanwhile (the daemon exits at once there). Returns 1 when leadership was lost, else 0.
  int run(const std::function<void(std::stop_token)>& elector,
          const std::function<void(std::stop_token)>& lead, const std::function<void()>& onLost);

 private:
  std::stop_token shutdown_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool leading_ = false;  // guarded by mu_
  std::stop_source lost_;
};

}  // namespace berth::cmd
