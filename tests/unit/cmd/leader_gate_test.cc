#include "cmd/berth/leader_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace berth::cmd {
namespace {

// An elector that leads as soon as it runs and lets go when stopped.
auto leadingElector(LeaderGate& gate, std::atomic<bool>& released) {
  return [&gate, &released](std::stop_token stop) {
    gate.startedLeading();
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait(lock, stop, [] { return false; });
    released = true;
  };
}

TEST(LeaderGate, LeadsUntilShutdownThenReleasesTheLeaseAfterTheLoop) {
  std::stop_source shutdown;
  LeaderGate gate(shutdown.get_token());
  std::atomic<bool> released{false};
  bool releasedBeforeLoopEnded = true;
  int code = gate.run(
      leadingElector(gate, released),
      [&](std::stop_token stop) {
        shutdown.request_stop();  // SIGTERM while scheduling
        EXPECT_TRUE(stop.stop_requested());
        releasedBeforeLoopEnded = released.load();
      },
      [] { ADD_FAILURE() << "lease reported lost"; });
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(releasedBeforeLoopEnded);
  EXPECT_TRUE(released.load());
}

TEST(LeaderGate, NeverLeadingAndShutdownRunsNothing) {
  std::stop_source shutdown;
  LeaderGate gate(shutdown.get_token());
  bool led = false;
  int code = gate.run([&](std::stop_token) { shutdown.request_stop(); },  // a standby until SIGTERM
                      [&](std::stop_token) { led = true; }, [] {});
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(led);
}

TEST(LeaderGate, LosingTheLeaseWhileLeadingCallsOnLostAndExitsOne) {
  std::stop_source shutdown;
  LeaderGate gate(shutdown.get_token());
  std::atomic<bool> lostCalled{false};
  std::stop_source lose;
  int code = gate.run(
      [&](std::stop_token stop) {
        gate.startedLeading();
        std::mutex mu;
        std::condition_variable_any cv;
        std::unique_lock lock(mu);
        cv.wait(lock, lose.get_token(), [] { return false; });
        if (!stop.stop_requested()) gate.stoppedLeading();
      },
      [&](std::stop_token stop) {
        lose.request_stop();  // the renewals start failing
        std::mutex mu;
        std::condition_variable_any cv;
        std::unique_lock lock(mu);
        cv.wait(lock, stop, [] { return false; });  // the daemon would have exited here
      },
      [&] {
        lostCalled = true;
        shutdown.request_stop();  // instead of std::_Exit(1), end the loop
      });
  EXPECT_TRUE(lostCalled.load());
  EXPECT_EQ(code, 1);
}

TEST(LeaderGate, LosingTheLeaseBeforeLeadingExitsOneWithoutLeading) {
  std::stop_source shutdown;
  LeaderGate gate(shutdown.get_token());
  bool led = false;
  int code = gate.run([&](std::stop_token) { gate.stoppedLeading(); },
                      [&](std::stop_token) { led = true; }, [] {});
  EXPECT_EQ(code, 1);
  EXPECT_FALSE(led);
}

TEST(LeaderGate, LettingGoDuringShutdownIsNotALoss) {
  std::stop_source shutdown;
  LeaderGate gate(shutdown.get_token());
  shutdown.request_stop();
  int code = gate.run([&](std::stop_token) { gate.stoppedLeading(); },
                      [](std::stop_token) { ADD_FAILURE() << "led during shutdown"; }, [] {});
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace berth::cmd
