// End-to-end tests of the daemon: the real `berth run` process against the embedded API server
// over HTTP, with the server's fault hooks standing in for a cluster under stress.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/berth_daemon_fixture.h"
#include "tests/support/berth_process.h"
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

class Daemon : public test::BerthDaemonTest {
 protected:
  // SIGTERM, then the exit code; -1 when berth did not exit within `limit` (then it is killed).
  int stopBerth(std::chrono::seconds limit = 10s) { return berth_->terminate(limit); }

  json get(const std::string& name) {
    auto r = store_.get(Resource::Pods, "default", name);
    return r.ok() ? *r : json();
  }

  // Successful bindings per pod name, from the server's request log.
  std::map<std::string, int> bindings() {
    std::map<std::string, int> out;
    for (const apiserver::RequestRecord& r : server_->requestLog()) {
      if (r.subresource == "binding" && r.code == 201) out[r.name]++;
    }
    return out;
  }
};

TEST_F(Daemon, BindsPendingPodsWhereEveryFilterAllows) {
  create(Resource::Nodes, nodeJson("small", "1", {{"zone", "a"}}));
  create(Resource::Nodes, nodeJson("big", "8", {{"zone", "b"}}));
  json tainted = nodeJson("gpu", "8", {{"pool", "gpu"}});
  tainted["spec"]["taints"] = {{{"key", "gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  create(Resource::Nodes, tainted);
  json cordoned = nodeJson("cordoned", "64");
  cordoned["spec"]["unschedulable"] = true;
  create(Resource::Nodes, cordoned);

  create(Resource::Pods, podJson("needs-four", "4"));
  json gpu = podJson("trainer", "2");
  gpu["spec"]["nodeSelector"] = {{"pool", "gpu"}};
  gpu["spec"]["tolerations"] = {{{"key", "gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  create(Resource::Pods, gpu);
  json zoned = podJson("zoned", "500m");
  zoned["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms",
       {{{"matchExpressions", {{{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}}}}}}}};
  create(Resource::Pods, zoned);
  startBerth();

  ASSERT_TRUE(eventually([&] {
    return !nodeOf("needs-four").empty() && !nodeOf("trainer").empty() && !nodeOf("zoned").empty();
  }));
  EXPECT_EQ(nodeOf("needs-four"), "big");
  EXPECT_EQ(nodeOf("trainer"), "gpu");
  EXPECT_EQ(nodeOf("zoned"), "small");
  EXPECT_EQ(stopBerth(), 0);
}

TEST_F(Daemon, CountsForeignPodsAndNeverWritesToThem) {
  create(Resource::Nodes, nodeJson("only", "2"));
  json pinned = podJson("pinned", "1500m", "default-scheduler");
  pinned["spec"]["nodeName"] = "only";
  create(Resource::Pods, pinned);
  create(Resource::Pods, podJson("theirs", "100m", "default-scheduler"));
  create(Resource::Pods, podJson("fits", "500m"));
  create(Resource::Pods, podJson("too-big", "1"));
  startBerth();

  ASSERT_TRUE(eventually([&] { return nodeOf("fits") == "only"; }));
  ASSERT_TRUE(eventually([&] {
    json p = get("too-big");
    for (const json& c : p["status"].value("conditions", json::array())) {
      if (c["type"] == "PodScheduled" && c["status"] == "False") return true;
    }
    return false;
  }));
  EXPECT_EQ(nodeOf("too-big"), "");
  EXPECT_EQ(nodeOf("theirs"), "");
  for (const apiserver::RequestRecord& r : server_->requestLog()) {
    if (r.name == "pinned" || r.name == "theirs") {
      EXPECT_EQ(r.method, "GET") << r.verb << " " << r.path;
    }
  }
  EXPECT_EQ(stopBerth(), 0);
}

TEST_F(Daemon, ReportsAnUnschedulablePodThenBindsItWhenANodeFits) {
  create(Resource::Nodes, nodeJson("n1", "2"));
  create(Resource::Nodes, nodeJson("n2", "2"));
  create(Resource::Pods, podJson("huge", "16"));
  startBerth();

  const std::string expected =
      "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No "
      "preemption victims found for incoming pod.";
  ASSERT_TRUE(eventually([&] {
    for (const json& c : get("huge")["status"].value("conditions", json::array())) {
      if (c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable" &&
          c["message"] == expected) {
        return true;
      }
    }
    return false;
  }));
  auto failedEvent = [&](const std::string& reason, const std::string& note) {
    auto events = store_.list(Resource::EventsV1, "default");
    if (!events.ok()) return false;
    for (const json& e : events->items) {
      if (e["reason"] == reason && e["regarding"]["name"] == "huge" && e["note"] == note &&
          e["reportingController"] == "berth") {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(eventually([&] { return failedEvent("FailedScheduling", expected); }));

  create(Resource::Nodes, nodeJson("n3", "32"));
  ASSERT_TRUE(eventually([&] { return nodeOf("huge") == "n3"; }, 20s));
  EXPECT_TRUE(eventually(
      [&] { return failedEvent("Scheduled", "Successfully assigned default/huge to n3"); }));
  EXPECT_EQ(stopBerth(), 0);
}

TEST_F(Daemon, LosesNoPodAndBindsNoneTwiceThroughApiServerFaults) {
  for (int i = 0; i < 4; ++i) create(Resource::Nodes, nodeJson("n" + std::to_string(i), "64"));
  startBerth();
  int created = 0;
  auto createBatch = [&](int n) {
    for (int i = 0; i < n; ++i)
      create(Resource::Pods, podJson("p" + std::to_string(created++), "100m"));
  };
  createBatch(10);
  ASSERT_TRUE(eventually([&] { return !nodeOf("p9").empty(); }));

  server_->closeWatches();
  createBatch(10);
  server_->expireNextWatches(3);
  server_->closeWatches();
  createBatch(10);
  server_->failNextRequests(15, 503);
  createBatch(10);
  server_->injectMalformedWatchLine();
  createBatch(10);
  // Someone else binds a pod while berth's binding is slowed down: berth must get a 409, read the
  // pod back and drop it, never bind it again.
  server_->delayBindings(300ms);
  create(Resource::Pods, podJson("contested", "100m"));
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "contested"}, {"namespace", "default"}}},
                  {"target", {{"kind", "Node"}, {"name", "n3"}}}};
  ASSERT_TRUE(store_.bind("default", "contested", binding).ok());
  std::this_thread::sleep_for(500ms);
  server_->delayBindings(0ms);
  // An outage, as a restart: refused connections for 10 s; pods created meanwhile are listed later.
  server_->refuseConnectionsFor(10s);
  createBatch(10);

  ASSERT_TRUE(eventually(
      [&] {
        for (int i = 0; i < created; ++i) {
          if (nodeOf("p" + std::to_string(i)).empty()) return false;
        }
        return true;
      },
      60s));
  std::this_thread::sleep_for(500ms);
  for (const auto& [name, count] : bindings()) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(nodeOf("contested"), "n3");
  EXPECT_EQ(stopBerth(), 0);
}

TEST_F(Daemon, SkipsAMalformedPodAndSchedulesTheRest) {
  create(Resource::Nodes, nodeJson("n1", "4"));
  json bad = podJson("bad-quantity", "a lot");
  auto created = store_.create(Resource::Pods, "default", bad);
  create(Resource::Pods, podJson("good", "1"));
  startBerth();
  ASSERT_TRUE(eventually([&] { return nodeOf("good") == "n1"; }));
  if (created.ok()) {
    EXPECT_EQ(nodeOf("bad-quantity"), "");
  }
  create(Resource::Pods, podJson("later", "1"));
  ASSERT_TRUE(eventually([&] { return nodeOf("later") == "n1"; }));
  EXPECT_EQ(stopBerth(), 0);
}

TEST_F(Daemon, ExitsCleanlyOnSigtermDuringABurst) {
  for (int i = 0; i < 3; ++i) create(Resource::Nodes, nodeJson("n" + std::to_string(i), "1000"));
  startBerth();
  ASSERT_TRUE(eventually([&] { return server_->activeWatches() >= 2; }));
  for (int i = 0; i < 300; ++i)
    create(Resource::Pods, podJson("burst-" + std::to_string(i), "10m"));
  ASSERT_TRUE(eventually([&] { return !bindings().empty(); }));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(stopBerth(10s), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  for (const auto& [name, count] : bindings()) EXPECT_EQ(count, 1) << name;
}

}  // namespace
}  // namespace berth
