// GenericScheduler: upstream's schedulePod / findNodesThatFitPod / numFeasibleNodesToFind /
// selectHost (pkg/scheduler/schedule_one.go) over real plugins and a real Snapshot.

#include "pkg/algorithm/generic_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pkg/log/log.h"
#include "pkg/plugins/registry.h"
#include "tests/support/builders.h"

namespace berth::algorithm {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;
using test::plugin;
using test::profileWith;

TEST(GenericScheduler, NumFeasibleNodesToFind) {
  struct Case {
    int32_t percentage;
    size_t numAllNodes;
    size_t want;
  };
  const Case cases[] = {
      {0, 0, 0},         {0, 50, 50},    {0, 99, 99},
      {0, 100, 100},     {0, 500, 230},  // adaptive: 50 - 500/125 = 46%
      {0, 1000, 420},                    // 42%
      {0, 5000, 500},                    // 10%
      {0, 6000, 300},                    // 50 - 48 = 2%, raised to the 5% floor
      {0, 10000, 500},                   // 5%
      {100, 5000, 5000}, {100, 50, 50},  {100, 1, 1},
      {10, 5000, 500},   {10, 500, 100},  // 50 found, raised to the 100-node minimum
      {50, 50, 50},      {50, 200, 100}, {1, 150, 100},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.percentage) + "% of " + std::to_string(c.numAllNodes));
    EXPECT_EQ(GenericScheduler::numFeasibleNodesToFind(c.percentage, c.numAllNodes), c.want);
  }
}

struct Cluster {
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;
};

Cluster plainNodes(int n) {
  Cluster c;
  for (int i = 0; i < n; ++i) {
    c.nodes.push_back(MakeNode()
                          .name("n" + std::to_string(i))
                          .allocatable({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}})
                          .obj());
  }
  return c;
}

class GenericSchedulerTest : public ::testing::Test {
 protected:
  ScheduleOutcome schedule(GenericScheduler& sched, const framework::runtime::Framework& fw,
                           const framework::Snapshot& snap, const api::PodPtr& pod) {
    framework::CycleState state;
    framework::PodInfo info(pod);
    return sched.schedulePod(fw, state, info, snap);
  }
  util::Parallelizer par_{1};
};

TEST_F(GenericSchedulerTest, NoNodes) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  GenericScheduler sched(par_, 1, 100);
  framework::Snapshot empty;
  auto out = schedule(sched, *fw, empty, MakePod().name("p").obj());
  EXPECT_EQ(out.status.code(), Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(out.status.message(), "no nodes available to schedule pods");
  EXPECT_FALSE(out.fitError.has_value());
  EXPECT_TRUE(out.node.empty());
}

TEST_F(GenericSchedulerTest, TiesAreBrokenUniformlyAndDeterministicallyForASeed) {
  // TaintToleration scores every untainted node 100: four nodes always tie.
  auto fw = test::mustMakeFramework(profileWith({plugin("TaintToleration", 3)}));
  auto cluster = plainNodes(4);
  auto snap = test::makeSnapshot(cluster.nodes);
  auto pod = MakePod().name("p").obj();

  auto picks = [&](uint64_t seed, int n) {
    GenericScheduler sched(par_, seed, 100);
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      auto o = schedule(sched, *fw, snap, pod);
      EXPECT_TRUE(o.status.isSuccess()) << o.status.message();
      EXPECT_EQ(o.scores.totals, (std::vector<int64_t>{300, 300, 300, 300}));
      out.push_back(o.node);
    }
    return out;
  };
  const auto a = picks(42, 4000);
  EXPECT_EQ(a, picks(42, 4000)) << "same seed, same choices";
  EXPECT_NE(a, picks(43, 4000)) << "another seed, other choices";

  std::map<std::string, int> counts;
  for (const auto& n : a) counts[n]++;
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [node, count] : counts) {
    SCOPED_TRACE(node);
    EXPECT_GT(count, 850);  // expected 1000 each; 850..1150 is > 9 standard deviations wide
    EXPECT_LT(count, 1150);
  }
}

TEST_F(GenericSchedulerTest, HighestTotalWins) {
  auto fw = test::mustMakeFramework(profileWith({plugin("NodeAffinity", 2)}));
  auto cluster = plainNodes(3);
  cluster.nodes[2] = MakeNode().name("n2").label("disk", "ssd").obj();
  auto snap = test::makeSnapshot(cluster.nodes);
  GenericScheduler sched(par_, 7, 100);
  auto pod = MakePod()
                 .name("p")
                 .preferredNodeAffinity(5, "disk", api::NodeSelectorOperator::In, {"ssd"})
                 .obj();
  for (int i = 0; i < 20; ++i) {
    auto out = schedule(sched, *fw, snap, pod);
    ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
    EXPECT_EQ(out.node, "n2");
    EXPECT_EQ(out.scores.totals, (std::vector<int64_t>{0, 0, 200}));
  }
}

TEST_F(GenericSchedulerTest, ScoresSkippedByPreScoreLeaveAZeroTotalPerNode) {
  // NodeAffinity's PreScore skips its Score for a pod without preferred terms: no plugin scores,
  // every node ties at 0 and one is still chosen, whether results of equivalent pods are reused or
  // not.
  auto fw = test::mustMakeFramework(profileWith({plugin("NodeAffinity", 2)}));
  auto snap = test::makeSnapshot(plainNodes(3).nodes);
  for (bool reuse : {false, true}) {
    SCOPED_TRACE(reuse ? "reusing" : "evaluating every pod");
    GenericScheduler sched(par_, 7, 100, reuse);
    for (int i = 0; i < 3; ++i) {
      auto out = schedule(sched, *fw, snap, MakePod().name("p" + std::to_string(i)).obj());
      ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
      EXPECT_TRUE(out.scores.plugins.empty());
      EXPECT_EQ(out.scores.totals, (std::vector<int64_t>{0, 0, 0}));
      EXPECT_FALSE(out.node.empty());
    }
  }
}

TEST_F(GenericSchedulerTest, SingleFeasibleNodeSkipsScoring) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  auto cluster = plainNodes(3);
  cluster.nodes[0] = MakeNode().name("n0").unschedulable().obj();
  cluster.nodes[2] = MakeNode().name("n2").taint("k", "v", "NoSchedule").obj();
  auto snap = test::makeSnapshot(cluster.nodes);
  GenericScheduler sched(par_, 1, 100);
  auto out = schedule(sched, *fw, snap, MakePod().name("p").obj());
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.node, "n1");
  EXPECT_EQ(out.evaluatedNodes, 3);
  ASSERT_EQ(out.feasible.size(), 1u);
  EXPECT_TRUE(out.scores.plugins.empty());
  EXPECT_TRUE(out.scores.totals.empty());
  EXPECT_EQ(out.diagnosis.nodeToStatus.size(), 2u);
}

TEST_F(GenericSchedulerTest, PreFilterNarrowingLeavesOtherNodesUnevaluated) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  auto cluster = plainNodes(4);
  cluster.nodes[1] = MakeNode().name("n1").unschedulable().obj();
  auto snap = test::makeSnapshot(cluster.nodes);
  GenericScheduler sched(par_, 1, 100);
  {
    SCOPED_TRACE("only the named node, and it is cordoned");
    auto out = schedule(sched, *fw, snap, MakePod().name("p").matchFieldsName({"n1"}).obj());
    ASSERT_TRUE(out.fitError.has_value());
    EXPECT_EQ(out.evaluatedNodes, 1);
    EXPECT_EQ(out.fitError->message(),
              "0/4 nodes are available: 1 node(s) were unschedulable, "
              "3 node(s) didn't satisfy plugin(s) [NodeAffinity].");
    EXPECT_TRUE(out.fitError->diagnosis.unschedulablePlugins.contains("NodeAffinity"));
    EXPECT_TRUE(out.fitError->diagnosis.unschedulablePlugins.contains("NodeUnschedulable"));
  }
  {
    SCOPED_TRACE("two named nodes: the choice is among them");
    for (int i = 0; i < 10; ++i) {
      auto out = schedule(
          sched, *fw, snap,
          MakePod().name("p").matchFieldsName({"n2"}).orTerm().matchFieldsName({"n3"}).obj());
      ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
      EXPECT_TRUE(out.node == "n2" || out.node == "n3") << out.node;
      EXPECT_EQ(out.evaluatedNodes, 2);
    }
  }
  {
    SCOPED_TRACE("a name that is not in the cluster");
    auto out = schedule(sched, *fw, snap, MakePod().name("p").matchFieldsName({"ghost"}).obj());
    ASSERT_TRUE(out.fitError.has_value());
    EXPECT_EQ(out.fitError->message(),
              "0/4 nodes are available: 4 node(s) didn't satisfy plugin(s) [NodeAffinity].");
  }
  {
    SCOPED_TRACE("conflicting names in one term: PreFilter rejects the pod outright");
    auto out = schedule(sched, *fw, snap,
                        MakePod().name("p").matchFieldsName({"n2"}).matchFieldsName({"n3"}).obj());
    ASSERT_TRUE(out.fitError.has_value());
    EXPECT_EQ(out.evaluatedNodes, 0);
    EXPECT_EQ(out.fitError->diagnosis.preFilterMsg, "pod affinity terms conflict");
    EXPECT_EQ(out.fitError->message(), "0/4 nodes are available: pod affinity terms conflict.");
  }
}

TEST_F(GenericSchedulerTest, NominatedNodeIsTriedFirst) {
  auto fw = test::mustMakeFramework(
      profileWith({plugin("NodeUnschedulable"), plugin("NodeAffinity", 2)}));
  std::vector<api::NodePtr> nodes = {
      MakeNode().name("best").label("disk", "ssd").obj(),
      MakeNode().name("other").obj(),
      MakeNode().name("cordoned").unschedulable().obj(),
  };
  auto snap = test::makeSnapshot(nodes);
  GenericScheduler sched(par_, 1, 100);
  auto base =
      MakePod().name("p").preferredNodeAffinity(10, "disk", api::NodeSelectorOperator::In, {"ssd"});
  {
    SCOPED_TRACE("feasible nominated node wins without scoring");
    auto out = schedule(sched, *fw, snap, test::PodWrapper(base).nominatedNode("other").obj());
    ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
    EXPECT_EQ(out.node, "other");
    EXPECT_EQ(out.evaluatedNodes, 1);
    EXPECT_TRUE(out.scores.totals.empty());
  }
  {
    SCOPED_TRACE("infeasible nominated node: the normal search");
    auto out = schedule(sched, *fw, snap, test::PodWrapper(base).nominatedNode("cordoned").obj());
    ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
    EXPECT_EQ(out.node, "best");
    EXPECT_EQ(out.evaluatedNodes, 3);
  }
  {
    SCOPED_TRACE("nominated node that no longer exists");
    auto out = schedule(sched, *fw, snap, test::PodWrapper(base).nominatedNode("gone").obj());
    ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
    EXPECT_EQ(out.node, "best");
  }
}

TEST_F(GenericSchedulerTest, StopsAfterEnoughFeasibleNodesAndRotatesTheStart) {
  auto fw = test::mustMakeFramework(profileWith({plugin("TaintToleration")}));
  auto cluster = plainNodes(300);
  auto snap = test::makeSnapshot(cluster.nodes);
  GenericScheduler sched(par_, 1, /*percentageOfNodesToScore=*/50);  // 150 of 300
  auto pod = MakePod().name("p").obj();

  auto first = schedule(sched, *fw, snap, pod);
  ASSERT_TRUE(first.status.isSuccess());
  EXPECT_EQ(first.evaluatedNodes, 150);
  ASSERT_EQ(first.feasible.size(), 150u);
  EXPECT_EQ(first.feasible.front()->name(), "n0");

  auto second = schedule(sched, *fw, snap, pod);
  EXPECT_EQ(second.evaluatedNodes, 150);
  EXPECT_EQ(second.feasible.front()->name(), "n150");

  auto third = schedule(sched, *fw, snap, pod);
  EXPECT_EQ(third.feasible.front()->name(), "n0");
}

TEST_F(GenericSchedulerTest, ProfilePercentageOverridesGlobal) {
  auto profile = profileWith({plugin("TaintToleration")});
  profile.percentageOfNodesToScore = 100;
  auto fw = test::mustMakeFramework(profile);
  auto snap = test::makeSnapshot(plainNodes(300).nodes);
  GenericScheduler sched(par_, 1, /*global=*/10);
  auto out = schedule(sched, *fw, snap, MakePod().name("p").obj());
  EXPECT_EQ(out.evaluatedNodes, 300);
}

TEST_F(GenericSchedulerTest, WithoutScorePluginsOneFeasibleNodeIsEnough) {
  auto fw = test::mustMakeFramework(profileWith({plugin("NodeUnschedulable"), plugin("NodeName")}));
  auto cluster = plainNodes(5);
  cluster.nodes[0] = MakeNode().name("n0").unschedulable().obj();
  auto snap = test::makeSnapshot(cluster.nodes);
  GenericScheduler sched(par_, 1, 100);
  auto out = schedule(sched, *fw, snap, MakePod().name("p").obj());
  ASSERT_TRUE(out.status.isSuccess());
  EXPECT_EQ(out.node, "n1");
  EXPECT_EQ(out.evaluatedNodes, 2);  // n0 rejected, n1 feasible, then stop
}

TEST_F(GenericSchedulerTest, ParallelFilteringGivesTheSameDiagnosis) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  Cluster c;
  for (int i = 0; i < 500; ++i) {
    auto n = MakeNode().name("n" + std::to_string(i)).allocatable({{"cpu", "1"}, {"pods", "10"}});
    if (i % 3 == 0) n.unschedulable();
    if (i % 3 == 1) n.taint("gpu", "true", "NoSchedule");
    c.nodes.push_back(n.obj());
  }
  auto snap = test::makeSnapshot(c.nodes);
  util::Parallelizer four(4);
  GenericScheduler sched(four, 1, 100);
  framework::CycleState state;
  framework::PodInfo info(MakePod().name("p").req({{"cpu", "2"}}).obj());
  auto out = sched.schedulePod(*fw, state, info, snap);
  ASSERT_TRUE(out.fitError.has_value());
  EXPECT_EQ(out.evaluatedNodes, 500);
  EXPECT_EQ(out.fitError->message(),
            "0/500 nodes are available: 166 Insufficient cpu, "
            "167 node(s) had untolerated taint {gpu: true}, 167 node(s) were unschedulable.");
}

TEST_F(GenericSchedulerTest, NumFeasibleNodesCountsOnlyTheNodesPreFilterLeft) {
  // Upstream computes numFeasibleNodesToFind from the nodes left after PreFilter narrowing: 150 of
  // 300 nodes named, 50% of 150 is 75, raised to the 100 minimum, so 100 nodes are evaluated.
  auto fw = test::mustMakeFramework(profileWith({plugin("NodeAffinity", 2)}));
  auto snap = test::makeSnapshot(plainNodes(300).nodes);
  auto pod = MakePod().name("p");
  for (int i = 0; i < 150; ++i) pod.orTerm().matchFieldsName({"n" + std::to_string(2 * i)});
  GenericScheduler sched(par_, 1, /*percentageOfNodesToScore=*/50);
  auto out = schedule(sched, *fw, snap, pod.obj());
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.evaluatedNodes, 100);
}

// A cluster where Filter and Score disagree from node to node, and three pod templates interleaved
// as concurrent ReplicaSets would be, some of which run out of room: the scheduler that reuses
// results across equivalent pods must decide exactly as the one that evaluates every node every
// time, while placements change nodes between pods and nodes are replaced (a taint added, a node
// cordoned), added and removed (the node list changes length and positions move). `makeFramework`
// builds the profile for one of the two snapshots.
struct EquivalentPodsOutcome {
  int placed = 0;
  int unschedulable = 0;
  std::map<std::string, int, std::less<>> rejectionsByPlugin;  // over every pod's diagnosis
};
void expectReuseDecidesAsEvaluatingEveryNode(
    const std::function<framework::runtime::FrameworkPtr(const framework::Snapshot&)>&
        makeFramework,
    EquivalentPodsOutcome& outcome) {
  auto schedule = [](GenericScheduler& sched, const framework::runtime::Framework& fw,
                     const framework::Snapshot& snap, const api::PodPtr& pod) {
    framework::CycleState state;
    framework::PodInfo info(pod);
    return sched.schedulePod(fw, state, info, snap);
  };
  auto nodeNumber = [](int i) {
    auto n = MakeNode()
                 .name("n" + std::to_string(i))
                 .label("zone", i % 3 == 0 ? "a" : "b")
                 .allocatable(
                     {{"cpu", std::to_string(2 << (i % 3))}, {"memory", "8Gi"}, {"pods", "20"}});
    if (i % 7 == 0) n.taint("gpu", "true", "NoSchedule");
    if (i % 5 == 0) n.taint("spot", "true", "PreferNoSchedule");
    if (i % 11 == 0) n.unschedulable();
    return n;
  };
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 120; ++i) nodes.push_back(nodeNumber(i).obj());
  auto reusedSnap = test::makeSnapshot(nodes);
  auto freshSnap = test::makeSnapshot(nodes);
  auto reusingFw = makeFramework(reusedSnap);
  auto evaluatingFw = makeFramework(freshSnap);
  util::Parallelizer two(2);
  GenericScheduler reusing(two, 9, 100, /*reuseEquivalentResults=*/true);
  GenericScheduler evaluating(two, 9, 100, /*reuseEquivalentResults=*/false);

  auto templateOf = [](int i) {
    switch (i % 4) {
      case 0:
      case 1:
        return MakePod().label("app", "web").req({{"cpu", "300m"}, {"memory", "256Mi"}});
      case 2:
        return MakePod()
            .label("app", "gpu")
            .req({{"cpu", "1"}})
            .toleration("gpu", "Exists", "", "NoSchedule")
            .nodeSelector({{"zone", "a"}});
      default:
        return MakePod()
            .label("app", "batch")
            .req({{"cpu", "1500m"}, {"memory", "1Gi"}})
            .preferredNodeAffinity(10, "zone", api::NodeSelectorOperator::In, {"b"});
    }
  };
  int& placed = outcome.placed;
  int& unschedulable = outcome.unschedulable;
  for (int i = 0; i < 400; ++i) {
    SCOPED_TRACE("pod " + std::to_string(i));
    auto pod = templateOf(i).name("p" + std::to_string(i)).uid("u" + std::to_string(i)).obj();
    auto a = schedule(reusing, *reusingFw, reusedSnap, pod);
    auto b = schedule(evaluating, *evaluatingFw, freshSnap, pod);
    ASSERT_EQ(a.status.code(), b.status.code()) << a.status.message();
    ASSERT_EQ(a.node, b.node);
    EXPECT_EQ(a.evaluatedNodes, b.evaluatedNodes);
    EXPECT_EQ(a.scores.totals, b.scores.totals);
    EXPECT_EQ(a.diagnosis.nodeToStatus.size(), b.diagnosis.nodeToStatus.size());
    for (size_t k = 0;
         k < std::min(a.diagnosis.nodeToStatus.size(), b.diagnosis.nodeToStatus.size()); ++k) {
      const auto& [nodeA, statusA] = a.diagnosis.nodeToStatus[k];
      const auto& [nodeB, statusB] = b.diagnosis.nodeToStatus[k];
      EXPECT_EQ(nodeA, nodeB);
      EXPECT_EQ(statusA.plugin(), statusB.plugin()) << nodeA;
      EXPECT_EQ(statusA.message(), statusB.message()) << nodeA;
      ++outcome.rejectionsByPlugin[std::string(statusA.plugin())];
    }
    ASSERT_EQ(a.fitError.has_value(), b.fitError.has_value());
    if (a.fitError) {
      EXPECT_EQ(a.fitError->message(), b.fitError->message());
      ++unschedulable;
    }
    if (!a.node.empty()) {
      ++placed;
      auto bound = std::make_shared<api::Pod>(*pod);
      bound->spec.nodeName = a.node;
      reusedSnap.addPod(a.node, framework::makePodInfo(bound));
      freshSnap.addPod(a.node, framework::makePodInfo(bound));
    }
    if (i % 50 == 25) {
      // A node changes under the cache: replaced by one with another taint and cordon state.
      const int k = (i / 50) * 13 % 120;
      auto changed = nodeNumber(k).taint("maintenance", "true", "NoSchedule").obj();
      reusedSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(changed));
      freshSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(changed));
    }
    if (i % 50 == 40) {
      // One node leaves from the front half, and a new, roomy one joins at the end.
      const std::string gone = "n" + std::to_string((i / 50) * 7 % 60);
      reusedSnap.removeNodeInfo(gone);
      freshSnap.removeNodeInfo(gone);
      auto added = nodeNumber(1000 + i).obj();
      reusedSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(added));
      freshSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(added));
      if (i % 100 == 40) {
        auto extra = nodeNumber(2000 + i).obj();
        reusedSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(extra));
        freshSnap.addNodeInfo(std::make_shared<framework::NodeInfo>(extra));
      }
    }
  }
}

TEST_F(GenericSchedulerTest, ReusingResultsOfEquivalentPodsDecidesAsEvaluatingEveryNode) {
  EquivalentPodsOutcome outcome;
  expectReuseDecidesAsEvaluatingEveryNode(
      [](const framework::Snapshot&) {
        return test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
      },
      outcome);
  EXPECT_GT(outcome.placed, 100);
  EXPECT_GT(outcome.unschedulable, 10);
}

// A plugin that is not node-local: it keeps nodes from holding more than a few pods above the
// cluster's mean, and scores nodes by how far below the mean they are, reading every node's pods
// from the snapshot in PreFilter and PreScore.
class CrowdAware final : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::PreScorePlugin,
                         public framework::ScorePlugin {
 public:
  static constexpr std::string_view kName = "CrowdAware";
  explicit CrowdAware(const framework::Snapshot& snapshot) : snapshot_(snapshot) {}
  std::string_view name() const override { return kName; }

  framework::Status preFilter(framework::CycleState& state, const framework::PodInfo&,
                              framework::PreFilterResult&) const override {
    state.write(kKey, std::make_unique<Mean>(mean()));
    return {};
  }
  framework::Status filter(const framework::CycleState& state, const framework::PodInfo&,
                           const framework::NodeInfo& node) const override {
    const auto* m = state.readAs<Mean>(kKey);
    if (m == nullptr) return framework::Status::error("no mean");
    if (static_cast<double>(node.pods().size()) > m->value + 2) {
      return framework::Status(Code::Unschedulable, std::string_view("node(s) were crowded"));
    }
    return {};
  }
  framework::Status preScore(framework::CycleState& state, const framework::PodInfo&,
                             const std::vector<const framework::NodeInfo*>&) const override {
    state.write(kKey, std::make_unique<Mean>(mean()));
    return {};
  }
  framework::Status score(const framework::CycleState& state, const framework::PodInfo&,
                          const framework::NodeInfo& node, int64_t& out) const override {
    const auto* m = state.readAs<Mean>(kKey);
    if (m == nullptr) return framework::Status::error("no mean");
    const double below = m->value - static_cast<double>(node.pods().size());
    out = std::clamp<int64_t>(50 + static_cast<int64_t>(below * 10), 0, 100);
    return {};
  }

 private:
  struct Mean final : framework::StateData {
    explicit Mean(double v) : value(v) {}
    double value;
    std::unique_ptr<framework::StateData> clone() const override {
      return std::make_unique<Mean>(*this);
    }
  };
  inline static const framework::StateKey kKey = framework::makeStateKey("CrowdAware");

  double mean() const {
    const auto& nodes = snapshot_.nodeInfos();
    size_t pods = 0;
    for (const auto& n : nodes) pods += n->pods().size();
    return nodes.empty() ? 0 : static_cast<double>(pods) / static_cast<double>(nodes.size());
  }

  const framework::Snapshot& snapshot_;
};

TEST_F(GenericSchedulerTest, ReusingResultsWithAPluginThatIsNotNodeLocalDecidesAsEvaluating) {
  EquivalentPodsOutcome outcome;
  expectReuseDecidesAsEvaluatingEveryNode(
      [](const framework::Snapshot& snapshot) {
        auto registry = plugins::makeInTreeRegistry();
        EXPECT_TRUE(
            registry
                .add(std::string(CrowdAware::kName),
                     [&snapshot](const framework::Handle&) -> util::Result<framework::PluginPtr> {
                       return framework::PluginPtr(std::make_unique<CrowdAware>(snapshot));
                     })
                .ok());
        config::Profile profile = config::defaultConfiguration().profiles[0];
        // Last in Filter order, but between node-local plugins in Score order (after
        // NodeResourcesFit, before NodeResourcesBalancedAllocation): a node-local rejection must
        // win over its own, and merged score rows must keep the profile's order.
        auto& multiPoint = profile.plugins.multiPoint.enabled;
        multiPoint.insert(multiPoint.begin() + 7,
                          config::PluginRef{std::string(CrowdAware::kName), 2, "test"});
        auto fw = framework::runtime::Framework::create(registry, profile, {});
        if (!fw.ok()) throw std::invalid_argument(fw.error().message);
        // The volume plugins (claims and cluster objects), the inter-pod plugins and ImageLocality
        // read more than the node: not node-local either.
        EXPECT_EQ((*fw)->notNodeLocalPlugins(),
                  (std::vector<std::string>{"CrowdAware", "VolumeRestrictions", "NodeVolumeLimits",
                                            "VolumeBinding", "VolumeZone", "PodTopologySpread",
                                            "InterPodAffinity", "ImageLocality"}));
        return std::move(*fw);
      },
      outcome);
  EXPECT_GT(outcome.placed, 100);
  EXPECT_GT(outcome.unschedulable, 0);
  // The mix was exercised: both kinds of plugin rejected nodes.
  EXPECT_GT(outcome.rejectionsByPlugin["CrowdAware"], 0);
  EXPECT_GT(outcome.rejectionsByPlugin["NodeResourcesFit"], 0);
}

TEST_F(GenericSchedulerTest, APluginThatIsNotNodeLocalIsNamedOnceAtVerbosityTwo) {
  const std::vector<api::NodePtr> nodes = {
      MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj(),
      MakeNode().name("n2").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj()};
  auto snapshot = test::makeSnapshot(nodes);
  auto registry = plugins::makeInTreeRegistry();
  ASSERT_TRUE(registry
                  .add(std::string(CrowdAware::kName),
                       [&snapshot](const framework::Handle&) -> util::Result<framework::PluginPtr> {
                         return framework::PluginPtr(std::make_unique<CrowdAware>(snapshot));
                       })
                  .ok());
  config::Profile profile = config::defaultConfiguration().profiles[0];
  profile.plugins.multiPoint.enabled.push_back({std::string(CrowdAware::kName), 1, "test"});
  auto fw = framework::runtime::Framework::create(registry, profile, {});
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  util::Parallelizer one(1);
  GenericScheduler sched(one, 9, 100, /*reuseEquivalentResults=*/true);

  log::configure(log::Format::Text, 2);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    framework::CycleState state;
    framework::PodInfo info(MakePod().name("p" + std::to_string(i)).req({{"cpu", "1"}}).obj());
    ASSERT_TRUE(sched.schedulePod(**fw, state, info, snapshot).status.isSuccess());
  }
  const std::string logged = testing::internal::GetCapturedStderr();
  log::configure(log::Format::Text, 0);

  const std::string line =
      R"("Plugin is not node-local: the equivalence cache runs it on every node each cycle")";
  // Once per such plugin (the default profile's volume and inter-pod plugins and ImageLocality
  // are too), not per cycle.
  ASSERT_EQ((*fw)->notNodeLocalPlugins(),
            (std::vector<std::string>{"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                                      "VolumeZone", "PodTopologySpread", "InterPodAffinity",
                                      "CrowdAware", "ImageLocality"}));
  for (const std::string& plugin : (*fw)->notNodeLocalPlugins()) {
    const std::string named = line + " profile=\"berth\" plugin=\"" + plugin + "\"";
    ASSERT_NE(logged.find(named), std::string::npos) << logged;
    EXPECT_EQ(logged.find(named), logged.rfind(named)) << "logged more than once:\n" << logged;
  }
}

// A Filter plugin that fails with an internal error on one node.
class BrokenFilter final : public framework::FilterPlugin {
 public:
  std::string_view name() const override { return "BrokenFilter"; }
  framework::Status filter(const framework::CycleState&, const framework::PodInfo&,
                           const framework::NodeInfo& node) const override {
    if (node.name() == "n2") return framework::Status::error("disk on fire");
    return framework::Status();
  }
};

TEST_F(GenericSchedulerTest, FilterErrorAbortsTheCycle) {
  auto registry = plugins::makeInTreeRegistry();
  ASSERT_TRUE(registry
                  .add("BrokenFilter",
                       [](const framework::Handle&) -> util::Result<framework::PluginPtr> {
                         return framework::PluginPtr(std::make_unique<BrokenFilter>());
                       })
                  .ok());
  auto fw = framework::runtime::Framework::create(
      registry, profileWith({plugin("BrokenFilter"), plugin("TaintToleration")}), {});
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  auto snap = test::makeSnapshot(plainNodes(4).nodes);
  GenericScheduler sched(par_, 1, 100);
  auto out = schedule(sched, **fw, snap, MakePod().name("p").obj());
  EXPECT_EQ(out.status.code(), Code::Error);
  EXPECT_EQ(out.status.message(), "running \"BrokenFilter\" filter plugin: disk on fire");
  EXPECT_FALSE(out.fitError.has_value());
  EXPECT_TRUE(out.node.empty());
}

}  // namespace
}  // namespace berth::algorithm
