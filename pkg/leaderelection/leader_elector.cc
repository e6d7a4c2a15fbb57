#include "pkg/leaderelection/leader_elector.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <stop_token>
#include <utility>

#include "pkg/api/time.h"
#include "pkg/log/log.h"
#include "pkg/util/uuid.h"

namespace berth::leaderelection {

using json = nlohmann::json;

std::string defaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  // A version 4 UUID: the hostname alone is not unique across pods sharing a host network.
  std::random_device device;
  std::mt19937_64 engine(static_cast<uint64_t>(device()) << 32 | device());
  return std::string(host) + "_" + util::uuidV4(engine);
}

util::Result<void> validate(const Config& config) {
  using std::chrono::seconds;
  if (config.leaseDuration <= config.renewDeadline) {
    return util::invalidArgument("leaseDuration must be greater than renewDeadline");
  }
  if (std::chrono::duration<double>(config.renewDeadline) <=
      kJitterFactor * std::chrono::duration<double>(config.retryPeriod)) {
    return util::invalidArgument("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  // The Lease stores whole seconds.
  if (config.leaseDuration < seconds(1)) {
    return util::invalidArgument("leaseDuration must be at least one second");
  }
  if (config.renewDeadline <= util::Duration::zero()) {
    return util::invalidArgument("renewDeadline must be greater than zero");
  }
  if (config.retryPeriod <= util::Duration::zero()) {
    return util::invalidArgument("retryPeriod must be greater than zero");
  }
  if (config.namespace_.empty() || config.name.empty()) {
    return util::invalidArgument("the lease namespace and name must not be empty");
  }
  if (config.identity.empty()) return util::invalidArgument("Lock identity is empty");
  return {};
}

util::Result<std::unique_ptr<LeaderElector>> LeaderElector::create(LeaseClient& client,
                                                                   util::Clock& clock,
                                                                   Config config,
                                                                   Callbacks callbacks,
                                                                   util::Random& random) {
  if (auto valid = validate(config); !valid) return valid.error().wrap("leader election");
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(client, clock, std::move(config), std::move(callbacks), random));
}

LeaderElector::LeaderElector(LeaseClient& client, util::Clock& clock, Config config,
                             Callbacks callbacks, util::Random& random)
    : client_(client),
      clock_(clock),
      config_(std::move(config)),
      desc_(log::ref(config_.namespace_, config_.name)),
      callbacks_(std::move(callbacks)),
      random_(random),
      watchdog_(clock) {}

util::Duration LeaderElector::step(std::stop_token stop) {
  switch (state()) {
    case State::Acquiring:
      return stepAcquiring(std::move(stop));
    case State::Leading:
      return stepLeading(std::move(stop));
    case State::Stopped:
      break;
  }
  return config_.retryPeriod;
}

util::Duration LeaderElector::stepAcquiring(std::stop_token stop) {
  if (!announced_) {
    log::info(0, "attempting to acquire leader lease", {{"lease", desc_}});
    announced_ = true;
  }
  const bool acquired = tryAcquireOrRenew(std::move(stop));
  maybeReportTransition();
  if (!acquired) {
    log::info(4, "failed to acquire lease", {{"lease", desc_}});
    // wait.JitterUntil: candidates that lost a race do not retry in lockstep.
    const auto extra =
        std::chrono::duration<double>(config_.retryPeriod) * kJitterFactor * random_.uniform();
    return config_.retryPeriod + std::chrono::duration_cast<util::Duration>(extra);
  }
  log::info(0, "successfully acquired lease", {{"lease", desc_}});
  {
    std::lock_guard lock(mu_);
    state_ = State::Leading;
  }
  renew_round_start_.reset();
  if (callbacks_.onStartedLeading) callbacks_.onStartedLeading();
  return config_.retryPeriod;
}

util::Duration LeaderElector::stepLeading(std::stop_token stop) {
  // A renewal round (client-go's PollImmediateUntil under a renewDeadline timeout): attempts every
  // retryPeriod until one succeeds; the next round starts retryPeriod after that success.
  const util::MonotonicTime start = clock_.monotonicNow();
  if (!renew_round_start_) renew_round_start_ = start;
  const util::MonotonicTime deadline = *renew_round_start_ + config_.renewDeadline;
  if (start < deadline) {
    // client-go runs the round under a context that expires at the renew deadline: a call still
    // hanging then is cancelled, so a partitioned leader gives up on time, not a timeout later.
    std::stop_source attempt;
    std::stop_callback forward(stop, [&attempt] { attempt.request_stop(); });
    watchdog_.arm(deadline, attempt);
    const bool renewed = tryAcquireOrRenew(attempt.get_token());
    watchdog_.disarm();
    maybeReportTransition();
    if (renewed) {
      log::info(5, "successfully renewed lease", {{"lease", desc_}});
      renew_round_start_.reset();
      return config_.retryPeriod;
    }
    const util::MonotonicTime now = clock_.monotonicNow();
    if (now < deadline) return std::min(config_.retryPeriod, deadline - now);
  }
  log::info(0, "failed to renew lease",
            {{"lease", desc_}, {"err", "timed out waiting for the condition"}});
  stopLeading();
  return config_.retryPeriod;
}

void LeaderElector::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const util::Duration wait = step(stop);
    if (state() == State::Stopped) return;
    clock_.sleepFor(wait, stop);
  }
  shutdown();
}

void LeaderElector::shutdown() {
  if (state() == State::Leading && config_.releaseOnCancel) release();
  stopLeading();
}

void LeaderElector::stopLeading() {
  bool wasLeading;
  {
    std::lock_guard lock(mu_);
    wasLeading = state_ == State::Leading;
    state_ = State::Stopped;
  }
  if (wasLeading && callbacks_.onStoppedLeading) callbacks_.onStoppedLeading();
}

LeaderElectionRecord LeaderElector::freshRecord() const {
  const api::Timestamp now = api::toTimestamp(clock_.systemNow());
  return LeaderElectionRecord{
      .holderIdentity = config_.identity,
      .leaseDurationSeconds = static_cast<int>(
          std::chrono::duration_cast<std::chrono::seconds>(config_.leaseDuration).count()),
      .acquireTime = now,
      .renewTime = now,
      .leaseTransitions = 0};
}

std::optional<LeaderElectionRecord> LeaderElector::decodeFetched(const json& lease,
                                                                 const json& spec) const {
  auto record = lease.is_object() ? decodeLeaseSpec(spec)
                                  : util::invalidArgument("the lease is not an object");
  if (!record) {
    log::error(record.error().wrap("lease " + desc_).message, "error retrieving resource lock",
               {{"lease", desc_}});
    return std::nullopt;
  }
  return std::move(*record);
}

bool LeaderElector::tryAcquireOrRenew(std::stop_token stop) {
  const util::MonotonicTime now = clock_.monotonicNow();
  LeaderElectionRecord record = freshRecord();

  // Fast path: the leader writes over the version it last saw, saving a GET per renewal.
  if (holdsObserved() && leaseValid(now) && lease_.is_object()) {
    {
      std::lock_guard lock(mu_);
      record.acquireTime = observed_.acquireTime;
      record.leaseTransitions = observed_.leaseTransitions;
    }
    if (update(record, stop, "Failed to update lock optimistically, falling back to slow path")) {
      return true;
    }
    record = freshRecord();
  }

  auto got = client_.get(config_.namespace_, config_.name, stop);
  if (!got) {
    if (!got.error().notFound) {
      log::error(got.error().message, "error retrieving resource lock", {{"lease", desc_}});
      return false;
    }
    const json lease = api::encodeLease({config_.namespace_, config_.name, record});
    const json& spec = lease["spec"];
    auto created = client_.create(config_.namespace_, lease, stop);
    if (!created) {
      log::error(created.error().message, "error initially creating leader election record",
                 {{"lease", desc_}});
      return false;
    }
    lease_ = std::move(*created);
    observe(record, spec);
    return true;
  }

  const json spec = got->is_object() ? got->value("spec", json()) : json();
  const auto current = decodeFetched(*got, spec);
  if (!current) return false;
  lease_ = std::move(*got);
  // Expiry counts from when we saw the record change, on our clock (never the remote renewTime).
  if (spec != observed_raw_) observe(*current, spec);
  if (!current->holderIdentity.empty() && leaseValid(now) && !holdsObserved()) {
    log::info(4, "lock is held and has not yet expired",
              {{"lease", desc_}, {"holder", current->holderIdentity}});
    return false;
  }

  if (holdsObserved()) {
    record.acquireTime = current->acquireTime;
    record.leaseTransitions = current->leaseTransitions;
  } else {
    record.leaseTransitions = current->leaseTransitions + 1;
  }
  return update(record, stop, "Failed to update lock");
}

bool LeaderElector::release() {
  if (!holdsObserved()) return true;
  // Read the lease first, as client-go does: a renewal cancelled by the stop may still have been
  // applied, and writing over the version seen before it would only conflict. Not cancellable:
  // release runs after the stop was requested.
  auto got = client_.get(config_.namespace_, config_.name, {});
  if (!got) {
    log::error(got.error().message, "error retrieving resource lock", {{"lease", desc_}});
    return false;
  }
  const json spec = got->is_object() ? got->value("spec", json()) : json();
  const auto current = decodeFetched(*got, spec);
  if (!current) return false;
  if (current->holderIdentity != config_.identity) return true;  // taken over: not ours to free
  lease_ = std::move(*got);
  const api::Timestamp now = api::toTimestamp(clock_.systemNow());
  LeaderElectionRecord record{.leaseDurationSeconds = 1, .acquireTime = now, .renewTime = now};
  {
    std::lock_guard lock(mu_);
    record.leaseTransitions = observed_.leaseTransitions;
  }
  return update(record, {}, "Failed to release lock");
}

bool LeaderElector::update(const LeaderElectionRecord& record, std::stop_token stop,
                           std::string_view what) {
  json lease = lease_;
  lease["spec"] = encodeLeaseSpec(record);
  auto updated = client_.update(config_.namespace_, config_.name, lease, std::move(stop));
  if (!updated) {
    log::error(updated.error().message, what, {{"lease", desc_}});
    return false;
  }
  lease_ = std::move(*updated);
  const json spec = lease_.is_object() ? lease_.value("spec", lease["spec"]) : lease["spec"];
  observe(record, spec);
  return true;
}

void LeaderElector::observe(const LeaderElectionRecord& record, const json& raw) {
  observed_raw_ = raw;
  std::lock_guard lock(mu_);
  observed_ = record;
  observed_time_ = clock_.monotonicNow();
}

bool LeaderElector::leaseValid(util::MonotonicTime now) const {
  std::lock_guard lock(mu_);
  return observed_time_ + std::chrono::seconds(observed_.leaseDurationSeconds) > now;
}

bool LeaderElector::holdsObserved() const {
  std::lock_guard lock(mu_);
  return observed_.holderIdentity == config_.identity;
}

void LeaderElector::maybeReportTransition() {
  const std::string holder = leader();
  if (holder == reported_leader_) return;
  reported_leader_ = holder;
  if (holder.empty()) return;  // released: nobody leads until a candidate acquires
  log::info(0, "new leader elected", {{"lease", desc_}, {"identity", holder}});
  if (callbacks_.onNewLeader) callbacks_.onNewLeader(holder);
}

LeaderElector::State LeaderElector::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool LeaderElector::isLeader() const { return state() == State::Leading; }

std::string LeaderElector::leader() const {
  std::lock_guard lock(mu_);
  return observed_.holderIdentity;
}

util::Result<void> LeaderElector::check(util::Duration maxTolerableExpiredLease) const {
  std::lock_guard lock(mu_);
  if (state_ != State::Leading) return {};  // a standby is healthy
  if (clock_.monotonicNow() - observed_time_ > config_.leaseDuration + maxTolerableExpiredLease) {
    return util::Error{util::ErrorCode::Unavailable,
                       "failed election to renew leadership on lease " + config_.name};
  }
  return {};
}

}  // namespace berth::leaderelection
