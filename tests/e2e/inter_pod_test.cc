// End-to-end tests of the inter-pod plugins: the real `berth run` process against the embedded API
// server, placing replicas with pod anti-affinity and bursts with zone spreading, retrying a
// rejected replica when the conflicting pod goes away, and reporting pods whose constraints do not
// parse without stopping the others.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/berth_daemon_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::Resource;
using test::eventually;
using test::nodeJson;
using test::podJson;
using namespace std::chrono_literals;

constexpr const char* kZone = "topology.kubernetes.io/zone";

class InterPodDaemon : public test::BerthDaemonTest {
 protected:
  json pod(const std::string& name) {
    auto r = store_.get(Resource::Pods, "default", name);
    return r.ok() ? *r : json();
  }

  // The message of pod `name`'s PodScheduled=False condition with `reason`; "" without one.
  std::string notScheduled(const std::string& name, const std::string& reason) {
    for (const json& c : pod(name)["status"].value("conditions", json::array())) {
      if (c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == reason) {
        return c.value("message", "");
      }
    }
    return "";
  }

  // The note of berth's first FailedScheduling event about pod `name`; "" before there is one.
  std::string failedSchedulingNote(const std::string& name) {
    auto events = store_.list(Resource::EventsV1, "default");
    if (!events.ok()) return "";
    for (const json& e : events->items) {
      if (e["reason"] == "FailedScheduling" && e["regarding"]["name"] == name &&
          e["reportingController"] == "berth") {
        return e.value("note", "");
      }
    }
    return "";
  }
};

// A replica of ReplicaSet default/web (uid `owner`): labelled app=web, never on a node that
// already runs one.
json webReplica(const std::string& name, const std::string& owner) {
  json p = podJson(name, "100m");
  p["metadata"]["labels"] = {{"app", "web"}};
  p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                       {"kind", "ReplicaSet"},
                                       {"name", "web"},
                                       {"uid", owner},
                                       {"controller", true}}};
  p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {{"labelSelector", {{"matchLabels", {{"app", "web"}}}}},
       {"topologyKey", "kubernetes.io/hostname"}}};
  return p;
}

TEST_F(InterPodDaemon, ReplicasLandOnePerNodeAndTheExtraOneIsBoundOnceAConflictingOneIsGone) {
  for (int i = 0; i < 3; ++i) create(Resource::Nodes, nodeJson("n" + std::to_string(i), "4"));
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web"}, {"namespace", "default"}}},
             {"spec",
              {{"replicas", 4},
               {"selector", {{"matchLabels", {{"app", "web"}}}}},
               {"template",
                {{"metadata", {{"labels", {{"app", "web"}}}}},
                 {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}}}}}};
  create(Resource::ReplicaSets, rs);
  auto stored = store_.get(Resource::ReplicaSets, "default", "web");
  ASSERT_TRUE(stored.ok());
  const std::string owner = (*stored)["metadata"].value("uid", "");
  ASSERT_FALSE(owner.empty());
  for (int i = 0; i < 3; ++i) create(Resource::Pods, webReplica("web-" + std::to_string(i), owner));
  startBerth();

  ASSERT_TRUE(eventually([&] {
    return !nodeOf("web-0").empty() && !nodeOf("web-1").empty() && !nodeOf("web-2").empty();
  }));
  EXPECT_EQ((std::set<std::string>{nodeOf("web-0"), nodeOf("web-1"), nodeOf("web-2")}).size(), 3u);

  create(Resource::Pods, webReplica("web-3", owner));
  const std::string expected =
      "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 "
      "nodes are available: 3 No preemption victims found for incoming pod.";
  ASSERT_TRUE(eventually([&] { return notScheduled("web-3", "Unschedulable") == expected; }))
      << pod("web-3").dump();
  ASSERT_TRUE(eventually([&] { return failedSchedulingNote("web-3") == expected; }));
  EXPECT_EQ(nodeOf("web-3"), "");

  // The deletion is a cluster event InterPodAffinity registers: the rejected replica is retried
  // at once, not at the 5-minute flush of the unschedulable pods.
  const std::string freed = nodeOf("web-1");
  ASSERT_TRUE(store_.remove(Resource::Pods, "default", "web-1", {}, /*gracePeriodSeconds=*/0).ok());
  EXPECT_TRUE(eventually([&] { return nodeOf("web-3") == freed; }, 20s))
      << "web-3 on \"" << nodeOf("web-3") << "\"";
  EXPECT_EQ(berth_->terminate(10s), 0);
}

// A pod labelled app=spread that keeps the app=spread pods' zone counts within maxSkew 1.
json spreadPod(const std::string& name) {
  json p = podJson(name, "100m");
  p["metadata"]["labels"] = {{"app", "spread"}};
  p["spec"]["topologySpreadConstraints"] = {
      {{"maxSkew", 1},
       {"topologyKey", kZone},
       {"whenUnsatisfiable", "DoNotSchedule"},
       {"labelSelector", {{"matchLabels", {{"app", "spread"}}}}}}};
  return p;
}

TEST_F(InterPodDaemon, ABurstSpreadOverZonesKeepsTheSkewAndAPodThatWouldExceedItIsReported) {
  std::map<std::string, std::string> zoneOf;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "n" + std::to_string(i);
    zoneOf[name] = std::string(1, static_cast<char>('a' + i % 3));
    create(Resource::Nodes, nodeJson(name, "16", {{kZone, zoneOf[name]}}));
  }
  auto watch = store_.watch(Resource::Pods, "default", {});
  ASSERT_TRUE(watch.ok());
  constexpr int kBurst = 30;
  for (int i = 0; i < kBurst; ++i) create(Resource::Pods, spreadPod("spread-" + std::to_string(i)));
  startBerth();

  // Where each pod was bound, from the watch (no pod bound twice or moved). The skew is checked
  // once all are bound: bindings land concurrently, so the watch's order need not be the order
  // berth decided them in (each decision is checked in tests/unit/algorithm).
  std::map<std::string, std::string> boundTo;
  std::map<std::string, int> perZone;
  ASSERT_TRUE(eventually(
      [&] {
        for (const apiserver::WatchEvent& e : (*watch)->drain()) {
          const std::string node = e.object["spec"].value("nodeName", "");
          const std::string name = e.object["metadata"].value("name", "");
          if (node.empty()) continue;
          auto [it, first] = boundTo.emplace(name, node);
          if (!first) {
            EXPECT_EQ(it->second, node) << name << " moved";
            continue;
          }
          ++perZone[zoneOf[node]];
        }
        return boundTo.size() == static_cast<size_t>(kBurst);
      },
      60s))
      << boundTo.size() << " bound";
  ASSERT_EQ(perZone.size(), 3u);
  const auto [lo, hi] =
      std::minmax_element(perZone.begin(), perZone.end(),
                          [](const auto& x, const auto& y) { return x.second < y.second; });
  EXPECT_LE(hi->second - lo->second, 1)
      << "a=" << perZone["a"] << " b=" << perZone["b"] << " c=" << perZone["c"];

  // One more app=spread pod in zone a, placed by berth so that berth counts it before the next:
  // zone a now holds one more than b and c.
  json extra = podJson("extra-a", "100m");
  extra["metadata"]["labels"] = {{"app", "spread"}};
  extra["spec"]["nodeSelector"] = {{kZone, "a"}};
  create(Resource::Pods, extra);
  ASSERT_TRUE(eventually([&] { return !nodeOf("extra-a").empty(); }));

  // Pinned to zone a, with every zone in the skew (nodeAffinityPolicy Ignore): a would lead by 2.
  json pinned = spreadPod("pinned");
  pinned["spec"]["nodeSelector"] = {{kZone, "a"}};
  pinned["spec"]["topologySpreadConstraints"][0]["nodeAffinityPolicy"] = "Ignore";
  create(Resource::Pods, pinned);
  const std::string expected =
      "0/6 nodes are available: 2 node(s) didn't match pod topology spread constraints, "
      "4 node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are available: "
      "2 No preemption victims found for incoming pod, 4 Preemption is not helpful for "
      "scheduling.";
  ASSERT_TRUE(eventually([&] { return notScheduled("pinned", "Unschedulable") == expected; }))
      << pod("pinned").dump();
  EXPECT_TRUE(eventually([&] { return failedSchedulingNote("pinned") == expected; }));
  EXPECT_EQ(nodeOf("pinned"), "");
  EXPECT_EQ(berth_->terminate(10s), 0);
}

TEST_F(InterPodDaemon, ReportsPodsWhoseConstraintsDoNotParseAndKeepsSchedulingTheRest) {
  create(Resource::Nodes, nodeJson("n0", "4", {{kZone, "a"}}));
  create(Resource::Nodes, nodeJson("n1", "4", {{kZone, "b"}}));
  json badSelector = podJson("bad-selector");
  badSelector["spec"]["affinity"]["podAntiAffinity"]
             ["requiredDuringSchedulingIgnoredDuringExecution"] = {
                 {{"labelSelector",
                   {{"matchExpressions",
                     {{{"key", "app"}, {"operator", "Matches"}, {"values", {"web"}}}}}}},
                  {"topologyKey", "kubernetes.io/hostname"}}};
  create(Resource::Pods, badSelector);
  json badSkew = podJson("bad-skew");
  badSkew["metadata"]["labels"] = {{"app", "skew"}};
  badSkew["spec"]["topologySpreadConstraints"] = {
      {{"maxSkew", 0},
       {"topologyKey", kZone},
       {"whenUnsatisfiable", "DoNotSchedule"},
       {"labelSelector", {{"matchLabels", {{"app", "skew"}}}}}}};
  create(Resource::Pods, badSkew);
  startBerth();

  // InterPodAffinity's PreFilter rejects a pod whose terms do not parse as unresolvable, as
  // upstream's "parsing pod: %+v".
  const std::string selectorProblem =
      "0/2 nodes are available: parsing pod: "
      "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
      "labelSelector: \"Matches\" is not a valid pod selector operator. preemption: 0/2 nodes "
      "are available: 2 Preemption is not helpful for scheduling.";
  ASSERT_TRUE(eventually([&] {
    return notScheduled("bad-selector", "Unschedulable") == selectorProblem;
  })) << pod("bad-selector").dump();
  EXPECT_TRUE(eventually([&] { return failedSchedulingNote("bad-selector") == selectorProblem; }));
  EXPECT_TRUE(berth_->waitForLogLine(
      {"Unable to schedule pod; no fit; waiting", "pod=\"default/bad-selector\"",
       "requiredDuringSchedulingIgnoredDuringExecution[0]"},
      30s))
      << berth_->logTail();

  // PodTopologySpread's is an error: condition SchedulerError, retried with backoff.
  const std::string skewProblem =
      "running PreFilter plugin \"PodTopologySpread\": "
      "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero";
  ASSERT_TRUE(eventually([&] { return notScheduled("bad-skew", "SchedulerError") == skewProblem; }))
      << pod("bad-skew").dump();
  EXPECT_TRUE(eventually([&] { return failedSchedulingNote("bad-skew") == skewProblem; }));
  EXPECT_TRUE(berth_->waitForLogLine({"Error scheduling pod; retrying", "pod=\"default/bad-skew\"",
                                      "spec.topologySpreadConstraints[0].maxSkew"},
                                     30s))
      << berth_->logTail();
  // Retried with backoff (1 s, then 2 s), not parked until a cluster event or the flush.
  EXPECT_TRUE(eventually([&] {
    const std::string log = berth_->log();
    size_t attempts = 0;
    for (size_t at = log.find("\"Error scheduling pod; retrying\""); at != std::string::npos;
         at = log.find("\"Error scheduling pod; retrying\"", at + 1)) {
      ++attempts;
    }
    return attempts >= 2;
  }));

  create(Resource::Pods, podJson("normal"));
  EXPECT_TRUE(eventually([&] { return !nodeOf("normal").empty(); }));
  EXPECT_EQ(nodeOf("bad-selector"), "");
  EXPECT_EQ(nodeOf("bad-skew"), "");
  EXPECT_EQ(berth_->terminate(10s), 0);
}

}  // namespace
}  // namespace berth
