// End-to-end tests of leader election: two or three real `berth run` processes compete for one
// Lease in the embedded API server. Each process talks to its own apiserver::Server over the same
// Store, so a server's request log tells exactly what that process did, and a fault on one server
// partitions one process only. The Store's single resourceVersion orders every pod binding and
// Lease write, so "before" and "after" below are exact, not timing guesses.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/berth_process.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"
#include "tests/support/relay.h"

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::Resource;
using std::chrono::milliseconds;
using test::nodeJson;
using test::podJson;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Leader election flags. client-go requires leaseDuration > renewDeadline > 1.2 * retryPeriod.
struct Timings {
  milliseconds leaseDuration;
  milliseconds renewDeadline;
  milliseconds retryPeriod;
  // The longest wait of a candidate's acquire loop (wait.JitterUntil): retryPeriod * (1 + 1.2).
  milliseconds jitteredRetry() const { return retryPeriod + retryPeriod * 12 / 10; }
};
constexpr Timings kFast{2000ms, 1500ms, 500ms};

std::string flagDuration(milliseconds d) { return std::to_string(d.count()) + "ms"; }

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

uint64_t resourceVersionOf(const json& object) {
  return std::stoull(object["metadata"].value("resourceVersion", "0"));
}

// One berth process and the API server it alone talks to.
struct Replica {
  std::unique_ptr<apiserver::Server> server;
  std::unique_ptr<test::TcpRelay> proxy;  // between the process and its server, when asked for
  test::BerthProcessPtr process;
  std::string identity;     // the Lease holderIdentity it writes
  uint16_t healthPort = 0;  // /healthz /readyz /metrics
};

class LeaderElection : public testing::Test {
 protected:
  void SetUp() override {
    // Opened before any write, so the watches see every change in resourceVersion order.
    auto pods = store_.watch(Resource::Pods, "", {});
    ASSERT_TRUE(pods.ok()) << pods.error().status.message;
    pod_watch_ = *pods;
    auto leases = store_.watch(Resource::Leases, "", {});
    ASSERT_TRUE(leases.ok()) << leases.error().status.message;
    lease_watch_ = *leases;
    for (int i = 0; i < 3; ++i) {
      auto created = store_.create(Resource::Nodes, "", nodeJson("n" + std::to_string(i), "64"));
      ASSERT_TRUE(created.ok()) << created.error().status.message;
    }
  }

  void TearDown() override {
    // SIGTERM to all first, so their shutdowns overlap; leader or standby, each exits cleanly.
    std::vector<bool> signalled(replicas_.size(), false);
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const test::BerthProcessPtr& p = replicas_[i].process;
      signalled[i] = p && p->running() && kill(p->pid(), SIGTERM) == 0;
    }
    for (size_t i = 0; i < replicas_.size(); ++i) {
      std::remove(kubeconfigPath(i).c_str());
      if (!replicas_[i].process) continue;
      test::BerthProcess& p = *replicas_[i].process;
      const int code = p.terminate(10s);
      if (signalled[i]) {
        EXPECT_EQ(code, 0) << "replica " << i << " on SIGTERM";
      }
      if (HasFailure()) {
        std::cerr << "--- replica " << i << " (" << replicas_[i].identity << ") exit "
                  << p.exitCode().value_or(-1) << ", log tail ---\n"
                  << p.logTail(4000) << "\n";
      }
      std::remove(p.logPath().c_str());
    }
    for (Replica& r : replicas_) {
      r.proxy.reset();
      if (r.server) r.server->stop();
    }
    if (pod_watch_) pod_watch_->stop();
    if (lease_watch_) lease_watch_->stop();
  }

  std::string kubeconfigPath(size_t index) const {
    return testing::TempDir() + "berth-leader-" + std::to_string(getpid()) + "-" +
           std::to_string(index) + ".kubeconfig";
  }

  // Starts a berth process against a server of its own; returns once it has logged the identity
  // it competes with and the port it serves health and metrics on.
  void startReplica(const Timings& t, std::vector<std::string> extra = {}, bool proxied = false) {
    const size_t index = replicas_.size();
    Replica& r = replicas_.emplace_back();
    auto server = apiserver::Server::start(store_, {});
    ASSERT_TRUE(server.ok()) << server.error().message;
    r.server = std::move(*server);
    std::string url = r.server->url();
    if (proxied) {
      r.proxy = std::make_unique<test::TcpRelay>(r.server->port());
      ASSERT_NE(r.proxy->port(), 0) << "the proxy could not listen";
      url = "http://127.0.0.1:" + std::to_string(r.proxy->port());
    }
    auto written = test::writeKubeconfig(kubeconfigPath(index), url);
    ASSERT_TRUE(written.ok()) << written.error().message;
    const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
    const std::string log = testing::TempDir() + "berth-leader-" + std::to_string(getpid()) + "-" +
                            info->name() + "-" + std::to_string(index) + ".log";
    std::remove(log.c_str());
    std::vector<std::string> args = {"run", "--kubeconfig", kubeconfigPath(index), "--v", "3",
                                     "--bind-address", "127.0.0.1", "--port", "0",
                                     // Scraped without credentials: the API server may be
                                     // unreachable through the relay when the test reads them.
                                     "--authorization-always-allow-paths",
                                     "/healthz,/readyz,/livez,/metrics",
                                     "--leader-elect-lease-duration", flagDuration(t.leaseDuration),
                                     "--leader-elect-renew-deadline", flagDuration(t.renewDeadline),
                                     "--leader-elect-retry-period", flagDuration(t.retryPeriod)};
    args.insert(args.end(), extra.begin(), extra.end());
    auto spawned = test::BerthProcess::spawn(BERTH_BINARY, args, log);
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    r.process = std::move(*spawned);

    auto serving = r.process->waitForLogLine({"Serving securely"}, 10s);
    ASSERT_TRUE(serving) << "replica " << index << " never logged its health port";
    const std::string address = test::logField(*serving, "address").value_or("");
    ASSERT_TRUE(address.starts_with("127.0.0.1:")) << *serving;
    r.healthPort = static_cast<uint16_t>(std::stoi(address.substr(10)));
    auto attempting = r.process->waitForLogLine({"Attempting to acquire leader lease"}, 10s);
    ASSERT_TRUE(attempting) << "replica " << index << " never started leader election";
    r.identity = test::logField(*attempting, "identity").value_or("");
    ASSERT_FALSE(r.identity.empty()) << *attempting;
  }

  json lease(const std::string& ns = "kube-system", const std::string& name = "berth") {
    auto got = store_.get(Resource::Leases, ns, name);
    return got.ok() ? *got : json();
  }
  std::string holder() {
    const json l = lease();
    return l.is_null() ? "" : l["spec"].value("holderIdentity", "");
  }
  // The replica holding the Lease, or -1.
  int leaderIndex() {
    const std::string h = holder();
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (!h.empty() && replicas_[i].identity == h) return static_cast<int>(i);
    }
    return -1;
  }
  // Waits until replica `index` holds the Lease and has said it schedules.
  void awaitLeader(size_t index, milliseconds limit = 10s) {
    ASSERT_TRUE(test::eventually([&] { return leaderIndex() == static_cast<int>(index); }, limit))
        << "holder: \"" << holder() << "\"";
    ASSERT_TRUE(replicas_[index].process->waitForLogLine({"Started leading"}, 5s));
  }

  void createPods(const std::string& prefix, int count) {
    for (int i = 0; i < count; ++i) {
      auto r = store_.create(Resource::Pods, "default", podJson(prefix + std::to_string(i), "10m"));
      ASSERT_TRUE(r.ok()) << r.error().status.message;
      pod_names_.push_back(prefix + std::to_string(i));
    }
  }
  bool allBound() {
    for (const std::string& name : pod_names_) {
      auto p = store_.get(Resource::Pods, "default", name);
      if (!p.ok() || (*p)["spec"].value("nodeName", "").empty()) return false;
    }
    return true;
  }

  // Successful Binding POSTs per pod that went through replica `index`'s server.
  std::map<std::string, int> bindingsThrough(size_t index) const {
    std::map<std::string, int> out;
    for (const apiserver::RequestRecord& r : replicas_[index].server->requestLog()) {
      if (r.subresource == "binding" && r.method == "POST" && r.code == 201) out[r.name]++;
    }
    return out;
  }
  // Every pod created is bound, by exactly one successful Binding over all servers.
  void expectEveryPodBoundOnce() {
    std::map<std::string, int> total;
    // A server records a request after answering it, so a pod can show its node a moment before
    // its Binding is in the log: wait until every pod has one.
    test::eventually(
        [&] {
          total.clear();
          for (size_t i = 0; i < replicas_.size(); ++i) {
            for (const auto& [name, count] : bindingsThrough(i)) total[name] += count;
          }
          for (const std::string& name : pod_names_) {
            if (total[name] == 0) return false;
          }
          return true;
        },
        5s);
    for (const std::string& name : pod_names_) EXPECT_EQ(total[name], 1) << "pod " << name;
    EXPECT_EQ(total.size(), pod_names_.size());
  }

  // The resourceVersion at which each pod got its node, from the pod watch.
  const std::map<std::string, uint64_t>& boundAt() {
    for (const apiserver::WatchEvent& e : pod_watch_->drain()) {
      const std::string name = e.object["metadata"].value("name", "");
      if (!e.object["spec"].value("nodeName", "").empty() && !bound_at_.contains(name)) {
        bound_at_[name] = resourceVersionOf(e.object);
      }
    }
    return bound_at_;
  }
  // Every version of the Lease written so far, oldest first.
  const std::vector<json>& leaseHistory() {
    for (const apiserver::WatchEvent& e : lease_watch_->drain()) lease_history_.push_back(e.object);
    return lease_history_;
  }
  // The resourceVersion of the first Lease write naming `identity` as holder; 0 if none.
  uint64_t acquiredAt(const std::string& identity) {
    for (const json& l : leaseHistory()) {
      if (l["spec"].value("holderIdentity", "") == identity) return resourceVersionOf(l);
    }
    return 0;
  }
  // No pod bound through replica `index`'s server got its node at or after `version`.
  void expectNoBindingThroughAfter(size_t index, uint64_t version) {
    ASSERT_NE(version, 0u) << "no such Lease write was seen";
    const auto& at = boundAt();
    for (const auto& [name, count] : bindingsThrough(index)) {
      ASSERT_TRUE(at.contains(name)) << "pod " << name << " bound but never seen bound";
      EXPECT_LT(at.at(name), version) << "pod " << name << " bound through replica " << index;
    }
  }

  apiserver::Store store_;
  apiserver::WatchPtr pod_watch_;
  apiserver::WatchPtr lease_watch_;
  std::vector<Replica> replicas_;
  std::vector<std::string> pod_names_;
  std::map<std::string, uint64_t> bound_at_;
  std::vector<json> lease_history_;
};

TEST_F(LeaderElection, ExactlyOneReplicaBindsAndTheLeaseNamesIt) {
  createPods("early-", 10);  // pending while the replicas race to create the Lease
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(startReplica(kFast));
  ASSERT_TRUE(test::eventually([&] { return leaderIndex() >= 0; }, 10s)) << holder();
  const int leader = leaderIndex();
  createPods("late-", 20);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 20s));
  // Let a renewal go by, so that a standby that wrongly thought itself leader had time to show.
  const std::string firstRenewal = lease()["spec"].value("renewTime", "");
  ASSERT_TRUE(
      test::eventually([&] { return lease()["spec"].value("renewTime", "") != firstRenewal; }, 5s));

  expectEveryPodBoundOnce();
  EXPECT_EQ(bindingsThrough(leader).size(), pod_names_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (static_cast<int>(i) == leader) continue;
    EXPECT_EQ(replicas_[i].process->log().find("Started leading"), std::string::npos)
        << "standby " << i << " started leading";
    // A standby only reads, and writes nothing but its attempts on the Lease.
    for (const apiserver::RequestRecord& r : replicas_[i].server->requestLog()) {
      if (r.resource == "leases") continue;
      EXPECT_TRUE(r.verb == "get" || r.verb == "list" || r.verb == "watch")
          << "standby " << i << ": " << r.method << " " << r.path;
    }
  }

  const json spec = lease()["spec"];
  const std::regex identity(std::regex_replace(hostname(), std::regex(R"([.\-])"), R"(\$&)") +
                            "_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(spec.value("holderIdentity", ""), identity)) << spec.dump();
  EXPECT_EQ(spec.value("holderIdentity", ""), replicas_[leader].identity);
  EXPECT_EQ(spec.value("leaseDurationSeconds", 0), 2);
  EXPECT_EQ(spec.value("leaseTransitions", -1), 0);  // created by its first holder, never moved
  const std::regex microTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  EXPECT_TRUE(std::regex_match(spec.value("acquireTime", ""), microTime)) << spec.dump();
  EXPECT_TRUE(std::regex_match(spec.value("renewTime", ""), microTime)) << spec.dump();
  // Only the leader ever held it, and every renewal kept the acquire time.
  for (const json& l : leaseHistory()) {
    EXPECT_EQ(l["spec"].value("holderIdentity", ""), replicas_[leader].identity) << l.dump();
    EXPECT_EQ(l["spec"].value("acquireTime", ""), spec.value("acquireTime", "")) << l.dump();
  }
}

TEST_F(LeaderElection, KilledLeaderIsReplacedWithinTheLeaseDuration) {
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast));
  ASSERT_NO_FATAL_FAILURE(awaitLeader(0));
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast));
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast));
  createPods("before-", 10);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 10s));

  replicas_[0].process->kill();
  const auto killed = Clock::now();
  createPods("after-", 10);
  ASSERT_TRUE(test::eventually([&] { return leaderIndex() > 0; }, 10s)) << holder();
  const auto handover = Clock::now() - killed;
  RecordProperty("handoverMs",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(handover).count()));
  // The standby saw the last renewal at most one jittered retry after it was written, waits the
  // lease duration from then, and tries again within another jittered retry.
  const milliseconds bound = kFast.leaseDuration + 2 * kFast.jitteredRetry() + 500ms;
  EXPECT_LT(handover, bound) << "handover took "
                             << std::chrono::duration_cast<milliseconds>(handover).count() << " ms";
  const int leader = leaderIndex();
  ASSERT_TRUE(replicas_[leader].process->waitForLogLine({"Started leading"}, 5s));
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 20s));

  expectEveryPodBoundOnce();
  const auto byNew = bindingsThrough(leader);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(byNew.contains("after-" + std::to_string(i)))
        << "after-" << i << " not bound by the new leader";
  }
  EXPECT_EQ(lease()["spec"].value("leaseTransitions", -1), 1);
  expectNoBindingThroughAfter(0, acquiredAt(replicas_[leader].identity));
  const int standby = leader == 1 ? 2 : 1;
  EXPECT_TRUE(bindingsThrough(standby).empty());
}

TEST_F(LeaderElection, PartitionedLeaderExitsBeforeAnotherAcquires) {
  // leaseDuration > renewDeadline + retryPeriod: a leader's last renewal round starts a retry
  // period after its last success and lasts the renew deadline, all before a standby may take over.
  const Timings t{3000ms, 1500ms, 500ms};
  ASSERT_NO_FATAL_FAILURE(startReplica(t));
  ASSERT_NO_FATAL_FAILURE(awaitLeader(0));
  ASSERT_NO_FATAL_FAILURE(startReplica(t));
  createPods("before-", 10);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 10s));

  // The old leader's API server refuses it until told otherwise below; pods keep arriving.
  replicas_[0].server->refuseConnectionsFor(60s);
  const auto partitioned = Clock::now();
  std::optional<Clock::time_point> exited, acquired;
  int created = 0;
  while (Clock::now() - partitioned < 15s && !(exited && acquired)) {
    if (!exited && !replicas_[0].process->running()) exited = Clock::now();
    if (!acquired && leaderIndex() == 1) acquired = Clock::now();
    if (created < 30 && Clock::now() - partitioned > created * 100ms) {
      ASSERT_NO_FATAL_FAILURE(createPods("during-" + std::to_string(created++) + "-", 1));
    }
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(exited) << "the partitioned leader did not exit";
  ASSERT_TRUE(acquired) << "the standby did not take over; holder: " << holder();
  EXPECT_LT(*exited, *acquired)
      << "old leader exited "
      << std::chrono::duration_cast<milliseconds>(*exited - *acquired).count()
      << " ms after the new one acquired";
  RecordProperty(
      "exitBeforeAcquireMs",
      static_cast<int>(std::chrono::duration_cast<milliseconds>(*acquired - *exited).count()));
  EXPECT_EQ(replicas_[0].process->exitCode().value_or(-1), 1);
  EXPECT_TRUE(replicas_[0].process->waitForLogLine({"leaderelection lost"}, 0ms));

  // Heal the partition: were the old leader still scheduling, its bindings would land now.
  const size_t oldLogSize = replicas_[0].server->requestLog().size();
  replicas_[0].server->refuseConnectionsFor(0ms);
  createPods("after-", 10);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 20s));

  expectEveryPodBoundOnce();
  expectNoBindingThroughAfter(0, acquiredAt(replicas_[1].identity));
  const auto oldLog = replicas_[0].server->requestLog();
  for (size_t i = oldLogSize; i < oldLog.size(); ++i) {
    EXPECT_NE(oldLog[i].subresource, "binding") << oldLog[i].path;
  }
}

TEST_F(LeaderElection, LeaderWhoseRenewalsHangExitsWithinTheRenewDeadline) {
  // As PartitionedLeaderExitsBeforeAnotherAcquires, but the network drops the old leader's lease
  // traffic instead of refusing it: its renewals hang while its bindings still go through. The
  // renew deadline bounds the whole renewal round, hung requests included (client-go runs the
  // round under a context with that deadline).
  const Timings t{3000ms, 1500ms, 500ms};
  ASSERT_NO_FATAL_FAILURE(startReplica(t, {}, /*proxied=*/true));
  ASSERT_NO_FATAL_FAILURE(awaitLeader(0));
  ASSERT_NO_FATAL_FAILURE(startReplica(t));
  createPods("before-", 10);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 10s));

  // berth's lease client keeps connections of its own, so this hangs the renewals while
  // scheduling traffic still flows.
  replicas_[0].proxy->stall("/leases/");
  const auto stalled = Clock::now();
  std::optional<Clock::time_point> exited, acquired;
  int created = 0;
  while (Clock::now() - stalled < 15s && !(exited && acquired)) {
    if (!exited && !replicas_[0].process->running()) exited = Clock::now();
    if (!acquired && leaderIndex() == 1) acquired = Clock::now();
    if (created < 40 && Clock::now() - stalled > created * 100ms) {
      ASSERT_NO_FATAL_FAILURE(createPods("during-" + std::to_string(created++) + "-", 1));
    }
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(exited) << "the leader did not exit";
  ASSERT_TRUE(acquired) << "the standby did not take over; holder: " << holder();
  EXPECT_EQ(replicas_[0].process->exitCode().value_or(-1), 1);
  // Its last renewal succeeded before the stall; the next round started a retry period after it.
  EXPECT_LT(*exited - stalled, t.retryPeriod + t.renewDeadline + 300ms)
      << "exited " << std::chrono::duration_cast<milliseconds>(*exited - stalled).count()
      << " ms after its lease traffic stalled";
  EXPECT_LT(*exited, *acquired)
      << "old leader exited "
      << std::chrono::duration_cast<milliseconds>(*exited - *acquired).count()
      << " ms after the new one acquired";
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 20s));
  expectEveryPodBoundOnce();
  expectNoBindingThroughAfter(0, acquiredAt(replicas_[1].identity));
}

TEST_F(LeaderElection, SigtermReleasesTheLeaseForAnImmediateHandover) {
  const Timings t{10000ms, 5000ms, 500ms};
  ASSERT_NO_FATAL_FAILURE(startReplica(t));
  ASSERT_NO_FATAL_FAILURE(awaitLeader(0));
  ASSERT_NO_FATAL_FAILURE(startReplica(t));
  // The standby has read the Lease: it is in its acquire loop.
  ASSERT_TRUE(
      replicas_[1].process->waitForLogLine({"new leader elected", replicas_[0].identity}, 5s));
  createPods("before-", 5);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 10s));

  // Slow bindings, so that some are in flight when the signal arrives.
  replicas_[0].server->delayBindings(300ms);
  createPods("inflight-", 5);
  ASSERT_TRUE(
      replicas_[0].process->waitForLogLine({"Attempting to schedule pod", "inflight-4"}, 5s));
  const auto signalled = Clock::now();
  EXPECT_EQ(replicas_[0].process->terminate(10s), 0);
  ASSERT_TRUE(test::eventually([&] { return leaderIndex() == 1; }, 5s)) << holder();
  const auto handover = Clock::now() - signalled;
  RecordProperty("handoverMs",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(handover).count()));
  EXPECT_LT(handover, 3s) << "handover took "
                          << std::chrono::duration_cast<milliseconds>(handover).count() << " ms";

  // The old leader wrote the release (no holder, one second) after its last binding, and the
  // standby took over from it.
  uint64_t releasedAt = 0;
  for (const json& l : leaseHistory()) {
    if (l["spec"].value("holderIdentity", "x").empty()) {
      releasedAt = resourceVersionOf(l);
      EXPECT_EQ(l["spec"].value("leaseDurationSeconds", 0), 1) << l.dump();
      break;
    }
  }
  ASSERT_NE(releasedAt, 0u) << "no release was written";
  EXPECT_LT(releasedAt, acquiredAt(replicas_[1].identity));
  expectNoBindingThroughAfter(0, releasedAt);
  EXPECT_EQ(lease()["spec"].value("leaseTransitions", -1), 1);

  createPods("after-", 5);
  ASSERT_TRUE(test::eventually([&] { return allBound(); }, 10s));
  expectEveryPodBoundOnce();
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(bindingsThrough(1).contains("after-" + std::to_string(i))) << "after-" << i;
  }
}

TEST_F(LeaderElection, MetricsAndReadinessReportLeaderAndStandby) {
  const std::vector<std::string> lock = {"--leader-elect-resource-namespace", "berth-system",
                                         "--leader-elect-resource-name", "berth-e2e"};
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast, lock));
  ASSERT_TRUE(test::eventually([&] { return !lease("berth-system", "berth-e2e").is_null(); }, 10s));
  ASSERT_TRUE(replicas_[0].process->waitForLogLine({"Started leading"}, 5s));
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast, lock));
  EXPECT_EQ(lease("berth-system", "berth-e2e")["spec"].value("holderIdentity", ""),
            replicas_[0].identity);
  EXPECT_TRUE(lease().is_null()) << "the default lock was taken despite the flags";

  auto scrape = [&](size_t index, const std::string& path) {
    auto reply = test::httpsGet(replicas_[index].healthPort, path);
    return reply.ok() ? *reply : test::HttpReply{};
  };
  auto masterStatus = [&](size_t index) -> std::string {
    const std::string body = scrape(index, "/metrics").body;
    const std::string prefix = "leader_election_master_status{name=\"berth-e2e\"} ";
    const size_t at = body.find(prefix);
    if (at == std::string::npos) return "";
    return body.substr(at + prefix.size(), body.find('\n', at) - at - prefix.size());
  };
  EXPECT_TRUE(test::eventually([&] { return masterStatus(0) == "1"; }, 5s)) << masterStatus(0);
  EXPECT_TRUE(test::eventually([&] { return masterStatus(1) == "0"; }, 5s)) << masterStatus(1);
  // A standby is ready once its informers synced: a load balancer may send it traffic.
  EXPECT_TRUE(test::eventually(
      [&] {
        test::HttpReply r = scrape(1, "/readyz");
        return r.code == 200 && r.body == "ok";
      },
      10s))
      << scrape(1, "/readyz?verbose").body;
  EXPECT_EQ(scrape(1, "/healthz").body, "ok");
  EXPECT_EQ(scrape(0, "/readyz").code, 200);

  EXPECT_EQ(replicas_[0].process->terminate(10s), 0);
  EXPECT_TRUE(test::eventually([&] { return masterStatus(1) == "1"; }, 5s)) << masterStatus(1);
}

TEST_F(LeaderElection, LeaseIsNamedAfterTheSchedulerByDefault) {
  ASSERT_NO_FATAL_FAILURE(startReplica(kFast, {"--scheduler-name", "batch-scheduler"}));
  EXPECT_TRUE(
      test::eventually([&] { return !lease("kube-system", "batch-scheduler").is_null(); }, 5s))
      << "no Lease kube-system/batch-scheduler; kube-system/berth "
      << (lease().is_null() ? "does not exist either" : "was taken instead");
}

}  // namespace
}  // namespace berth
