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
       {"default/a -> n1", "default/b: 0/1 nodes are available: 1 Insufficient cpu."}},
      {"higher priority goes first, whatever the file order",
       {node("n1", "1")},
       {MakePod().name("low").req({{"cpu", "600m"}}).created(1).obj(),
        MakePod().name("high").priority(10).req({{"cpu", "600m"}}).created(2).obj()},
       {},
       {"default/high -> n1", "default/low: 0/1 nodes are available: 1 Insufficient cpu."}},
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

}  // namespace
}  // namespace berth::simulate
