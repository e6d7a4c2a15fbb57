// End-to-end tests of preemption: the real `berth run` process, with its default profile's
// DefaultPreemption, against the embedded API server and the kubelet stand-in that finalizes
// graceful pod deletions (what `berth apiserver --pod-deletion-bound` runs). A high-priority pod
// that fits nowhere evicts a lower-priority one and is bound in its place, and a node whose victim
// a PodDisruptionBudget protects is passed over for one where no budget is violated.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pkg/apiserver/kubelet_stand_in.h"
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

class PreemptionDaemon : public test::BerthDaemonTest {
 protected:
  // A running pod of another scheduler on `node`, using all of its 2 CPUs.
  void running(const std::string& name, const std::string& node, int priority,
               json labels = json::object()) {
    json p = podJson(name, "2", "someone-else");
    p["metadata"]["labels"] = std::move(labels);
    p["spec"]["nodeName"] = node;
    p["spec"]["priority"] = priority;
    create(Resource::Pods, p);
  }

  void createPreemptor() {
    json p = podJson("high", "2");
    p["spec"]["priority"] = 1000;
    create(Resource::Pods, p);
  }

  std::optional<json> pod(const std::string& name) {
    auto r = store_.get(Resource::Pods, "default", name);
    return r.ok() ? std::optional<json>(*r) : std::nullopt;
  }

  // The pod is being deleted and carries preemption's DisruptionTarget condition.
  bool markedAsVictim(const std::string& name) {
    auto p = pod(name);
    if (!p || !(*p)["metadata"].contains("deletionTimestamp")) return false;
    for (const json& c : (*p)["status"].value("conditions", json::array())) {
      if (c["type"] == "DisruptionTarget" && c["status"] == "True" &&
          c["reason"] == "PreemptionByScheduler") {
        return true;
      }
    }
    return false;
  }

  // The notes of the Preempted events about pod `name`.
  std::vector<std::string> preemptedNotes(const std::string& name) {
    std::vector<std::string> notes;
    auto events = store_.list(Resource::EventsV1, "default");
    if (!events.ok()) return notes;
    for (const json& e : events->items) {
      if (e["reason"] == "Preempted" && e["regarding"]["name"] == name) {
        notes.push_back(e.value("note", ""));
      }
    }
    return notes;
  }

  int bindingsOf(const std::string& name) {
    int n = 0;
    for (const auto& r : server_->requestLog()) {
      if (r.method == "POST" && r.subresource == "binding" && r.name == name) ++n;
    }
    return n;
  }

  // Long enough for the test to see a victim marked and terminating, as kubelets would leave it.
  apiserver::KubeletStandIn kubelets_{store_, std::chrono::milliseconds(1500)};
};

TEST_F(PreemptionDaemon, EvictsALowerPriorityPodAndBindsThePreemptorInItsPlaceOnce) {
  create(Resource::Nodes, nodeJson("n1", "2"));
  running("low", "n1", 1);
  createPreemptor();
  startBerth();

  ASSERT_TRUE(eventually([&] { return markedAsVictim("low"); }))
      << "the victim was not marked and deleted";
  ASSERT_TRUE(eventually([&] { return nodeOf("high") == "n1"; })) << "the preemptor was not bound";
  EXPECT_FALSE(pod("low").has_value()) << "bound while the victim still ran";
  const std::string uid = pod("high").value()["metadata"].value("uid", "");
  EXPECT_EQ(preemptedNotes("low"),
            std::vector<std::string>{"Preempted by pod " + uid + " on node n1"});
  // Bound once: no second Binding follows.
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(bindingsOf("high"), 1);
}

TEST_F(PreemptionDaemon, PassesOverANodeWhoseVictimAPodDisruptionBudgetProtects) {
  create(Resource::Nodes, nodeJson("n1", "2"));
  create(Resource::Nodes, nodeJson("n2", "2"));
  running("guarded", "n1", 1, {{"app", "guarded"}});
  running("plain", "n2", 1);
  // The embedded server leaves status as created: disruptionsAllowed 0.
  create(
      Resource::PodDisruptionBudgets,
      json{{"apiVersion", "policy/v1"},
           {"kind", "PodDisruptionBudget"},
           {"metadata", {{"name", "guarded"}, {"namespace", "default"}}},
           {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "guarded"}}}}}}}});
  createPreemptor();
  startBerth();

  ASSERT_TRUE(eventually([&] { return nodeOf("high") == "n2"; }))
      << "the preemptor was not bound to n2";
  EXPECT_FALSE(pod("plain").has_value());
  auto guarded = pod("guarded");
  ASSERT_TRUE(guarded.has_value()) << "the budget's pod was preempted";
  EXPECT_FALSE((*guarded)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(preemptedNotes("guarded").empty());
  EXPECT_EQ(preemptedNotes("plain").size(), 1u);
  EXPECT_EQ(bindingsOf("high"), 1);
}

}  // namespace
}  // namespace berth
