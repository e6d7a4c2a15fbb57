// Cache: assumed and bound pods on nodes, terminal pods, kubelet rejections and incremental
// snapshots (upstream's backend/cache/cache_test.go), read through updateSnapshot.

#include "pkg/cache/cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/builders.h"

namespace berth::cache {
namespace {

using namespace std::chrono_literals;
using test::MakeNode;
using test::MakePod;

struct Env {
  explicit Env(CacheOptions options = {}) : cache(clock, options) {}

  void addNodes(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      cache.addNode(MakeNode().name(name).allocatable({{"cpu", "4"}, {"pods", "110"}}).obj());
    }
  }
  // Requested milli-CPU on the node in a freshly updated snapshot; -1 when the snapshot lacks it.
  int64_t cpu(const std::string& node) {
    cache.updateSnapshot(snapshot);
    const framework::NodeInfo* info = snapshot.get(node);
    return info ? info->requested().milliCPU : -1;
  }
  std::vector<std::string> nodeNames() {
    cache.updateSnapshot(snapshot);
    std::vector<std::string> names;
    for (const auto& info : snapshot.nodeInfos()) names.push_back(info->name());
    return names;
  }

  util::FakeClock clock;
  Cache cache;
  framework::Snapshot snapshot;
};

// A pod bound (or to be assumed) on `node` asking for `cpu`.
test::PodWrapper boundPod(const std::string& name, const std::string& node,
                          const std::string& cpu = "500m") {
  return std::move(MakePod().name(name).uid(name + "-uid").node(node).req({{"cpu", cpu}}));
}

api::PodPtr withStatus(const api::PodPtr& pod, std::string phase, std::string reason = "") {
  auto copy = std::make_shared<api::Pod>(*pod);
  copy->status.phase = std::move(phase);
  copy->status.reason = std::move(reason);
  return copy;
}

TEST(Cache, AssumedPodCountsUntilForgotten) {
  Env env;
  env.addNodes({"n1"});
  auto pod = boundPod("p", "n1").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
  EXPECT_TRUE(env.cache.isAssumed(*pod));
  EXPECT_EQ(env.cpu("n1"), 500);
  EXPECT_EQ(env.cache.size().assumedPods, 1u);
  env.cache.finishBinding(*pod);
  EXPECT_EQ(env.cpu("n1"), 500) << "sending the binding frees nothing";

  ASSERT_TRUE(env.cache.forgetPod(*pod).ok());
  EXPECT_FALSE(env.cache.isAssumed(*pod));
  EXPECT_EQ(env.cpu("n1"), 0);
  EXPECT_EQ(env.cache.size().pods, 0u);
  EXPECT_EQ(env.cache.size().assumedPods, 0u);
  EXPECT_TRUE(env.cache.forgetPod(*pod).ok()) << "forgetting a pod no longer cached is fine";
}

TEST(Cache, AssumeAndForgetErrors) {
  Env env;
  env.addNodes({"n1", "n2"});
  auto pod = boundPod("p", "n1").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());

  struct Case {
    const char* name;
    util::Result<void> got;
    std::string want;
  };
  const Case cases[] = {
      {"assumed twice", env.cache.assumePod(framework::makePodInfo(pod)),
       "pod p-uid(default/p) is in the cache, so can't be assumed"},
      {"assumed without a node", env.cache.assumePod(MakePod().name("q").info()),
       "pod default/q: spec.nodeName: must be set to assume the pod"},
      {"forgotten on another node", env.cache.forgetPod(*boundPod("p", "n2").obj()),
       "pod p-uid(default/p) was assumed on n2 but assigned to n1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.got.ok());
    EXPECT_EQ(c.got.error().message, c.want);
  }

  ASSERT_TRUE(env.cache.addPod(pod).ok());
  auto notAssumed = env.cache.forgetPod(*pod);
  ASSERT_FALSE(notAssumed.ok());
  EXPECT_EQ(notAssumed.error().message,
            "pod p-uid(default/p) is not assumed, so it cannot be removed or forgotten");
  EXPECT_EQ(env.cpu("n1"), 500);
}

TEST(Cache, ConfirmsAssumedPodOnAdd) {
  Env env;
  env.addNodes({"n1"});
  auto pod = boundPod("p", "n1").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
  env.cache.finishBinding(*pod);
  auto bound = withStatus(pod, "Pending");
  ASSERT_TRUE(env.cache.addPod(bound).ok());
  EXPECT_FALSE(env.cache.isAssumed(*pod));
  EXPECT_EQ(env.cpu("n1"), 500) << "the confirmed pod replaces the assumed copy";
  ASSERT_EQ(env.snapshot.get("n1")->pods().size(), 1u);
  EXPECT_EQ(env.snapshot.get("n1")->pods()[0]->pod, bound);
  const CacheSize size = env.cache.size();
  EXPECT_EQ(size.pods, 1u);
  EXPECT_EQ(size.assumedPods, 0u);
}

TEST(Cache, ConfirmOnDifferentNodeMovesUsage) {
  Env env;
  env.addNodes({"n1", "n2"});
  auto assumed = boundPod("p", "n1").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(assumed)).ok());
  ASSERT_TRUE(env.cache.addPod(boundPod("p", "n2").obj()).ok());
  EXPECT_EQ(env.cpu("n1"), 0);
  EXPECT_EQ(env.cpu("n2"), 500);
  EXPECT_EQ(env.cache.size().pods, 1u);
}

TEST(Cache, UpdatePodMovesRequests) {
  struct Case {
    const char* name;
    api::PodPtr updated;
    int64_t wantN1, wantN2;
  };
  const Case cases[] = {
      {"requests grew", boundPod("p", "n1", "1500m").obj(), 1500, 0},
      {"status only", withStatus(boundPod("p", "n1").obj(), "Running"), 500, 0},
      {"reported on another node", boundPod("p", "n2", "200m").obj(), 0, 200},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.addNodes({"n1", "n2"});
    ASSERT_TRUE(env.cache.addPod(boundPod("p", "n1").obj()).ok());
    ASSERT_TRUE(env.cache.addPod(boundPod("other", "n1", "100m").obj()).ok());
    ASSERT_TRUE(env.cache.updatePod(c.updated).ok());
    EXPECT_EQ(env.cpu("n1"), c.wantN1 + 100);
    EXPECT_EQ(env.cpu("n2"), c.wantN2);
    EXPECT_EQ(env.cache.size().pods, 2u);
  }
}

TEST(Cache, UpdateMovesHostPorts) {
  Env env;
  env.addNodes({"n1"});
  ASSERT_TRUE(env.cache.addPod(boundPod("p", "n1").hostPort(8080).obj()).ok());
  ASSERT_TRUE(env.cache.updatePod(boundPod("p", "n1").hostPort(9090).obj()).ok());
  env.cache.updateSnapshot(env.snapshot);
  const auto& ports = env.snapshot.get("n1")->usedPorts();
  EXPECT_FALSE(ports.conflicts({"0.0.0.0", "TCP", 8080}));
  EXPECT_TRUE(ports.conflicts({"0.0.0.0", "TCP", 9090}));
}

TEST(Cache, TerminalPodsFreeTheirRequests) {
  struct Case {
    const char* name;
    std::string phase;
    bool viaAdd;  // the terminal version arrives as an add (e.g. a re-list) instead of an update
  };
  const Case cases[] = {
      {"update to Succeeded", "Succeeded", false},
      {"update to Failed", "Failed", false},
      {"add of a Succeeded pod", "Succeeded", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.addNodes({"n1"});
    auto pod = boundPod("p", "n1").obj();
    ASSERT_TRUE(env.cache.addPod(pod).ok());
    ASSERT_TRUE(env.cache.addPod(boundPod("stays", "n1", "100m").obj()).ok());
    auto ended = withStatus(pod, c.phase);
    ASSERT_TRUE((c.viaAdd ? env.cache.addPod(ended) : env.cache.updatePod(ended)).ok());
    EXPECT_EQ(env.cpu("n1"), 100);
    EXPECT_EQ(env.cache.size().pods, 1u);
    ASSERT_TRUE(env.cache.removePod(*ended).ok()) << "deleting the ended pod later is fine";
    EXPECT_EQ(env.cpu("n1"), 100);
  }
}

TEST(Cache, TerminalPodsAreNeverCounted) {
  Env env;
  env.addNodes({"n1"});
  auto done = withStatus(boundPod("done", "n1").obj(), "Succeeded");
  ASSERT_TRUE(env.cache.addPod(done).ok());
  EXPECT_EQ(env.cpu("n1"), 0);
  EXPECT_EQ(env.cache.size().pods, 0u);
  EXPECT_TRUE(env.cache.removePod(*done).ok());

  auto missing = env.cache.removePod(*boundPod("ghost", "n1").obj());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "pod ghost-uid(default/ghost) is not found in scheduler cache, so cannot be removed "
            "from it");
}

TEST(Cache, KubeletRejectionFreesOnlyOnce) {
  struct Case {
    const char* name;
    bool assumed;        // berth placed the pod
    bool confirmed;      // the informer's add arrived before the failure
    std::string reason;  // status.reason of the Failed pod
    std::map<std::string, int64_t> wantRejections;
  };
  const Case cases[] = {
      {"placed, confirmed, then OutOfcpu", true, true, "OutOfcpu", {{"OutOfcpu", 1}}},
      {"placed and rejected before the add arrived",
       true,
       false,
       "OutOfmemory",
       {{"OutOfmemory", 1}}},
      {"placed, UnexpectedAdmissionError",
       true,
       true,
       "UnexpectedAdmissionError",
       {{"UnexpectedAdmissionError", 1}}},
      {"placed, extended resource",
       true,
       true,
       "OutOfnvidia.com/gpu",
       {{"OutOfnvidia.com/gpu", 1}}},
      {"placed, but failed while running: not a rejection", true, true, "", {}},
      {"placed, evicted: not a rejection", true, true, "Evicted", {}},
      {"bound by another scheduler", false, true, "OutOfpods", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.addNodes({"n1"});
    ASSERT_TRUE(env.cache.addPod(boundPod("neighbour", "n1", "300m").obj()).ok());
    auto pod = boundPod("p", "n1").obj();
    if (c.assumed) {
      ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
    }
    if (c.confirmed) {
      ASSERT_TRUE(env.cache.addPod(pod).ok());
    }
    EXPECT_EQ(env.cpu("n1"), 800);

    auto failed = withStatus(pod, "Failed", c.reason);
    ASSERT_TRUE(env.cache.updatePod(failed).ok());
    EXPECT_EQ(env.cpu("n1"), 300);
    // The same Failed pod again, then its deletion: nothing more to free.
    ASSERT_TRUE(env.cache.updatePod(failed).ok());
    ASSERT_TRUE(env.cache.addPod(failed).ok());
    ASSERT_TRUE(env.cache.removePod(*failed).ok());
    EXPECT_EQ(env.cpu("n1"), 300);
    EXPECT_FALSE(env.cache.isAssumed(*pod));
    EXPECT_EQ(env.cache.kubeletRejections(), c.wantRejections);
  }
}

TEST(Cache, KubeletAdmissionReasons) {
  for (const char* reason : {"OutOfcpu", "OutOfmemory", "OutOfpods", "OutOfephemeral-storage",
                             "UnexpectedAdmissionError", "NodeAffinity", "TaintToleration"}) {
    EXPECT_TRUE(isKubeletAdmissionRejection(reason)) << reason;
  }
  for (const char* reason : {"", "Evicted", "DeadlineExceeded", "OutOf", "Shutdown"}) {
    EXPECT_FALSE(isKubeletAdmissionRejection(reason)) << reason;
  }
}

TEST(Cache, PodOnUnknownNodeCountsWhenNodeAppears) {
  Env env;
  env.addNodes({"n1"});
  ASSERT_TRUE(env.cache.addPod(boundPod("early", "late-node").obj()).ok());
  EXPECT_EQ(env.nodeNames(), std::vector<std::string>{"n1"});
  EXPECT_EQ(env.cache.size().pods, 1u);
  EXPECT_EQ(env.cache.size().nodes, 1u);

  env.addNodes({"late-node"});
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"n1", "late-node"}));
  EXPECT_EQ(env.cpu("late-node"), 500);
}

TEST(Cache, RemovedNodeLeavesSnapshot) {
  Env env;
  env.addNodes({"a", "b", "c"});
  ASSERT_TRUE(env.cache.addPod(boundPod("on-b", "b").obj()).ok());
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"a", "b", "c"}));

  ASSERT_TRUE(env.cache.removeNode(*MakeNode().name("b").obj()).ok());
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(env.cache.size().nodes, 2u);
  EXPECT_EQ(env.cache.size().pods, 1u) << "the pod stays until its deletion arrives";

  // The node comes back before the pod's deletion: the pod counts on it again.
  env.addNodes({"b"});
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(env.cpu("b"), 500);

  ASSERT_TRUE(env.cache.removeNode(*MakeNode().name("b").obj()).ok());
  ASSERT_TRUE(env.cache.removePod(*boundPod("on-b", "b").obj()).ok());
  ASSERT_TRUE(env.cache.removeNode(*MakeNode().name("a").obj()).ok());
  EXPECT_EQ(env.nodeNames(), std::vector<std::string>{"c"});
  EXPECT_EQ(env.cache.size().pods, 0u);

  auto missing = env.cache.removeNode(*MakeNode().name("b").obj());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "node b is not found");
}

TEST(Cache, RemoveAndAddBetweenSnapshots) {
  Env env;
  env.addNodes({"a", "b"});
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(env.cache.removeNode(*MakeNode().name("a").obj()).ok());
  env.addNodes({"c"});
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"b", "c"}));
}

TEST(Cache, SnapshotCopiesOnlyChangedNodes) {
  Env env;
  env.addNodes({"n1", "n2", "n3"});
  env.cache.updateSnapshot(env.snapshot);
  std::map<std::string, framework::NodeInfoPtr> before;
  for (const auto& info : env.snapshot.nodeInfos()) before[info->name()] = info;

  auto pod = boundPod("p", "n2").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
  env.cache.updateSnapshot(env.snapshot);
  for (const auto& info : env.snapshot.nodeInfos()) {
    SCOPED_TRACE(info->name());
    if (info->name() == "n2") {
      EXPECT_NE(info, before["n2"]) << "a changed node is a new copy";
      EXPECT_EQ(info->requested().milliCPU, 500);
    } else {
      EXPECT_EQ(info, before[info->name()]) << "an unchanged node is not copied";
    }
  }
  EXPECT_EQ(before["n2"]->requested().milliCPU, 0) << "the previous copy is left as it was";

  // Nothing changed: nothing is copied.
  auto n2 = env.snapshot.nodeInfos()[1];
  env.cache.updateSnapshot(env.snapshot);
  EXPECT_EQ(env.snapshot.nodeInfos()[1], n2);
}

TEST(Cache, SnapshotIsTheCyclesOwnCopy) {
  Env env;
  env.addNodes({"n1"});
  env.cache.updateSnapshot(env.snapshot);
  ASSERT_TRUE(env.cache.addPod(boundPod("p", "n1").obj()).ok());
  env.cache.addNode(MakeNode().name("n1").label("zone", "b").allocatable({{"cpu", "8"}}).obj());
  EXPECT_EQ(env.snapshot.get("n1")->requested().milliCPU, 0);
  EXPECT_EQ(env.snapshot.get("n1")->allocatable().milliCPU, 4000);
  env.cache.updateSnapshot(env.snapshot);
  EXPECT_EQ(env.snapshot.get("n1")->requested().milliCPU, 500);
  EXPECT_EQ(env.snapshot.get("n1")->allocatable().milliCPU, 8000);
}

TEST(Cache, SnapshotKeepsNodeOrder) {
  Env env;
  env.addNodes({"c", "a", "b"});
  framework::Snapshot fresh;
  env.cache.updateNode(MakeNode().name("a").label("x", "y").obj());
  ASSERT_TRUE(env.cache.addPod(boundPod("p", "c").obj()).ok());
  env.cache.updateSnapshot(fresh);
  std::vector<std::string> names;
  for (const auto& info : fresh.nodeInfos()) names.push_back(info->name());
  EXPECT_EQ(names, (std::vector<std::string>{"c", "a", "b"})) << "the order nodes arrived in";
  env.cache.updateNode(MakeNode().name("b").label("x", "z").obj());
  EXPECT_EQ(env.nodeNames(), (std::vector<std::string>{"c", "a", "b"}));
}

TEST(Cache, AssumedPodExpiresOnlyWithTtlAfterBinding) {
  struct Case {
    const char* name;
    util::Duration ttl;
    bool finishBinding;
    util::Duration wait;
    size_t wantExpired;
  };
  const Case cases[] = {
      {"default: never", util::Duration::zero(), true, 24h, 0},
      {"TTL not reached", 30s, true, 29s, 0},
      {"TTL reached", 30s, true, 30s, 1},
      {"binding never sent: kept", 30s, false, 1h, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(CacheOptions{.assumedPodTtl = c.ttl});
    env.addNodes({"n1"});
    auto pod = boundPod("p", "n1").obj();
    ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
    if (c.finishBinding) env.cache.finishBinding(*pod);
    env.clock.advance(c.wait);
    EXPECT_EQ(env.cache.cleanupAssumedPods(), c.wantExpired);
    EXPECT_EQ(env.cpu("n1"), c.wantExpired ? 0 : 500);
    EXPECT_EQ(env.cache.isAssumed(*pod), c.wantExpired == 0);
  }
}

TEST(Cache, ConfirmedPodNeverExpires) {
  Env env(CacheOptions{.assumedPodTtl = 1s});
  env.addNodes({"n1"});
  auto pod = boundPod("p", "n1").obj();
  ASSERT_TRUE(env.cache.assumePod(framework::makePodInfo(pod)).ok());
  env.cache.finishBinding(*pod);
  ASSERT_TRUE(env.cache.addPod(pod).ok());
  env.clock.advance(1h);
  EXPECT_EQ(env.cache.cleanupAssumedPods(), 0u);
  EXPECT_EQ(env.cpu("n1"), 500);
}

TEST(Cache, SizeCountsNodesPodsAndAssumedPods) {
  Env env;
  env.addNodes({"n1", "n2"});
  ASSERT_TRUE(env.cache.addPod(boundPod("a", "n1").obj()).ok());
  ASSERT_TRUE(env.cache.addPod(boundPod("orphan", "gone").obj()).ok());
  ASSERT_TRUE(env.cache.assumePod(boundPod("b", "n2").info()).ok());
  const CacheSize size = env.cache.size();
  EXPECT_EQ(size.nodes, 2u);
  EXPECT_EQ(size.pods, 3u);
  EXPECT_EQ(size.assumedPods, 1u);
}

TEST(Cache, SnapshotWhileInformersWrite) {
  Env env;
  env.addNodes({"n1", "n2"});
  std::atomic<bool> stop{false};
  // An informer thread assumes and forgets a pod on n1 and churns n2's object.
  std::thread informer([&] {
    auto pod = boundPod("p", "n1").obj();
    for (int i = 0; i < 2000; i++) {
      if (!env.cache.assumePod(framework::makePodInfo(pod)).ok()) break;
      env.cache.updateNode(MakeNode().name("n2").label("i", std::to_string(i)).obj());
      if (!env.cache.forgetPod(*pod).ok()) break;
    }
    stop = true;
  });
  // The scheduling cycle sees n1 either with the pod or without it, never half of it.
  framework::Snapshot snapshot;
  while (!stop) {
    env.cache.updateSnapshot(snapshot);
    const framework::NodeInfo* n1 = snapshot.get("n1");
    if (snapshot.numNodes() != 2 || !n1) {
      ADD_FAILURE() << "snapshot lost a node";
      break;
    }
    EXPECT_EQ(n1->requested().milliCPU, 500 * static_cast<int64_t>(n1->pods().size()));
  }
  informer.join();
  env.cache.updateSnapshot(snapshot);
  EXPECT_EQ(snapshot.get("n1")->requested().milliCPU, 0);
  EXPECT_EQ(env.cache.size().pods, 0u);
}

TEST(Cache, PodsWithoutUidAreKeyedByName) {
  Env env;
  env.addNodes({"n1"});
  auto pod = MakePod().name("nouid").node("n1").req({{"cpu", "250m"}}).obj();
  ASSERT_TRUE(env.cache.addPod(pod).ok());
  ASSERT_TRUE(env.cache.removePod(*pod).ok());
  EXPECT_EQ(env.cpu("n1"), 0);
}

}  // namespace
}  // namespace berth::cache
