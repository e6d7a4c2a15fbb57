// NodeUnschedulable: upstream's node_unschedulable_test.go, through the runtime.

#include <gtest/gtest.h>

#include "pkg/plugins/nodeunschedulable/node_unschedulable.h"
#include "tests/support/builders.h"

namespace berth::plugins::nodeunschedulable {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

TEST(NodeUnschedulable, RejectsCordonedNodesUnlessTolerated) {
  struct Case {
    const char* name;
    test::PodWrapper pod;
    bool unschedulable;
    bool fits;
  };
  const Case cases[] = {
      {"unschedulable node, pod without tolerations", MakePod().name("p"), true, false},
      {"schedulable node", MakePod().name("p"), false, true},
      {"unschedulable node, pod tolerates the unschedulable taint",
       MakePod().name("p").toleration("node.kubernetes.io/unschedulable", "", "", "NoSchedule"),
       true, true},
      {"tolerated with Exists and no effect",
       MakePod().name("p").toleration("node.kubernetes.io/unschedulable", "Exists", "", ""), true,
       true},
      {"tolerate-everything toleration", MakePod().name("p").toleration("", "Exists", "", ""), true,
       true},
      {"toleration for another effect does not help",
       MakePod().name("p").toleration("node.kubernetes.io/unschedulable", "Exists", "",
                                      "NoExecute"),
       true, false},
      {"toleration for another key does not help",
       MakePod().name("p").toleration("node.kubernetes.io/not-ready", "Exists", "", "NoSchedule"),
       true, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    test::Harness h(test::profileWith({test::plugin("NodeUnschedulable")}),
                    {MakeNode().name("n").unschedulable(c.unschedulable).obj()});
    auto run = h.filter(c.pod.obj());
    ASSERT_EQ(run.filter.size(), 1u);
    if (c.fits) {
      EXPECT_TRUE(run.filter[0].isSuccess()) << run.filter[0].message();
    } else {
      EXPECT_EQ(run.filter[0].code(), Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(run.filter[0].message(), "node(s) were unschedulable");
      EXPECT_EQ(run.filter[0].plugin(), "NodeUnschedulable");
    }
  }
}

TEST(NodeUnschedulable, ATaintOnTheNodeIsNotACordon) {
  // The node.kubernetes.io/unschedulable taint itself is TaintToleration's business.
  test::Harness h(
      test::profileWith({test::plugin("NodeUnschedulable")}),
      {MakeNode().name("n").taint("node.kubernetes.io/unschedulable", "", "NoSchedule").obj()});
  auto run = h.filter(MakePod().name("p").obj());
  ASSERT_EQ(run.filter.size(), 1u);
  EXPECT_TRUE(run.filter[0].isSuccess());
}

}  // namespace
}  // namespace berth::plugins::nodeunschedulable
