// GenericScheduler with nominated pods (upstream's RunFilterPluginsWithNominatedPods in
// findNodesThatPassFilters): the room a preemptor waits for on its nominated node is kept from pods
// of lower or equal priority and taken by pods of higher priority, with and without the
// equivalence cache, whose entries stay valid for the nodes without nominated pods.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/config/config.h"
#include "pkg/framework/nominator.h"
#include "pkg/plugins/registry.h"
#include "tests/support/builders.h"

namespace berth::algorithm {
namespace {

using test::MakeNode;
using test::MakePod;

class FakeNominator final : public framework::PodNominator {
 public:
  void nominate(const api::PodPtr& pod, const std::string& node) {
    std::lock_guard lock(mu_);
    by_node_[node].push_back(framework::makePodInfo(pod));
  }
  std::vector<framework::PodInfoPtr> nominatedPodsForNode(std::string_view node) const override {
    std::lock_guard lock(mu_);
    auto it = by_node_.find(std::string(node));
    return it == by_node_.end() ? std::vector<framework::PodInfoPtr>{} : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<framework::PodInfoPtr>, std::less<>> by_node_;
};

api::PodPtr podOf(const std::string& name, int32_t priority, const std::string& cpu) {
  return MakePod()
      .name(name)
      .ns("default")
      .uid("uid-" + name)
      .label("app", "batch")
      .priority(priority)
      .req({{"cpu", cpu}})
      .obj();
}

struct Case {
  const char* name;
  bool reuse;  // the equivalence cache on
};

class NominatedPodsTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    static const framework::runtime::Registry registry = plugins::makeInTreeRegistry();
    framework::Handle handle;
    handle.nominator = &nominator_;
    auto made = framework::runtime::Framework::create(
        registry, config::defaultConfiguration().profiles[0], handle);
    ASSERT_TRUE(made.ok()) << made.error().message;
    fw_ = std::move(*made);
    nodes_ = {MakeNode().name("n0").allocatable({{"cpu", "4"}, {"pods", "110"}}).obj(),
              MakeNode().name("n1").allocatable({{"cpu", "1"}, {"pods", "110"}}).obj()};
    snapshot_ = test::makeSnapshot(nodes_);
  }

  ScheduleOutcome schedule(const api::PodPtr& pod) {
    framework::CycleState state;
    framework::PodInfo info(pod);
    return sched_.schedulePod(*fw_, state, info, snapshot_);
  }

  util::Parallelizer par_{2};
  GenericScheduler sched_{par_, 1, 100, GetParam().reuse};
  FakeNominator nominator_;
  framework::runtime::FrameworkPtr fw_;
  std::vector<api::NodePtr> nodes_;
  framework::Snapshot snapshot_;
};

TEST_P(NominatedPodsTest, LowerPriorityPodDoesNotTakeTheNominatedRoom) {
  // Before any nomination, a pod of the class fits only n0 (and the cache remembers that).
  ScheduleOutcome before = schedule(podOf("first", 10, "2"));
  ASSERT_TRUE(before.status.isSuccess()) << before.status.message();
  EXPECT_EQ(before.node, "n0");

  nominator_.nominate(podOf("preemptor", 100, "3"), "n0");
  ScheduleOutcome after = schedule(podOf("second", 10, "2"));
  ASSERT_TRUE(after.fitError.has_value()) << "placed on " << after.node;
  EXPECT_EQ(after.fitError->message(), "0/2 nodes are available: 2 Insufficient cpu.");
}

TEST_P(NominatedPodsTest, EqualPriorityPodDoesNotTakeTheRoom) {
  nominator_.nominate(podOf("preemptor", 100, "3"), "n0");
  ScheduleOutcome out = schedule(podOf("peer", 100, "2"));
  EXPECT_TRUE(out.fitError.has_value()) << "placed on " << out.node;
}

TEST_P(NominatedPodsTest, HigherPriorityPodTakesTheRoom) {
  nominator_.nominate(podOf("preemptor", 100, "3"), "n0");
  ScheduleOutcome out = schedule(podOf("urgent", 200, "2"));
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.node, "n0");
}

TEST_P(NominatedPodsTest, NominatedPodItselfIsNotCountedTwice) {
  const api::PodPtr preemptor = podOf("preemptor", 100, "3");
  nominator_.nominate(preemptor, "n0");
  ScheduleOutcome out = schedule(preemptor);
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.node, "n0");
}

TEST_P(NominatedPodsTest, NodesWithoutNominatedPodsAreUnaffected) {
  nominator_.nominate(podOf("preemptor", 100, "4"), "n0");
  ScheduleOutcome out = schedule(podOf("small", 10, "500m"));
  ASSERT_TRUE(out.status.isSuccess()) << out.status.message();
  EXPECT_EQ(out.node, "n1");
}

INSTANTIATE_TEST_SUITE_P(GenericScheduler, NominatedPodsTest,
                         ::testing::Values(Case{"Uncached", false}, Case{"EquivalenceCache", true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace berth::algorithm
