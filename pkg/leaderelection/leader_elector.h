#pragma once
// LeaderElector: client-go's Lease leader election (tools/leaderelection), so that of several berth
// replicas exactly one schedules and the others stand by, and kube-scheduler operators read the
// same Lease fields and log lines.
//
// Candidates compete for one Lease. The holder renews spec.renewTime every retryPeriod; a standby
// takes the Lease over once it has seen the record unchanged for leaseDurationSeconds. That age
// is measured on the standby's own monotonic clock from when it last observed the record change,
// never from the remote renewTime, so clock skew between nodes cannot cause a takeover. Every
// write is a PUT with the resourceVersion last read, so of two racing candidates one gets 409.
// A leader that cannot renew within renewDeadline stops leading (the daemon then exits), which
// is before any standby may take over (renewDeadline < leaseDuration).
//
// The core is a state machine driven by step(): Acquiring -> Leading -> Stopped; each step makes
// at most one attempt and returns how long to wait before the next, so tests drive it with a
// FakeClock and never sleep. run() is the production loop around it.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>

#include "pkg/api/lease.h"
#include "pkg/api/types.h"
#include "pkg/leaderelection/lease_client.h"
#include "pkg/leaderelection/renew_watchdog.h"
#include "pkg/util/clock.h"
#include "pkg/util/random.h"
#include "pkg/util/result.h"

namespace berth::leaderelection {

// wait.JitterUntil's factor for the acquire loop: waits are retryPeriod * (1 + 1.2 u).
inline constexpr double kJitterFactor = 1.2;

struct Config {
  std::string namespace_{};
  std::string name{};
  std::string identity{};  // unique per candidate; see defaultIdentity()
  util::Duration leaseDuration = std::chrono::seconds(15);
  util::Duration renewDeadline = std::chrono::seconds(10);
  util::Duration retryPeriod = std::chrono::seconds(2);
  // On a requested stop, hand the lease back (holder "") so a standby takes over at once.
  bool releaseOnCancel = true;
};

// Called on the thread that drives the elector; they must return promptly (start work elsewhere).
struct Callbacks {
  std::function<void()> onStartedLeading{};
  // Leading ended: renewal failed past the deadline, or the caller stopped the elector.
  std::function<void()> onStoppedLeading{};
  // Another holder was observed (a non-empty identity different from the last one reported).
  std::function<void(const std::string& identity)> onNewLeader{};
};

// The lease's spec (resourcelock.LeaderElectionRecord), and its codec.
using LeaderElectionRecord = api::LeaseSpec;
using api::decodeLeaseSpec;
using api::encodeLeaseSpec;

// hostname + "_" + a random UUID, as kube-scheduler's default identity.
std::string defaultIdentity();

// Checks the config as client-go's NewLeaderElector does.
util::Result<void> validate(const Config& config);

class LeaderElector {
 public:
  enum class State { Acquiring, Leading, Stopped };

  // Fails on an invalid config (see validate). The client, clock and random source (the acquire
  // jitter) must outlive the elector.
  static util::Result<std::unique_ptr<LeaderElector>> create(
      LeaseClient& client, util::Clock& clock, Config config, Callbacks callbacks,
      util::Random& random = util::defaultRandom());

  // One attempt of the current state; returns the wait before the next step. Acquiring: a
  // successful attempt starts leading (onStartedLeading). Leading: a renewal; when none has
  // succeeded for renewDeadline, leading stops (onStoppedLeading) and the state is Stopped.
  util::Duration step(std::stop_token stop = {});
  // Steps until `stop` is requested or leadership is lost, sleeping on the clock between steps;
  // then, if still leading, releases the lease (when configured) and stops leading.
  void run(std::stop_token stop);
  // What run() does on a requested stop: release if configured, onStoppedLeading, Stopped.
  void shutdown();

  // One get/create/update round (client-go tryAcquireOrRenew): true when we hold the lease now.
  bool tryAcquireOrRenew(std::stop_token stop = {});
  // Hands the lease back if we hold it: holder "", leaseDurationSeconds 1. True when not held.
  bool release();

  State state() const;
  // True while in the Leading state (leader_election_master_status).
  bool isLeader() const;
  // The holder of the lease as last observed ("" when unknown or released).
  std::string leader() const;
  // client-go's Check for healthz: an error once leading and the lease has not been renewed for
  // leaseDuration + maxTolerableExpiredLease (a wedged leader).
  util::Result<void> check(util::Duration maxTolerableExpiredLease) const;
  const Config& config() const { return config_; }

 private:
  LeaderElector(LeaseClient& client, util::Clock& clock, Config config, Callbacks callbacks,
                util::Random& random);

  util::Duration stepAcquiring(std::stop_token stop);
  util::Duration stepLeading(std::stop_token stop);
  void stopLeading();
  // Records a record we read or wrote, restarting the local expiry clock.
  void observe(const LeaderElectionRecord& record, const nlohmann::json& raw);
  bool leaseValid(util::MonotonicTime now) const;
  bool holdsObserved() const;  // observed holder is us
  bool update(const LeaderElectionRecord& record, std::stop_token stop, std::string_view what);
  // The record of a fetched lease (`spec` is its spec); logs and returns nullopt when it does not
  // decode.
  std::optional<LeaderElectionRecord> decodeFetched(const nlohmann::json& lease,
                                                    const nlohmann::json& spec) const;
  void maybeReportTransition();
  LeaderElectionRecord freshRecord() const;

  LeaseClient& client_;
  util::Clock& clock_;
  const Config config_;
  const std::string desc_;  // "ns/name"
  Callbacks callbacks_;
  util::Random& random_;

  // Driver-thread state.
  nlohmann::json lease_;         // the Lease as last read or written (its resourceVersion)
  nlohmann::json observed_raw_;  // its spec, to notice changes
  std::string reported_leader_;
  bool announced_ = false;
  std::optional<util::MonotonicTime> renew_round_start_;

  // Read by other threads (metrics, healthz).
  mutable std::mutex mu_;
  LeaderElectionRecord observed_;
  util::MonotonicTime observed_time_{};
  State state_ = State::Acquiring;

  RenewWatchdog watchdog_;  // last: its thread reads clock_
};

}  // namespace berth::leaderelection
