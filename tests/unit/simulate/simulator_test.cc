#include "pkg/simulate/simulator.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/builders.h"

namespace berth::simulate {
namespace {

using test::MakeNode;
using test::MakePod;

api::NodePtr node(const std::string& name, const std::string& cpu) {
  return MakeNode()
      .name(name)
      .allocatable({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}})
      .obj();
}

// "namespace/name -> node", or "namespace/name: message" when it was not placed.
std::vector<std::string> outcomes(const Report& report) {
  std::vector<std::string> out;
  for (const PodResult& r : report.results) {
    out.push_back(r.node ? r.pod + " -> " + *r.node : r.pod + ": " + r.message);
  }
  return out;
}

struct Case {
  std::string name;
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;
  Options options;
  std::vector<std::string> want;
  std::vector<std::string> warnings = {};
};

TEST(Simulator, PlacesPendingPodsInQueueOrderEachAssumedBeforeTheNext) {
  const api::Timestamp deleted{1'000'000};
  const std::vector<Case> cases = {
      {"the second pod sees the first one's placement",
       {node("n1", "1")},
       {MakePod().name("a").req({{"cpu", "600m"}}).created(1).obj(),
        MakePod().name("b").req({{"cpu", "600m"}}).created(2).obj()},
       {},
       {"default/a -> n1",
        "default/b: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod."}},
      {"higher priority goes first, whatever the file order",
       {node("n1", "1")},
       {MakePod().name("low").req({{"cpu", "600m"}}).created(1).obj(),
        MakePod().name("high").priority(10).req({{"cpu", "600m"}}).created(2).obj()},
       {},
       {"default/high -> n1",
        "default/low: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod."}},
      {"bound pods take room on their node; finished pods take none",
       {node("n1", "1"), node("n2", "1")},
       {MakePod().name("running").node("n1").phase("Running").req({{"cpu", "800m"}}).obj(),
        MakePod().name("done").node("n2").phase("Succeeded").req({{"cpu", "800m"}}).obj(),
        MakePod().name("web").req({{"cpu", "500m"}}).obj()},
       {},
       {"default/web -> n2"}},
      {"pods of another scheduler are left alone",
       {node("n1", "1")},
       {MakePod().name("mine").obj(), MakePod().name("theirs").schedulerName("other").obj()},
       {},
       {"default/mine -> n1"}},
      {"every pending pod with allPending",
       {node("n1", "1")},
       {MakePod().name("mine").created(1).obj(),
        MakePod().name("theirs").schedulerName("other").created(2).obj()},
       {.allPending = true},
       {"default/mine -> n1", "default/theirs -> n1"}},
      {"deleting and gated pods are reported, not placed",
       {node("n1", "1")},
       {MakePod()
            .name("going")
            .mutate([&](api::Pod& p) { p.metadata.deletionTimestamp = deleted; })
            .created(1)
            .obj(),
        MakePod()
            .name("gated")
            .mutate([](api::Pod& p) { p.spec.schedulingGates = {"wait"}; })
            .created(2)
            .obj()},
       {},
       {"default/going: skip schedule deleting pod: default/going",
        "default/gated: Scheduling is blocked due to non-empty scheduling gates"}},
      {"a pod bound to a node not in the file is a warning",
       {node("n1", "1")},
       {MakePod().name("lost").node("gone").obj()},
       {},
       {},
       {"pod default/lost is bound to node \"gone\", which is not in the file"}},
  };
  util::Parallelizer parallelizer(1);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::ObjectSet objects{.nodes = c.nodes, .pods = c.pods};
    auto report = run(objects, config::defaultConfiguration(), c.options, parallelizer);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_EQ(report->numNodes, static_cast<int>(c.nodes.size()));
    EXPECT_EQ(outcomes(*report), c.want);
    EXPECT_EQ(report->warnings, c.warnings);
  }
}

// n1 runs a low-priority pod; the pending pods need its room.
api::ObjectSet preemptionCluster() {
  return {.nodes = {node("n1", "1"), node("n2", "1")},
          .pods = {MakePod().name("batch").node("n1").priority(1).req({{"cpu", "800m"}}).obj(),
                   MakePod().name("db").node("n2").priority(1000).req({{"cpu", "800m"}}).obj(),
                   MakePod().name("web").priority(100).req({{"cpu", "600m"}}).created(1).obj(),
                   MakePod().name("small").priority(100).req({{"cpu", "300m"}}).created(2).obj()}};
}

TEST(Simulator, PreemptsAsTheDaemonAndPlacesThePreemptorInTheSameRun) {
  util::Parallelizer parallelizer(1);
  auto report = run(preemptionCluster(), config::defaultConfiguration(), {}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  // The victim's room is the preemptor's; what is left takes the next pod.
  EXPECT_EQ(outcomes(*report),
            (std::vector<std::string>{"default/web -> n1", "default/small -> n1"}));
  const PodResult& web = report->results[0];
  EXPECT_EQ(web.nominatedNode, "n1");
  EXPECT_EQ(web.victims, std::vector<std::string>{"default/batch"});
  EXPECT_EQ(web.message, "0/2 nodes are available: 2 Insufficient cpu.");
  ASSERT_EQ(report->evictions.size(), 1u);
  EXPECT_EQ(report->evictions[0].pod, "default/batch");
  EXPECT_EQ(report->evictions[0].node, "n1");
  EXPECT_EQ(report->evictions[0].by, "default/web");

  const nlohmann::json j = toJson(*report, /*explain=*/false);
  EXPECT_EQ(j["results"][0]["nominatedNode"], "n1");
  EXPECT_EQ(j["results"][0]["victims"], nlohmann::json::array({"default/batch"}));
  EXPECT_FALSE(j["results"][1].contains("victims"));
  EXPECT_EQ(j["summary"], nlohmann::json::parse(R"({"pending":2,"placed":2,"evicted":1,"lost":0,
    "nodesUsed":1,"nodes":2,"allocation":[
    {"node":"n1","requested":{"cpu":"900m","memory":"0","pods":2},
     "allocatable":{"cpu":"1","memory":"8Gi","pods":110}},
    {"node":"n2","requested":{"cpu":"800m","memory":"0","pods":1},
     "allocatable":{"cpu":"1","memory":"8Gi","pods":110}}]})"));
  EXPECT_EQ(j["evicted"],
            nlohmann::json::parse(R"([{"pod":"default/batch","node":"n1","by":"default/web"}])"));
  const std::string table = toTable(*report, /*explain=*/false);
  EXPECT_NE(table.find("Scheduled after preempting default/batch\n"), std::string::npos) << table;
  EXPECT_NE(table.find("evicted default/batch from node n1 to make room for default/web\n"),
            std::string::npos)
      << table;
}

TEST(Simulator, NoPreemptionLeavesThePodPending) {
  util::Parallelizer parallelizer(1);
  auto report =
      run(preemptionCluster(), config::defaultConfiguration(), {.preemption = false}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(outcomes(*report), (std::vector<std::string>{
                                   "default/web: 0/2 nodes are available: 2 Insufficient cpu.",
                                   "default/small: 0/2 nodes are available: 2 Insufficient cpu."}));
  EXPECT_TRUE(report->evictions.empty());
}

TEST(Simulator, PreemptionAvoidsAPodDisruptionBudget) {
  api::ObjectSet objects{
      .nodes = {node("n1", "1"), node("n2", "1")},
      .pods = {
          MakePod().name("a").label("app", "a").node("n1").priority(1).req({{"cpu", "1"}}).obj(),
          MakePod().name("b").label("app", "b").node("n2").priority(5).req({{"cpu", "1"}}).obj(),
          MakePod().name("p").priority(100).req({{"cpu", "1"}}).obj()}};
  auto budget = std::make_shared<api::PodDisruptionBudget>();
  budget->metadata.name = "protect-a";
  budget->metadata.namespace_ = "default";
  budget->selector = api::LabelSelector{.matchLabels = {{"app", "a"}}, .matchExpressions = {}};
  objects.podDisruptionBudgets.push_back(budget);
  util::Parallelizer parallelizer(1);
  auto report = run(objects, config::defaultConfiguration(), {.explain = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(outcomes(*report), std::vector<std::string>{"default/p -> n2"});
  const PodResult& p = report->results[0];
  EXPECT_EQ(p.victims, std::vector<std::string>{"default/b"});
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[0].preemption, "would preempt default/a (1 against its PodDisruptionBudget)");
  EXPECT_EQ(p.nodes[1].preemption, "would preempt default/b (chosen)");
}

TEST(Simulator, ExplainSaysWhyPreemptionCannotHelpOnEachNode) {
  api::ObjectSet objects{
      .nodes = {node("n1", "1"), node("n2", "1"),
                MakeNode()
                    .name("tainted")
                    .taint("dedicated", "x", "NoSchedule")
                    .allocatable({{"cpu", "4"}, {"pods", "110"}})
                    .obj()},
      .pods = {MakePod().name("same").node("n1").priority(100).req({{"cpu", "1"}}).obj(),
               MakePod().name("big").node("n2").priority(200).req({{"cpu", "600m"}}).obj(),
               MakePod().name("low").node("n2").priority(1).req({{"cpu", "400m"}}).obj(),
               MakePod().name("p").priority(100).req({{"cpu", "500m"}}).obj()}};
  util::Parallelizer parallelizer(1);
  auto report = run(objects, config::defaultConfiguration(), {.explain = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const PodResult& p = report->results[0];
  EXPECT_FALSE(p.node.has_value());
  EXPECT_EQ(p.message,
            "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: x}, 2 "
            "Insufficient cpu. preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 No "
            "preemption victims found for incoming pod, 1 Preemption is not helpful for "
            "scheduling.");
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.nodes[0].preemption, "cannot help: no lower-priority pods to preempt");
  EXPECT_EQ(p.nodes[1].preemption,
            "cannot help: still does not fit without its lower-priority pods: Insufficient cpu");
  EXPECT_EQ(p.nodes[2].preemption, "cannot help: evicting pods does not lift this rejection");
  EXPECT_EQ(toJson(*report, true)["results"][0]["nodes"][2]["preemption"],
            "cannot help: evicting pods does not lift this rejection");
}

TEST(Simulator, PreemptionPolicyNeverIsReportedAndEvictsNothing) {
  api::ObjectSet objects = preemptionCluster();
  objects.pods[2] = MakePod()
                        .name("web")
                        .priority(100)
                        .req({{"cpu", "600m"}})
                        .mutate([](api::Pod& p) { p.spec.preemptionPolicy = "Never"; })
                        .obj();
  objects.pods.pop_back();
  util::Parallelizer parallelizer(1);
  auto report = run(objects, config::defaultConfiguration(), {.explain = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(outcomes(*report),
            std::vector<std::string>{"default/web: 0/2 nodes are available: 2 Insufficient cpu. "
                                     "preemption: not eligible due to preemptionPolicy=Never."});
  EXPECT_TRUE(report->evictions.empty());
  EXPECT_TRUE(report->results[0].nodes[0].preemption.empty());
}

TEST(Simulator, UnknownSchedulerNameIsAnError) {
  util::Parallelizer parallelizer(1);
  api::ObjectSet objects{.nodes = {node("n1", "1")}, .pods = {MakePod().name("web").obj()}};
  auto report =
      run(objects, config::defaultConfiguration(), {.schedulerName = "nobody"}, parallelizer);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().message,
            "no profile for scheduler name \"nobody\" in the configuration");
}

TEST(Simulator, ExplainListsEveryNodeWithItsReasonsOrScores) {
  util::Parallelizer parallelizer(1);
  api::ObjectSet objects{.nodes = {node("small", "500m"), node("big", "2"), node("bigger", "4")},
                         .pods = {MakePod().name("web").req({{"cpu", "1"}}).obj()}};
  auto report = run(objects, config::defaultConfiguration(), {.explain = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->results.size(), 1u);
  const PodResult& web = report->results[0];
  ASSERT_EQ(web.nodes.size(), 3u);
  EXPECT_EQ(web.nodes[0].name, "small");
  EXPECT_FALSE(web.nodes[0].feasible);
  EXPECT_EQ(web.nodes[0].reasons, std::vector<std::string>{"Insufficient cpu"});
  EXPECT_EQ(web.nodes[0].plugin, "NodeResourcesFit");
  for (const NodeExplanation& n : {web.nodes[1], web.nodes[2]}) {
    SCOPED_TRACE(n.name);
    EXPECT_TRUE(n.feasible);
    EXPECT_FALSE(n.scores.empty());
  }
  // LeastAllocated prefers the emptier node.
  EXPECT_GT(web.nodes[2].total, web.nodes[1].total);
  EXPECT_EQ(web.node, "bigger");

  const nlohmann::json j = toJson(*report, /*explain=*/true);
  EXPECT_EQ(j["results"][0]["node"], "bigger");
  EXPECT_EQ(j["results"][0]["nodes"].size(), 3u);
  EXPECT_EQ(j["results"][0]["nodes"][0]["plugin"], "NodeResourcesFit");
}

TEST(Simulator, IgnoredKindsAreCountedInOneLine) {
  struct Case {
    std::string name;
    std::vector<std::string> skipped;
    std::optional<std::string> want;
  };
  const std::vector<Case> cases = {
      {"nothing skipped", {}, std::nullopt},
      {"one item",
       {"Secret default/s"},
       "ignored 1 item of kinds simulate does not use: Secret (1)"},
      {"kinds in name order, counted",
       {"Secret default/s", "ConfigMap default/a", "Deployment.apps/v1 default/web",
        "ConfigMap kube-system/b"},
       "ignored 4 items of kinds simulate does not use: ConfigMap (2), Deployment.apps/v1 (1), "
       "Secret (1)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ignoredKinds(c.skipped), c.want) << c.name;
  }
}

TEST(Simulator, ClusterFileWithEveryKindPluginsReadStillPlacesItsPods) {
  util::Parallelizer parallelizer(1);
  auto objects = api::decodeObjects(R"({"kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
       "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}},
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "prod",
       "labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
      {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "prod"},
       "spec": {"selector": {"app": "web"}}},
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "prod"}},
      {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "prod"}},
      {"apiVersion": "v1", "kind": "ReplicationController",
       "metadata": {"name": "old", "namespace": "prod"}}]})");
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  ASSERT_EQ(objects->namespaces.size() + objects->services.size() + objects->replicaSets.size() +
                objects->statefulSets.size() + objects->replicationControllers.size(),
            5u);
  EXPECT_TRUE(objects->skipped.empty());
  auto report = run(*objects, config::defaultConfiguration(), {.allPending = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->results.size(), 1u);
  EXPECT_EQ(report->results[0].node, "n1");
}

TEST(Simulator, PendingPodsWithClaimsAndNoClaimsInTheFileGetOneNote) {
  const std::string claimPod = R"({"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "db-0", "namespace": "prod"},
       "spec": {"containers": [{"name": "c"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]}})";
  const std::string ephemeralPod = R"({"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "scratch", "namespace": "prod"},
       "spec": {"containers": [{"name": "c"}],
                "volumes": [{"name": "tmp", "ephemeral": {"volumeClaimTemplate":
                  {"spec": {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}}}]}})";
  const std::string boundClaimPod = R"({"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "db-1", "namespace": "prod"},
       "spec": {"nodeName": "n1", "containers": [{"name": "c"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}]}})";
  const std::string plainPod = R"({"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web", "namespace": "prod"}, "spec": {"containers": [{"name": "c"}]}})";
  const std::string claim = R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"name": "data-db-0", "namespace": "prod"},
       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})";
  auto file = [](const std::vector<std::string>& items) {
    std::string out = R"({"kind": "List", "items": [)";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
    return out + "]}";
  };
  struct NoteCase {
    std::string name;
    std::vector<std::string> items;
    std::optional<std::string> want;
  };
  const std::vector<NoteCase> cases = {
      {"a claim and an ephemeral volume, no PVCs",
       {claimPod, ephemeralPod, plainPod},
       "2 pending pods use PersistentVolumeClaims, but the cluster file has none (export them "
       "too: kubectl get nodes,pods,pvc,pv,storageclass,csinode -A -o json)"},
      {"one pending pod",
       {claimPod},
       std::string("1 pending pod uses PersistentVolumeClaims, "
                   "but the cluster file has none (export them "
                   "too: kubectl get nodes,pods,pvc,pv,"
                   "storageclass,csinode -A -o json)")},
      {"the file has claims", {claimPod, claim}, std::nullopt},
      {"only bound pods use claims", {boundClaimPod, plainPod}, std::nullopt},
      {"no pod uses claims", {plainPod}, std::nullopt},
  };
  for (const NoteCase& c : cases) {
    auto objects = api::decodeObjects(file(c.items));
    ASSERT_TRUE(objects.ok()) << c.name << ": " << objects.error().message;
    EXPECT_EQ(missingClaimsNote(*objects), c.want) << c.name;
  }
}

TEST(Simulator, ClusterFileWithTheStorageKindsStillPlacesItsPods) {
  util::Parallelizer parallelizer(1);
  auto objects = api::decodeObjects(R"({"kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
       "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}},
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "prod"},
       "spec": {"containers": [{"name": "c"}]}},
      {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"name": "data", "namespace": "prod"},
       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
      {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
       "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}},
      {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
       "provisioner": "p.csi", "volumeBindingMode": "WaitForFirstConsumer"},
      {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
       "spec": {"drivers": [{"name": "p.csi", "nodeID": "n1", "allocatable": {"count": 2}}]}},
      {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "p.csi"},
       "spec": {}},
      {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
       "metadata": {"name": "cap", "namespace": "kube-system"}, "storageClassName": "fast",
       "capacity": "10Gi"}]})");
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  EXPECT_TRUE(objects->skipped.empty());
  EXPECT_EQ(missingClaimsNote(*objects), std::nullopt);
  auto report = run(*objects, config::defaultConfiguration(), {.allPending = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->results.size(), 1u);
  EXPECT_EQ(report->results[0].node, "n1");
}

}  // namespace
}  // namespace berth::simulate
