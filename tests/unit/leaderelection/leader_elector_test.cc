#include "pkg/leaderelection/leader_elector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/api/time.h"
#include "pkg/util/sleep.h"

namespace berth::leaderelection {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

// An in-memory Lease store with kube-apiserver's resourceVersion check on update, a scriptable
// partition (every call fails to connect) and a hook that runs just before an update is applied
// (to let another candidate win a race).
class FakeLeaseClient : public LeaseClient {
 public:
  LeaseResult get(const std::string& ns, const std::string& name, std::stop_token) override {
    std::lock_guard lock(mu_);
    ++gets_;
    if (partitioned_) return LeaseFailure{false, "connection refused"};
    auto it = leases_.find(ns + "/" + name);
    if (it == leases_.end()) return failure(404, "NotFound");
    return it->second;
  }
  LeaseResult create(const std::string& ns, const json& lease, std::stop_token) override {
    std::lock_guard lock(mu_);
    if (partitioned_) return LeaseFailure{false, "connection refused"};
    const std::string key = ns + "/" + lease["metadata"]["name"].get<std::string>();
    if (leases_.contains(key)) return failure(409, "AlreadyExists");
    return store(key, lease);
  }
  LeaseResult update(const std::string& ns, const std::string& name, const json& lease,
                     std::stop_token stop) override {
    if (auto hook = std::exchange(before_update_, nullptr)) hook();
    if (hang_updates_) {
      // A call that never answers: only its stop token (or 30 s) ends it.
      if (!util::sleepFor(seconds(30), stop)) ++cancelled_updates_;
      return LeaseFailure{false, "context deadline exceeded"};
    }
    std::lock_guard lock(mu_);
    if (partitioned_) return LeaseFailure{false, "connection refused"};
    const std::string key = ns + "/" + name;
    auto it = leases_.find(key);
    if (it == leases_.end()) return failure(404, "NotFound");
    if (lease["metadata"].value("resourceVersion", "") !=
        it->second["metadata"]["resourceVersion"]) {
      return failure(409, "Conflict");
    }
    return store(key, lease);
  }

  // Writes the lease as another party would (a fresh resourceVersion).
  void put(const json& spec) {
    std::lock_guard lock(mu_);
    json lease = {{"metadata", {{"namespace", "kube-system"}, {"name", "berth"}}}, {"spec", spec}};
    if (auto it = leases_.find("kube-system/berth"); it != leases_.end()) {
      lease["metadata"] = it->second["metadata"];
    }
    (void)store("kube-system/berth", lease);
  }
  json spec() {
    std::lock_guard lock(mu_);
    return leases_.at("kube-system/berth")["spec"];
  }
  std::string resourceVersion() {
    std::lock_guard lock(mu_);
    return leases_.at("kube-system/berth")["metadata"]["resourceVersion"];
  }
  void partition(bool on) {
    std::lock_guard lock(mu_);
    partitioned_ = on;
  }
  void beforeNextUpdate(std::function<void()> hook) { before_update_ = std::move(hook); }
  // Set before the elector steps (not read under the lock).
  void hangUpdates(bool on) { hang_updates_ = on; }
  int cancelledUpdates() const { return cancelled_updates_.load(); }
  int gets() {
    std::lock_guard lock(mu_);
    return gets_;
  }

 private:
  static LeaseFailure failure(int code, const std::string& reason) {
    return LeaseFailure{code == 404, std::to_string(code) + " " + reason};
  }
  json store(const std::string& key, json lease) {
    lease["metadata"]["resourceVersion"] = std::to_string(++version_);
    leases_[key] = lease;
    return lease;
  }

  std::mutex mu_;
  std::map<std::string, json> leases_;
  int version_ = 100;
  int gets_ = 0;
  bool partitioned_ = false;
  bool hang_updates_ = false;
  std::atomic<int> cancelled_updates_{0};
  std::function<void()> before_update_;
};

// An elector over the fake with counted callbacks and no jitter.
struct Candidate {
  Candidate(FakeLeaseClient& client, util::Clock& clock, std::string identity) {
    Config config{.namespace_ = "kube-system", .name = "berth", .identity = std::move(identity)};
    Callbacks callbacks{.onStartedLeading = [this] { ++started; },
                        .onStoppedLeading = [this] { ++stopped; },
                        .onNewLeader = [this](const std::string& id) { leaders.push_back(id); }};
    auto created = LeaderElector::create(client, clock, config, callbacks, noJitter);
    EXPECT_TRUE(created.ok());
    elector = std::move(*created);
  }
  LeaderElector* operator->() { return elector.get(); }

  util::FakeRandom noJitter{0.0};
  std::unique_ptr<LeaderElector> elector;
  int started = 0;
  int stopped = 0;
  std::vector<std::string> leaders;
};

std::string micro(util::SystemTime t) { return api::formatMicroTimestamp(api::toTimestamp(t)); }

json heldBy(const std::string& holder, util::SystemTime renewed, int transitions = 0) {
  return {{"holderIdentity", holder},
          {"leaseDurationSeconds", 15},
          {"acquireTime", micro(renewed)},
          {"renewTime", micro(renewed)},
          {"leaseTransitions", transitions}};
}

TEST(LeaderElector, AcquiresAFreeLease) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");

  EXPECT_EQ(a->step(), seconds(2));

  EXPECT_EQ(a->state(), LeaderElector::State::Leading);
  EXPECT_TRUE(a->isLeader());
  EXPECT_EQ(a->leader(), "a");
  EXPECT_EQ(a.started, 1);
  EXPECT_EQ(a.leaders, std::vector<std::string>{"a"});
  // FakeClock starts at 2024-01-01T01:00:00Z; MicroTime has exactly six fractional digits.
  EXPECT_EQ(leases.spec(), json({{"holderIdentity", "a"},
                                 {"leaseDurationSeconds", 15},
                                 {"acquireTime", "2024-01-01T01:00:00.000000Z"},
                                 {"renewTime", "2024-01-01T01:00:00.000000Z"},
                                 {"leaseTransitions", 0}}));
}

TEST(LeaderElector, DoesNotTakeAHeldUnexpiredLease) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  leases.put(heldBy("b", clock.systemNow()));
  Candidate a(leases, clock, "a");

  EXPECT_FALSE(a->tryAcquireOrRenew());
  clock.advance(seconds(10));
  leases.put(heldBy("b", clock.systemNow()));  // b renews: the lease is fresh again
  clock.advance(seconds(14));
  const util::Duration wait = a->step();

  EXPECT_EQ(a->state(), LeaderElector::State::Acquiring);
  EXPECT_FALSE(a->isLeader());
  EXPECT_EQ(a->leader(), "b");
  EXPECT_EQ(a.leaders, std::vector<std::string>{"b"});
  EXPECT_EQ(a.started, 0);
  EXPECT_EQ(leases.spec()["holderIdentity"], "b");
  EXPECT_EQ(wait, seconds(2));  // retryPeriod plus jitter 0
}

TEST(LeaderElector, AcquireRetriesWithClientGoJitter) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  leases.put(heldBy("b", clock.systemNow()));
  Config config{.namespace_ = "kube-system", .name = "berth", .identity = "a"};
  util::FakeRandom half(0.5);
  auto a = LeaderElector::create(leases, clock, config, {}, half);
  ASSERT_TRUE(a.ok());

  EXPECT_EQ((*a)->step(), std::chrono::milliseconds(3200));  // 2s * (1 + 1.2 * 0.5)
}

TEST(LeaderElector, TakesOverAnExpiredLeaseAndCountsTransition) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  leases.put(heldBy("b", clock.systemNow(), 3));
  Candidate a(leases, clock, "a");

  a->step();
  EXPECT_FALSE(a->isLeader());
  clock.advance(seconds(15));  // b has not renewed for a whole lease duration
  a->step();

  EXPECT_TRUE(a->isLeader());
  const json spec = leases.spec();
  EXPECT_EQ(spec["holderIdentity"], "a");
  EXPECT_EQ(spec["leaseTransitions"], 4);
  EXPECT_EQ(spec["acquireTime"], "2024-01-01T01:00:15.000000Z");
  EXPECT_EQ(spec["renewTime"], "2024-01-01T01:00:15.000000Z");
  EXPECT_EQ(a.leaders, (std::vector<std::string>{"b", "a"}));
}

TEST(LeaderElector, RenewsWhileLeading) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  clock.advance(a->step());

  for (int round = 1; round <= 3; ++round) {
    const std::string before = leases.resourceVersion();
    EXPECT_EQ(a->step(), seconds(2));
    clock.advance(seconds(2));
    EXPECT_NE(leases.resourceVersion(), before);
  }

  EXPECT_TRUE(a->isLeader());
  const json spec = leases.spec();
  EXPECT_EQ(spec["holderIdentity"], "a");
  EXPECT_EQ(spec["acquireTime"], "2024-01-01T01:00:00.000000Z");
  EXPECT_EQ(spec["renewTime"], "2024-01-01T01:00:06.000000Z");
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_EQ(leases.gets(), 1);  // renewals write over the version last seen, without a GET
  EXPECT_EQ(a.started, 1);
  EXPECT_EQ(a.stopped, 0);
}

TEST(LeaderElector, StopsLeadingWhenRenewalsFailPastDeadline) {
  struct Case {
    const char* name;
    util::Duration outage;
    bool keepsLeading;
  };
  const Case cases[] = {
      {"a short outage is ridden out", seconds(7), true},
      {"an outage longer than renewDeadline ends leadership", seconds(11), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    util::FakeClock clock;
    FakeLeaseClient leases;
    Candidate a(leases, clock, "a");
    clock.advance(a->step());

    leases.partition(true);
    const util::MonotonicTime healed = clock.monotonicNow() + c.outage;
    while (a->isLeader() && clock.monotonicNow() < healed) clock.advance(a->step());
    leases.partition(false);
    if (a->isLeader()) a->step();

    EXPECT_EQ(a->isLeader(), c.keepsLeading);
    EXPECT_EQ(a->state(),
              c.keepsLeading ? LeaderElector::State::Leading : LeaderElector::State::Stopped);
    EXPECT_EQ(a.stopped, c.keepsLeading ? 0 : 1);
    // Leadership ends before any standby may take over (renewDeadline < leaseDuration).
    if (!c.keepsLeading) {
      EXPECT_LE(clock.monotonicNow() - (healed - c.outage), seconds(12));
    }
  }
}

TEST(LeaderElector, CancelsARenewalStillHangingAtTheRenewDeadline) {
  FakeLeaseClient leases;
  util::FakeRandom noJitter(0.0);
  Config config{.namespace_ = "kube-system",
                .name = "berth",
                .identity = "a",
                .leaseDuration = seconds(1),
                .renewDeadline = std::chrono::milliseconds(200),
                .retryPeriod = std::chrono::milliseconds(100)};
  auto elector = LeaderElector::create(leases, util::realClock(), config, {}, noJitter);
  ASSERT_TRUE(elector.ok());
  (*elector)->step();
  ASSERT_TRUE((*elector)->isLeader());

  leases.hangUpdates(true);
  const auto start = std::chrono::steady_clock::now();
  (*elector)->step();
  // The watchdog cut the hanging call at the deadline, and leading stopped then, not 30 s later.
  EXPECT_GE(leases.cancelledUpdates(), 1);
  EXPECT_EQ((*elector)->state(), LeaderElector::State::Stopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

TEST(LeaderElector, StopsLeadingWhenAnotherTookTheLease) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  clock.advance(a->step());
  leases.put(heldBy("b", clock.systemNow(), 1));  // e.g. after a long pause of this process

  for (int i = 0; i < 10 && a->isLeader(); ++i) clock.advance(a->step());

  EXPECT_EQ(a->state(), LeaderElector::State::Stopped);
  EXPECT_EQ(a.stopped, 1);
  EXPECT_EQ(a->leader(), "b");
  EXPECT_EQ(leases.spec()["holderIdentity"], "b");
}

TEST(LeaderElector, ConflictOnUpdateIsNotAcquisition) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  leases.put(heldBy("c", clock.systemNow(), 5));
  Candidate a(leases, clock, "a");
  Candidate b(leases, clock, "b");
  EXPECT_FALSE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());
  clock.advance(seconds(16));

  // Both see the expired lease; b writes first, so a's PUT carries a stale resourceVersion.
  leases.beforeNextUpdate([&] { EXPECT_TRUE(b->tryAcquireOrRenew()); });
  a->step();

  EXPECT_EQ(a->state(), LeaderElector::State::Acquiring);
  EXPECT_EQ(a.started, 0);
  EXPECT_EQ(leases.spec()["holderIdentity"], "b");
  EXPECT_EQ(leases.spec()["leaseTransitions"], 6);
  // Next round a reads b's record and waits for it to expire.
  a->step();
  EXPECT_EQ(a->leader(), "b");
  EXPECT_FALSE(a->isLeader());
}

TEST(LeaderElector, ReleaseClearsHolder) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  Candidate b(leases, clock, "b");
  clock.advance(a->step());
  b->step();  // b stands by, having just seen a's fresh record
  clock.advance(seconds(1));

  a->shutdown();

  EXPECT_EQ(a->state(), LeaderElector::State::Stopped);
  EXPECT_EQ(a.stopped, 1);
  EXPECT_EQ(leases.spec(), json({{"holderIdentity", ""},
                                 {"leaseDurationSeconds", 1},
                                 {"acquireTime", "2024-01-01T01:00:03.000000Z"},
                                 {"renewTime", "2024-01-01T01:00:03.000000Z"},
                                 {"leaseTransitions", 0}}));
  // The standby takes over at once, without waiting out the lease.
  b->step();
  EXPECT_TRUE(b->isLeader());
  EXPECT_EQ(leases.spec()["leaseTransitions"], 1);
}

// A renewal the stop cancelled may still have been applied: release must not write over the
// version it saw before (a 409), as client-go re-reads the lease before releasing.
TEST(LeaderElector, ReleaseAfterAChangeItDidNotSeeStillClearsHolder) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  clock.advance(a->step());
  ASSERT_TRUE(a->isLeader());
  leases.put(leases.spec());  // the same record, a newer resourceVersion

  a->shutdown();

  EXPECT_EQ(leases.spec()["holderIdentity"], "");
}

TEST(LeaderElector, ReleaseLeavesALeaseAnotherTookOver) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  clock.advance(a->step());
  ASSERT_TRUE(a->isLeader());
  leases.put(heldBy("b", clock.systemNow(), 1));

  a->shutdown();

  EXPECT_EQ(leases.spec()["holderIdentity"], "b");
}

TEST(LeaderElector, ExpiryMeasuredFromLocalObservationNotRemoteTimestamp) {
  struct Case {
    const char* name;
    util::Duration skew;  // remote renewTime minus our wall clock
  };
  const Case cases[] = {
      {"a renewTime an hour in the past is not expired", -std::chrono::hours(1)},
      {"a renewTime an hour in the future does not extend the lease", std::chrono::hours(1)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    util::FakeClock clock;
    FakeLeaseClient leases;
    leases.put(heldBy("b", clock.systemNow() + c.skew));
    Candidate a(leases, clock, "a");

    EXPECT_FALSE(a->tryAcquireOrRenew());
    clock.advance(seconds(14));
    EXPECT_FALSE(a->tryAcquireOrRenew());
    clock.advance(seconds(1));  // 15s since a saw the record change
    EXPECT_TRUE(a->tryAcquireOrRenew());
  }
}

TEST(LeaderElector, RejectsInvalidConfig) {
  struct Case {
    Config config;
    std::string error;
  };
  const Config ok{.namespace_ = "kube-system", .name = "berth", .identity = "a"};
  auto with = [&](auto change) {
    Config c = ok;
    change(c);
    return c;
  };
  const Case cases[] = {
      {with([](Config& c) { c.leaseDuration = seconds(10); }),
       "leaseDuration must be greater than renewDeadline"},
      {with([](Config& c) { c.retryPeriod = seconds(9); }),
       "renewDeadline must be greater than retryPeriod*JitterFactor"},
      {with([](Config& c) { c.identity.clear(); }), "Lock identity is empty"},
      {with([](Config& c) { c.name.clear(); }), "the lease namespace and name must not be empty"},
  };
  FakeLeaseClient leases;
  util::FakeClock clock;
  for (const Case& c : cases) {
    auto elector = LeaderElector::create(leases, clock, c.config, {});
    ASSERT_FALSE(elector.ok()) << c.error;
    EXPECT_EQ(elector.error().message, "leader election: " + c.error);
  }
  EXPECT_TRUE(LeaderElector::create(leases, clock, ok, {}).ok());
}

TEST(LeaderElector, CheckReportsAWedgedLeader) {
  util::FakeClock clock;
  FakeLeaseClient leases;
  Candidate a(leases, clock, "a");
  EXPECT_TRUE(a->check(seconds(20)).ok());  // a standby is healthy
  a->step();
  clock.advance(seconds(35));
  EXPECT_TRUE(a->check(seconds(20)).ok());
  clock.advance(seconds(1));
  EXPECT_FALSE(a->check(seconds(20)).ok());
}

TEST(LeaderElector, DecodeLeaseSpecNamesTheBadField) {
  EXPECT_EQ(decodeLeaseSpec(json{{"leaseDurationSeconds", "15"}}).error().message,
            "spec.leaseDurationSeconds: not an int32: \"15\"");
  EXPECT_FALSE(decodeLeaseSpec(json{{"renewTime", "yesterday"}}).ok());
  EXPECT_EQ(decodeLeaseSpec(json()).value().holderIdentity, "");
}

TEST(LeaderElector, DefaultIdentityIsHostnameAndUuid) {
  const std::string id = defaultIdentity();
  const auto sep = id.rfind('_');
  ASSERT_NE(sep, std::string::npos);
  const std::string uuid = id.substr(sep + 1);
  EXPECT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4');
  EXPECT_NE(defaultIdentity(), id);
}

TEST(LeaderElector, RunLeadsUntilStoppedThenReleases) {
  FakeLeaseClient leases;
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, stopped = false;
  Config config{.namespace_ = "kube-system",
                .name = "berth",
                .identity = "a",
                .leaseDuration = seconds(1),
                .renewDeadline = std::chrono::milliseconds(500),
                .retryPeriod = std::chrono::milliseconds(10)};
  Callbacks callbacks{.onStartedLeading =
                          [&] {
                            std::lock_guard lock(mu);
                            started = true;
                            cv.notify_all();
                          },
                      .onStoppedLeading = [&] { stopped = true; }};
  auto elector = LeaderElector::create(leases, util::realClock(), config, callbacks);
  ASSERT_TRUE(elector.ok());

  std::jthread runner([&](std::stop_token stop) { (*elector)->run(stop); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, seconds(30), [&] { return started; }));
  }
  runner.request_stop();
  runner.join();

  EXPECT_TRUE(stopped);
  EXPECT_EQ(leases.spec()["holderIdentity"], "");
  EXPECT_FALSE((*elector)->isLeader());
}

}  // namespace
}  // namespace berth::leaderelection
