// End-to-end tests of the volume plugins: the real `berth run` against the embedded API server,
// which runs no PV controller or provisioner. Where a claim must become bound the test plays them
// through the API, as a real one would: it waits for berth's writes (a PV's claimRef, a claim's
// volume.kubernetes.io/selected-node), then sets the claim's spec.volumeName and
// pv.kubernetes.io/bind-completed. Every test checks that a pod is bound once and only after its
// claims are.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
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

constexpr const char* kDriver = "csi.example.com";
constexpr const char* kZoneKey = "topology.kubernetes.io/zone";

json storageClass(const std::string& name, const std::string& provisioner,
                  const std::string& mode) {
  json sc{{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},
          {"provisioner", provisioner}};
  if (!mode.empty()) sc["volumeBindingMode"] = mode;
  return sc;
}

json claim(const std::string& name, const std::string& className,
           const std::string& accessMode = "ReadWriteOnce") {
  return json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"accessModes", {accessMode}},
                {"storageClassName", className},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

// A CSI volume of kDriver with `handle`, 1Gi, of class `className`.
json volume(const std::string& name, const std::string& className, const std::string& handle,
            const std::string& accessMode = "ReadWriteOnce") {
  return json{{"apiVersion", "v1"},
              {"kind", "PersistentVolume"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"accessModes", {accessMode}},
                {"capacity", {{"storage", "1Gi"}}},
                {"storageClassName", className},
                {"persistentVolumeReclaimPolicy", "Delete"},
                {"csi", {{"driver", kDriver}, {"volumeHandle", handle}}}}}};
}

// The PV's node affinity: `key` In `value`.
json pinned(json pv, const std::string& key, const std::string& value) {
  pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = json::array(
      {{{"matchExpressions",
         json::array({{{"key", key}, {"operator", "In"}, {"values", json::array({value})}}})}}});
  return pv;
}

// A pending pod for berth with one volume per claim.
json podWithClaims(const std::string& name, const std::vector<std::string>& claims) {
  json p = podJson(name);
  for (const std::string& c : claims) {
    p["spec"]["volumes"].push_back(
        {{"name", "v-" + c}, {"persistentVolumeClaim", {{"claimName", c}}}});
  }
  return p;
}

json csiNode(const std::string& node, int count) {
  return json{
      {"apiVersion", "storage.k8s.io/v1"},
      {"kind", "CSINode"},
      {"metadata", {{"name", node}}},
      {"spec",
       {{"drivers",
         json::array(
             {{{"name", kDriver}, {"nodeID", node}, {"allocatable", {{"count", count}}}}})}}}};
}

class VolumeDaemon : public test::BerthDaemonTest {
 protected:
  std::optional<json> get(Resource resource, const std::string& name) {
    const bool namespaced = resource == Resource::PersistentVolumeClaims;
    auto r = store_.get(resource, namespaced ? "default" : "", name);
    return r.ok() ? std::optional<json>(*r) : std::nullopt;
  }

  // The claim and its PV bound to each other, as the PV controller leaves them.
  void createBound(const std::string& claimName, json pv) {
    const std::string pvName = pv["metadata"]["name"];
    json c = claim(claimName, pv["spec"]["storageClassName"],
                   pv["spec"]["accessModes"][0].get<std::string>());
    c["spec"]["volumeName"] = pvName;
    c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
    create(Resource::PersistentVolumeClaims, c);
    json created = get(Resource::PersistentVolumeClaims, claimName).value();
    pv["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"},
                              {"namespace", "default"},
                              {"name", claimName},
                              {"uid", created["metadata"]["uid"]}};
    create(Resource::PersistentVolumes, pv);
  }

  // The PV controller's part once berth chose: the claim bound to `pvName` (whose claimRef the
  // provisioner or berth set), then its status.
  void bindClaim(const std::string& claimName, const std::string& pvName) {
    json c = get(Resource::PersistentVolumeClaims, claimName).value();
    c["spec"]["volumeName"] = pvName;
    c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
    auto updated = store_.update(Resource::PersistentVolumeClaims, "default", claimName, c);
    ASSERT_TRUE(updated.ok()) << updated.error().status.message;
    json status = *updated;
    status["status"]["phase"] = "Bound";
    auto bound =
        store_.updateStatus(Resource::PersistentVolumeClaims, "default", claimName, status);
    ASSERT_TRUE(bound.ok()) << bound.error().status.message;
  }

  // What a provisioner creates for a claim annotated with a node: a PV pinned to the node's zone,
  // bound to the claim.
  void provision(const std::string& claimName, const std::string& zone) {
    json c = get(Resource::PersistentVolumeClaims, claimName).value();
    json pv = pinned(volume("pvc-" + claimName, c["spec"]["storageClassName"], "h-" + claimName),
                     kZoneKey, zone);
    pv["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"},
                              {"namespace", "default"},
                              {"name", claimName},
                              {"uid", c["metadata"]["uid"]}};
    create(Resource::PersistentVolumes, pv);
    bindClaim(claimName, "pvc-" + claimName);
  }

  std::string selectedNode(const std::string& claimName) {
    auto c = get(Resource::PersistentVolumeClaims, claimName);
    if (!c) return "";
    return (*c)["metadata"]
        .value("annotations", json::object())
        .value("volume.kubernetes.io/selected-node", "");
  }

  // The position in the request log of the first request matching, or -1.
  int firstRequest(const std::string& method, const std::string& resource, const std::string& name,
                   const std::string& subresource = "") {
    const auto log = server_->requestLog();
    for (size_t i = 0; i < log.size(); ++i) {
      const auto& r = log[i];
      if (r.method == method && r.resource == resource && r.name == name &&
          r.subresource == subresource) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  int requests(const std::string& method, const std::string& resource, const std::string& name,
               const std::string& subresource = "") {
    int n = 0;
    for (const auto& r : server_->requestLog()) {
      if (r.method == method && r.resource == resource && r.name == name &&
          r.subresource == subresource) {
        ++n;
      }
    }
    return n;
  }

  int bindingsOf(const std::string& pod) { return requests("POST", "pods", pod, "binding"); }

  // The notes of the FailedScheduling events about pod `name`.
  std::vector<std::string> failedNotes(const std::string& name) {
    std::vector<std::string> notes;
    auto events = store_.list(Resource::EventsV1, "default");
    if (!events.ok()) return notes;
    for (const json& e : events->items) {
      if (e["reason"] == "FailedScheduling" && e["regarding"]["name"] == name) {
        notes.push_back(e.value("note", ""));
      }
    }
    return notes;
  }

  bool failedWith(const std::string& pod, const std::string& text) {
    for (const std::string& note : failedNotes(pod)) {
      if (note.find(text) != std::string::npos) return true;
    }
    return false;
  }

  static size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  // The scheduling attempts of pod default/`name` so far, from berth's log (--v 3).
  size_t attempts(const std::string& name) {
    return occurrences(test::readFile(log_),
                       "\"Attempting to schedule pod\" pod=\"default/" + name + "\"");
  }

  // Berth with VolumeBinding's bindTimeoutSeconds set.
  void startBerthWithBindTimeout(int seconds) {
    const std::string config =
        testing::TempDir() + "berth-volume-config-" + std::to_string(getpid());
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             "profiles:\n"
                             "- schedulerName: berth\n"
                             "  pluginConfig:\n"
                             "  - name: VolumeBinding\n"
                             "    args:\n"
                             "      bindTimeoutSeconds: "
                          << seconds << "\n";
    startBerth({"--config", config});
  }

  void zonalNodes() {
    create(Resource::Nodes, nodeJson("a1", "4", {{kZoneKey, "a"}}));
    create(Resource::Nodes, nodeJson("b1", "4", {{kZoneKey, "b"}}));
  }
};

TEST_F(VolumeDaemon, APodWithABoundZonalVolumeLandsInThatVolumesZone) {
  zonalNodes();
  create(Resource::StorageClasses, storageClass("zonal", kDriver, "WaitForFirstConsumer"));
  createBound("data", pinned(volume("pv-b", "zonal", "h-b"), kZoneKey, "b"));
  create(Resource::Pods, podWithClaims("web-0", {"data"}));
  create(Resource::Pods, podJson("plain"));
  startBerth();

  ASSERT_TRUE(eventually([&] { return nodeOf("web-0") == "b1"; }))
      << "the pod was not bound to the node in its volume's zone";
  ASSERT_TRUE(eventually([&] { return !nodeOf("plain").empty(); }));
  // A bound claim is not written again.
  EXPECT_EQ(requests("PUT", "persistentvolumeclaims", "data"), 0);
  EXPECT_EQ(requests("PUT", "persistentvolumes", "pv-b"), 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(bindingsOf("web-0"), 1);
}

TEST_F(VolumeDaemon, AWaitForFirstConsumerClaimIsProvisionedForTheNodeBeforeThePodIsBound) {
  zonalNodes();
  // Only zone a can provision.
  json sc = storageClass("wffc", kDriver, "WaitForFirstConsumer");
  sc["allowedTopologies"] =
      json::array({{{"matchLabelExpressions",
                     json::array({{{"key", kZoneKey}, {"values", json::array({"a"})}}})}}});
  create(Resource::StorageClasses, sc);
  create(Resource::PersistentVolumeClaims, claim("data", "wffc"));
  create(Resource::Pods, podWithClaims("web-0", {"data"}));
  startBerth();

  ASSERT_TRUE(eventually([&] { return selectedNode("data") == "a1"; }))
      << "the claim was not annotated with the chosen node";
  // The pod waits for the provisioner: no Binding while the claim is unbound.
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(bindingsOf("web-0"), 0) << "bound before its claim was";
  EXPECT_EQ(nodeOf("web-0"), "");

  ASSERT_NO_FATAL_FAILURE(provision("data", "a"));
  ASSERT_TRUE(eventually([&] { return nodeOf("web-0") == "a1"; }))
      << "the pod was not bound once its claim was";
  const int annotated = firstRequest("PUT", "persistentvolumeclaims", "data");
  const int bound = firstRequest("POST", "pods", "web-0", "binding");
  EXPECT_GE(annotated, 0);
  EXPECT_LT(annotated, bound) << "the Binding came before the claim's annotation";
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(bindingsOf("web-0"), 1);
  EXPECT_EQ(requests("PUT", "persistentvolumeclaims", "data"), 1);
}

TEST_F(VolumeDaemon, AStaticVolumeIsBoundToTheClaimThroughItsClaimRefBeforeThePodIsBound) {
  zonalNodes();
  create(Resource::StorageClasses,
         storageClass("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"));
  json local = pinned(volume("local-b1", "local", "h-local"), "kubernetes.io/hostname", "b1");
  create(Resource::PersistentVolumes, local);
  // The PV controller's part: a new volume is Available.
  local["status"] = {{"phase", "Available"}};
  ASSERT_TRUE(store_.updateStatus(Resource::PersistentVolumes, "", "local-b1", local).ok());
  create(Resource::PersistentVolumeClaims, claim("data", "local"));
  create(Resource::Pods, podWithClaims("db-0", {"data"}));
  startBerth();

  // Upstream writes the PV's claimRef (with the claim's uid) and leaves the claim to the PV
  // controller.
  const std::string uid = get(Resource::PersistentVolumeClaims, "data").value()["metadata"]["uid"];
  ASSERT_TRUE(eventually([&] {
    auto pv = get(Resource::PersistentVolumes, "local-b1");
    return pv && (*pv)["spec"].contains("claimRef") &&
           (*pv)["spec"]["claimRef"].value("uid", "") == uid;
  })) << "the PV's claimRef was not written";
  json pv = get(Resource::PersistentVolumes, "local-b1").value();
  EXPECT_EQ(pv["spec"]["claimRef"].value("name", ""), "data");
  EXPECT_EQ(pv["metadata"]["annotations"].value("pv.kubernetes.io/bound-by-controller", ""), "yes");
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(bindingsOf("db-0"), 0) << "bound before its claim was";

  ASSERT_NO_FATAL_FAILURE(bindClaim("data", "local-b1"));
  ASSERT_TRUE(eventually([&] { return nodeOf("db-0") == "b1"; }))
      << "the pod was not bound to the local volume's node";
  EXPECT_LT(firstRequest("PUT", "persistentvolumes", "local-b1"),
            firstRequest("POST", "pods", "db-0", "binding"));
  // Static binding annotates no claim.
  EXPECT_EQ(requests("PUT", "persistentvolumeclaims", "data"), 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(bindingsOf("db-0"), 1);
}

TEST_F(VolumeDaemon, APreBindTimeoutUnreservesAndRequeuesThePodWhichBindsOnceTheClaimIs) {
  zonalNodes();
  create(Resource::StorageClasses, storageClass("wffc", kDriver, "WaitForFirstConsumer"));
  create(Resource::PersistentVolumeClaims, claim("data", "wffc"));
  create(Resource::Pods, podWithClaims("web-0", {"data"}));
  startBerthWithBindTimeout(1);

  const std::string reason =
      "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded";
  ASSERT_TRUE(eventually([&] { return failedWith("web-0", reason); }, 60s))
      << "no FailedScheduling event with upstream's timeout reason";
  auto pod = store_.get(Resource::Pods, "default", "web-0");
  ASSERT_TRUE(pod.ok());
  bool conditionSet = false;
  for (const json& c : (*pod)["status"].value("conditions", json::array())) {
    if (c["type"] == "PodScheduled") {
      conditionSet = c["status"] == "False" && c["reason"] == "SchedulerError" &&
                     c.value("message", "") == reason;
    }
  }
  EXPECT_TRUE(conditionSet) << pod->dump();
  // Requeued: a later attempt writes the claim again.
  ASSERT_TRUE(
      eventually([&] { return requests("PUT", "persistentvolumeclaims", "data") >= 2; }, 60s))
      << "the pod was not retried after the timeout";
  EXPECT_EQ(bindingsOf("web-0"), 0);

  const std::string node = selectedNode("data");
  ASSERT_FALSE(node.empty());
  ASSERT_NO_FATAL_FAILURE(provision("data", node == "a1" ? "a" : "b"));
  ASSERT_TRUE(eventually([&] { return nodeOf("web-0") == node; }, 60s))
      << "the pod was lost after its PreBind timed out";
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(bindingsOf("web-0"), 1);
}

TEST_F(VolumeDaemon, AReadWriteOncePodClaimIsUsedByOnePodOnly) {
  zonalNodes();
  create(Resource::StorageClasses, storageClass("zonal", kDriver, "WaitForFirstConsumer"));
  createBound("single", volume("pv-single", "zonal", "h-single", "ReadWriteOncePod"));
  create(Resource::Pods, podWithClaims("first", {"single"}));
  create(Resource::Pods, podWithClaims("second", {"single"}));
  startBerth();

  auto boundOne = [&] { return nodeOf("first").empty() != nodeOf("second").empty(); };
  ASSERT_TRUE(eventually(boundOne)) << "not exactly one of the two pods was bound";
  const std::string waiting = nodeOf("first").empty() ? "first" : "second";
  ASSERT_TRUE(eventually([&] {
    return failedWith(waiting,
                      "2 node has pod using PersistentVolumeClaim with the same name and "
                      "ReadWriteOncePod access mode");
  })) << "the second pod's FailedScheduling does not give upstream's reason";
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(boundOne());
  EXPECT_EQ(bindingsOf("first") + bindingsOf("second"), 1);
}

TEST_F(VolumeDaemon, ANodeAtItsCSIAttachLimitTakesNoFurtherVolume) {
  zonalNodes();
  create(Resource::StorageClasses, storageClass("zonal", kDriver, "WaitForFirstConsumer"));
  create(Resource::CSINodes, csiNode("a1", 1));
  create(Resource::CSINodes, csiNode("b1", 1));
  // a1 already attaches one volume of the driver.
  createBound("used", volume("pv-used", "zonal", "h-used"));
  json running = podWithClaims("running", {"used"});
  running["spec"]["schedulerName"] = "someone-else";
  running["spec"]["nodeName"] = "a1";
  create(Resource::Pods, running);
  createBound("one", volume("pv-one", "zonal", "h-one"));
  create(Resource::Pods, podWithClaims("web-0", {"one"}));
  startBerth();

  ASSERT_TRUE(eventually([&] { return nodeOf("web-0") == "b1"; }))
      << "the pod was not bound to the node with room for its volume";
  createBound("two", volume("pv-two", "zonal", "h-two"));
  create(Resource::Pods, podWithClaims("web-1", {"two"}));
  ASSERT_TRUE(eventually([&] {
    return failedWith("web-1", "0/2 nodes are available: 2 node(s) exceed max volume count.");
  })) << "the pod over the limit was not reported with upstream's reason";
  // A pod sharing a volume already attached there counts it once.
  create(Resource::Pods, podWithClaims("web-0-peer", {"one"}));
  ASSERT_TRUE(eventually([&] { return nodeOf("web-0-peer") == "b1"; }));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(nodeOf("web-1"), "");
  EXPECT_EQ(bindingsOf("web-0"), 1);
  EXPECT_EQ(bindingsOf("web-1"), 0);
  EXPECT_EQ(bindingsOf("web-0-peer"), 1);
}

// Bad input: a bound PV whose node affinity does not parse (a Gt value that is no integer; the
// embedded server, like berth's decoder, takes it). The PV is named in one log line however often
// its pod is retried, the pod gets upstream's reason, and other pods keep being scheduled.
TEST_F(VolumeDaemon, AVolumeWhoseNodeAffinityDoesNotParseIsLoggedOnceAndItsPodReported) {
  zonalNodes();
  create(Resource::StorageClasses, storageClass("zonal", kDriver, "WaitForFirstConsumer"));
  json broken = volume("pv-broken", "zonal", "h-broken");
  broken["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = json::array(
      {{{"matchExpressions",
         json::array({{{"key", kZoneKey}, {"operator", "Gt"}, {"values", json::array({"a"})}}})}}});
  createBound("data", broken);
  create(Resource::Pods, podWithClaims("web-0", {"data"}));
  startBerth();

  const std::string reason =
      "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity.";
  ASSERT_TRUE(eventually([&] { return failedWith("web-0", reason); }))
      << "the pod was not reported with upstream's reason";
  // PersistentVolume events retry the pod (VolumeBinding registered them).
  for (int i = 0; i < 3; ++i) {
    const size_t before = attempts("web-0");
    createBound("other-" + std::to_string(i),
                volume("pv-other-" + std::to_string(i), "zonal", "h-" + std::to_string(i)));
    create(Resource::Pods, podJson("plain-" + std::to_string(i)));
    ASSERT_TRUE(eventually([&] { return !nodeOf("plain-" + std::to_string(i)).empty(); }))
        << "a pod without volumes was not scheduled";
    EXPECT_TRUE(eventually([&] { return attempts("web-0") > before; }))
        << "the pod was not retried after a PersistentVolume event";
  }
  EXPECT_EQ(nodeOf("web-0"), "");
  EXPECT_EQ(bindingsOf("web-0"), 0);
  const std::string log = test::readFile(log_);
  EXPECT_EQ(occurrences(log, "PersistentVolume has a node affinity that does not parse"), 1u)
      << log;
  EXPECT_NE(log.find("persistentVolume=\"pv-broken\""), std::string::npos);
}

}  // namespace
}  // namespace berth
