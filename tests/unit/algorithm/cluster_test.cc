// A small cluster scheduled through the default profile end to end: the diagnosis message must be
// upstream's, character for character.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "tests/support/builders.h"

namespace berth::algorithm {
namespace {

using test::MakeNode;
using test::MakePod;

class FiveNodeCluster : public ::testing::Test {
 protected:
  FiveNodeCluster() {
    const test::Quantities size = {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}};
    nodes_ = {
        MakeNode().name("cordoned").label("disk", "ssd").allocatable(size).unschedulable().obj(),
        MakeNode()
            .name("gpu-1")
            .label("disk", "ssd")
            .allocatable(size)
            .taint("gpu", "true", "NoSchedule")
            .obj(),
        MakeNode()
            .name("gpu-2")
            .label("disk", "ssd")
            .allocatable(size)
            .taint("gpu", "true", "NoSchedule")
            .obj(),
        MakeNode().name("full").label("disk", "ssd").allocatable(size).obj(),
        MakeNode().name("hdd").label("disk", "hdd").allocatable(size).obj(),
    };
    bound_ = {MakePod()
                  .name("hog")
                  .uid("hog")
                  .node("full")
                  .phase("Running")
                  .req({{"cpu", "3500m"}, {"memory", "1Gi"}})
                  .obj()};
    fw_ = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
    snapshot_ = test::makeSnapshot(nodes_, bound_);
  }

  ScheduleOutcome schedule(const api::PodPtr& pod) {
    GenericScheduler sched(par_, 1, 100);
    framework::CycleState state;
    framework::PodInfo info(pod);
    return sched.schedulePod(*fw_, state, info, snapshot_);
  }

  std::vector<api::NodePtr> nodes_;
  std::vector<api::PodPtr> bound_;
  framework::runtime::FrameworkPtr fw_;
  framework::Snapshot snapshot_;
  util::Parallelizer par_{1};
};

TEST_F(FiveNodeCluster, PodThatFitsNowhereGetsUpstreamsMessage) {
  auto out =
      schedule(MakePod().name("web").nodeSelector({{"disk", "ssd"}}).req({{"cpu", "1"}}).obj());
  ASSERT_TRUE(out.fitError.has_value()) << out.node;
  EXPECT_TRUE(out.node.empty());
  EXPECT_EQ(out.evaluatedNodes, 5);
  // First rejecting Filter per node, in the default order (NodeUnschedulable, NodeName,
  // TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit); counts sorted as strings.
  EXPECT_EQ(out.fitError->message(),
            "0/5 nodes are available: 1 Insufficient cpu, "
            "1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable, "
            "2 node(s) had untolerated taint {gpu: true}.");
  EXPECT_EQ(out.fitError->diagnosis.unschedulablePlugins,
            (std::set<std::string>{"NodeAffinity", "NodeResourcesFit", "NodeUnschedulable",
                                   "TaintToleration"}));
  std::map<std::string, std::string> byNode;
  for (const auto& [node, status] : out.fitError->diagnosis.nodeToStatus) {
    byNode[std::string(node)] = std::string(status.plugin());
  }
  EXPECT_EQ(byNode, (std::map<std::string, std::string>{{"cordoned", "NodeUnschedulable"},
                                                        {"full", "NodeResourcesFit"},
                                                        {"gpu-1", "TaintToleration"},
                                                        {"gpu-2", "TaintToleration"},
                                                        {"hdd", "NodeAffinity"}}));
}

TEST_F(FiveNodeCluster, ToleratingTheTaintOpensTheGpuNodes) {
  auto pod = MakePod()
                 .name("trainer")
                 .nodeSelector({{"disk", "ssd"}})
                 .toleration("gpu", "Exists", "", "NoSchedule")
                 .req({{"cpu", "1"}})
                 .obj();
  auto out = schedule(pod);
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_TRUE(out.node == "gpu-1" || out.node == "gpu-2") << out.node;
  EXPECT_EQ(out.feasible.size(), 2u);
}

TEST_F(FiveNodeCluster, SmallPodLandsOnTheOnlyFreeSsdNode) {
  // 400m fits beside the 3500m hog on "full"; the taints, the cordon and the selector exclude the
  // rest, so "full" is the single feasible node.
  auto out = schedule(
      MakePod().name("small").nodeSelector({{"disk", "ssd"}}).req({{"cpu", "400m"}}).obj());
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.node, "full");
}

TEST_F(FiveNodeCluster, TooManyReasonsOnOneNodeAreAllCounted) {
  // 5 cpu and 20Gi fit nowhere: NodeResourcesFit reports both resources on the free nodes.
  auto out = schedule(MakePod().name("huge").req({{"cpu", "5"}, {"memory", "20Gi"}}).obj());
  ASSERT_TRUE(out.fitError.has_value());
  EXPECT_EQ(out.fitError->message(),
            "0/5 nodes are available: 1 node(s) were unschedulable, "
            "2 Insufficient cpu, 2 Insufficient memory, "
            "2 node(s) had untolerated taint {gpu: true}.");
}

}  // namespace
}  // namespace berth::algorithm
