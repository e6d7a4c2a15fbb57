#include "pkg/simulate/whatif.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "pkg/simulate/simulator.h"
#include "tests/support/builders.h"

namespace berth::simulate {
namespace {

using test::MakeNode;
using test::MakePod;

api::NodePtr cpuNode(const std::string& name, const std::string& cpu) {
  return MakeNode()
      .name(name)
      .label("kubernetes.io/hostname", name)
      .allocatable({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}})
      .obj();
}

test::PodWrapper ownedBy(test::PodWrapper pod, const std::string& kind) {
  return pod.mutate([kind](api::Pod& p) {
    p.metadata.ownerReferences.push_back(
        {.apiVersion = "apps/v1", .kind = kind, .name = "owner", .uid = "u", .controller = true});
  });
}

api::PodDisruptionBudgetPtr budget(const std::string& name, const std::string& app,
                                   int32_t allowed) {
  auto b = std::make_shared<api::PodDisruptionBudget>();
  b->metadata.name = name;
  b->metadata.namespace_ = "default";
  b->selector = api::LabelSelector{.matchLabels = {{"app", app}}, .matchExpressions = {}};
  b->disruptionsAllowed = allowed;
  return b;
}

// "namespace/name -> node", or "namespace/name: message" when it was not placed.
std::vector<std::string> placements(const Report& report) {
  std::vector<std::string> out;
  for (const PodResult& r : report.results) {
    out.push_back(r.node ? r.pod + " -> " + *r.node : r.pod + ": " + r.message);
  }
  return out;
}

util::Result<Report> simulate(const api::ObjectSet& objects, const WhatIfs& whatIfs) {
  util::Parallelizer parallelizer(1);
  return runWhatIfs(objects, whatIfs, config::defaultConfiguration(), Options{}, parallelizer);
}

api::ObjectSet drainCluster() {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "4"), cpuNode("n2", "4")};
  objects.pods = {
      ownedBy(MakePod().name("web").label("app", "web").req({{"cpu", "1"}}), "ReplicaSet")
          .node("n1")
          .created(1)
          .obj(),
      MakePod().name("bare").req({{"cpu", "1"}}).node("n1").created(2).obj(),
      ownedBy(MakePod().name("agent"), "DaemonSet").node("n1").created(3).obj(),
      MakePod()
          .name("static")
          .mutate([](api::Pod& p) { p.metadata.annotations["kubernetes.io/config.mirror"] = "x"; })
          .node("n1")
          .created(4)
          .obj(),
      ownedBy(MakePod().name("db").label("app", "db").req({{"cpu", "1"}}), "StatefulSet")
          .node("n1")
          .created(5)
          .obj(),
      // Another scheduler's pod on the node that stays: its controller's copy is placed too.
      ownedBy(MakePod().name("big").schedulerName("other").req({{"cpu", "3500m"}}), "ReplicaSet")
          .node("n1")
          .created(6)
          .obj(),
  };
  objects.podDisruptionBudgets = {budget("db-pdb", "db", 0), budget("web-pdb", "web", 1)};
  return objects;
}

TEST(Drain, EvictsAsKubectlDrainAndPlacesWhatControllersRecreate) {
  const api::ObjectSet objects = drainCluster();
  auto report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->drain.has_value());
  EXPECT_EQ(report->drain->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(report->drain->moved, (std::vector<std::string>{"default/web", "default/big"}));
  EXPECT_EQ(report->drain->lost, std::vector<std::string>{"default/bare"});
  ASSERT_EQ(report->drain->blocked.size(), 1u);
  EXPECT_EQ(report->drain->blocked[0].pod, "default/db");
  EXPECT_EQ(report->drain->blocked[0].budgets, std::vector<std::string>{"db-pdb"});
  // n1 is cordoned; the blocked db pod keeps its cpu there; n2 takes web, and big no longer fits.
  EXPECT_EQ(placements(*report),
            (std::vector<std::string>{
                "default/web -> n2",
                "default/big: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were "
                "unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims "
                "found for incoming pod, 1 Preemption is not helpful for scheduling."}));
  const std::string table = toTable(*report, false);
  EXPECT_NE(table.find("drain of 1 node: 1 pod moves, 1 stays pending, 1 blocked by "
                       "PodDisruptionBudget db-pdb, 1 lost\n"),
            std::string::npos)
      << table;
  EXPECT_NE(
      table.find("  default/db stays: evicting it would violate PodDisruptionBudget db-pdb\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("  default/bare is lost: no controller re-creates it\n"), std::string::npos)
      << table;
  const nlohmann::json j = toJson(*report, false);
  EXPECT_EQ(j["drain"]["blocked"],
            nlohmann::json::parse(R"([{"pod":"default/db","budgets":["db-pdb"]}])"));
}

TEST(Drain, ABudgetRefusesUntilTheReplacementsItAllowedRunElsewhere) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "4"), cpuNode("n2", "4")};
  for (const std::string name : {"a", "b", "c"}) {
    objects.pods.push_back(
        ownedBy(MakePod().name(name).label("app", "web").req({{"cpu", "1"}}), "ReplicaSet")
            .node("n1")
            .obj());
  }
  // One disruption at a time: a goes, its copy runs on n2, then b, then c.
  objects.podDisruptionBudgets = {budget("web-pdb", "web", 1)};
  auto report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->drain->moved,
            (std::vector<std::string>{"default/a", "default/b", "default/c"}));
  EXPECT_TRUE(report->drain->blocked.empty());

  // No disruption allowed: nothing moves, so nothing is given back.
  objects.podDisruptionBudgets = {budget("web-pdb", "web", 0)};
  report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->drain->moved.empty());
  EXPECT_EQ(report->drain->blocked.size(), 3u);

  // A replacement that fits nowhere gives nothing back: n2 has room for one.
  objects.nodes[1] = cpuNode("n2", "1");
  objects.podDisruptionBudgets = {budget("web-pdb", "web", 1)};
  report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->drain->moved, (std::vector<std::string>{"default/a", "default/b"}));
  EXPECT_EQ(report->drain->blocked.size(), 1u);
}

TEST(Drain, APodUnderTwoBudgetsIsRefused) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "4"), cpuNode("n2", "4")};
  objects.pods = {ownedBy(MakePod().name("a").label("app", "web"), "ReplicaSet").node("n1").obj()};
  objects.podDisruptionBudgets = {budget("web-pdb", "web", 5), budget("tier-pdb", "web", 5)};
  auto report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->drain->moved.empty());
  ASSERT_EQ(report->drain->blocked.size(), 1u);
  EXPECT_EQ(report->drain->blocked[0].budgets, (std::vector<std::string>{"web-pdb", "tier-pdb"}));
  EXPECT_NE(toTable(*report, false)
                .find("default/a stays: the eviction API refuses a pod under several "
                      "PodDisruptionBudgets: web-pdb, tier-pdb"),
            std::string::npos);
}

TEST(Drain, SelectorPicksNodesAndUnknownNamesAreErrors) {
  api::ObjectSet objects;
  objects.nodes = {MakeNode().name("a").label("pool", "old").obj(),
                   MakeNode().name("b").label("pool", "new").obj()};
  auto selector = labels::Selector::parse("pool=old");
  ASSERT_TRUE(selector.ok());
  auto report = simulate(objects, {.drain = DrainRequest{{}, *selector}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->drain->nodes, std::vector<std::string>{"a"});

  auto missing = simulate(objects, {.drain = DrainRequest{{"nope"}, std::nullopt}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--drain: node \"nope\" is not in the cluster");
}

TEST(AddNodes, SearchFindsTheFewestNodesThatPlaceEveryPodThatFitsOne) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "1")};
  for (int i = 0; i < 3; ++i) {
    objects.pods.push_back(
        MakePod().name("p" + std::to_string(i)).req({{"cpu", "3"}}).created(i).obj());
  }
  objects.pods.push_back(MakePod().name("huge").req({{"cpu", "64"}}).created(9).obj());
  const api::Node tmpl = *cpuNode("big", "4");
  auto report = simulate(objects, {.nodeTemplate = tmpl});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->addedNodes.has_value());
  EXPECT_EQ(report->addedNodes->count, 3u);
  EXPECT_TRUE(report->addedNodes->helps);
  const std::string table = toTable(*report, false);
  EXPECT_NE(table.find("3 nodes like big place every pending pod that fits one (3 of 4 placed)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(
      placements(*report).back().rfind("default/huge: 0/4 nodes are available: 4 Insufficient "
                                       "cpu.",
                                       0),
      0u)
      << placements(*report).back();

  auto fixed = simulate(objects, {.nodeTemplate = tmpl, .nodeCount = 1});
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  EXPECT_EQ(placements(*fixed)[0], "default/p0 -> big-1");
  EXPECT_EQ(fixed->numNodes, 2);
}

TEST(AddNodes, SaysSoWhenNoCountHelps) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "1")};
  objects.pods = {MakePod().name("huge").req({{"cpu", "64"}}).obj()};
  auto report = simulate(objects, {.nodeTemplate = *cpuNode("small", "2")});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->addedNodes->helps);
  EXPECT_EQ(report->addedNodes->count, 0u);
  EXPECT_NE(
      toTable(*report, false).find("no number of nodes like small up to 1 places another pod"),
      std::string::npos);
}

TEST(AddPods, CountsTheCopiesThatFitOneByOneAndWhyTheNextDoesNot) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "2"), cpuNode("n2", "2")};
  const api::Pod tmpl = *MakePod().name("web").schedulerName("other").req({{"cpu", "1"}}).obj();
  auto report = simulate(objects, {.podTemplate = tmpl});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->addedPods.has_value());
  EXPECT_EQ(report->addedPods->placed, 4u);
  EXPECT_EQ(report->results.size(), 5u);  // the four that fit and the one that stopped it
  EXPECT_EQ(report->addedPods->stoppedBy,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "No preemption victims found for incoming pod.");
  EXPECT_NE(toTable(*report, false).find("4 copies of web fit; the next fits nowhere: 0/2 nodes"),
            std::string::npos);

  auto fixed = simulate(objects, {.podTemplate = tmpl, .podCount = 2});
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  EXPECT_EQ(placements(*fixed),
            (std::vector<std::string>{"default/web-1 -> n1", "default/web-2 -> n2"}));
}

TEST(WhatIfs, DrainWithAddNodesSearchesTheNodesTheDrainNeeds) {
  api::ObjectSet objects;
  objects.nodes = {cpuNode("n1", "4"), cpuNode("n2", "4")};
  objects.pods = {
      ownedBy(MakePod().name("web").req({{"cpu", "1"}}), "ReplicaSet").node("n1").created(1).obj(),
      ownedBy(MakePod().name("big").req({{"cpu", "3"}}), "ReplicaSet").node("n1").created(2).obj(),
      MakePod().name("filler").req({{"cpu", "2"}}).node("n2").created(3).obj(),
  };
  auto report = simulate(objects, {.drain = DrainRequest{{"n1"}, std::nullopt},
                                   .nodeTemplate = *cpuNode("spare", "4")});
  ASSERT_TRUE(report.ok()) << report.error().message;
  // n2 has room for web only: big needs one new node, wherever web goes.
  EXPECT_EQ(report->addedNodes->count, 1u);
  for (const PodResult& r : report->results) EXPECT_TRUE(r.node.has_value()) << r.pod;
}

TEST(ExplainAllFilters, GivesEveryFilterPluginsVerdictNotOnlyTheFirst) {
  api::ObjectSet objects;
  objects.nodes = {MakeNode()
                       .name("n1")
                       .taint("gpu", "true", "NoSchedule")
                       .allocatable({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}})
                       .obj()};
  objects.pods = {MakePod().name("p").req({{"cpu", "2"}}).obj()};
  util::Parallelizer parallelizer(1);
  auto report = runWhatIfs(objects, {}, config::defaultConfiguration(),
                           Options{.explain = true, .allFilters = true}, parallelizer);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->results.size(), 1u);
  ASSERT_EQ(report->results[0].nodes.size(), 1u);
  const NodeExplanation& n = report->results[0].nodes[0];
  EXPECT_EQ(n.plugin, "TaintToleration");  // the cycle stops at the first
  std::vector<std::string> verdicts;
  for (const FilterVerdict& v : n.filters) {
    verdicts.push_back(v.plugin + (v.skipped           ? " skipped"
                                   : v.reasons.empty() ? " passes"
                                                       : ": " + v.reasons.front()));
  }
  EXPECT_EQ(verdicts, (std::vector<std::string>{
                          "NodeUnschedulable passes",
                          "NodeName passes",
                          "TaintToleration: node(s) had untolerated taint {gpu: true}",
                          "NodeAffinity skipped",
                          "NodePorts skipped",
                          "NodeResourcesFit: Insufficient cpu",
                          "VolumeRestrictions skipped",
                          "NodeVolumeLimits skipped",
                          "VolumeBinding skipped",
                          "VolumeZone skipped",
                          "PodTopologySpread skipped",
                          "InterPodAffinity skipped",
                      }));
  const nlohmann::json j = toJson(*report, true);
  EXPECT_EQ(j["results"][0]["nodes"][0]["filters"][5],
            nlohmann::json::parse(
                R"({"plugin":"NodeResourcesFit","passed":false,"reasons":["Insufficient cpu"]})"));
}

TEST(TemplateArg, ParsesFileAndOptionalPositiveCount) {
  auto a = parseTemplateArg("add-nodes", "node.yaml:3");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->path, "node.yaml");
  EXPECT_EQ(a->count, 3u);
  auto b = parseTemplateArg("add-nodes", "node.yaml");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->count, std::nullopt);
  for (const char* bad : {"node.yaml:0", "node.yaml:-1", "node.yaml:x", "node.yaml:", ":3"}) {
    EXPECT_FALSE(parseTemplateArg("add-pods", bad).ok()) << bad;
  }
  EXPECT_EQ(parseTemplateArg("add-pods", "p.yaml:two").error().message,
            "--add-pods: COUNT in \"p.yaml:two\" must be a positive integer");
}

}  // namespace
}  // namespace berth::simulate
