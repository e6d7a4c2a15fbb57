// FitError::message() against upstream's FitError.Error() (framework/types.go) and its tests
// (types_test.go TestFitError_Error).

#include "pkg/framework/fit_error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::framework {
namespace {

Status unsched(std::string reason) { return Status(Code::Unschedulable, std::move(reason)); }

TEST(FitError, MatchesUpstreamTable) {
  const std::string preMsg = "Node(s) failed PreFilter plugin FalsePreFilter";
  struct Case {
    const char* name;
    int numAllNodes;
    Diagnosis diagnosis;
    std::string want;
  };
  std::vector<Case> cases;
  {
    Diagnosis d;
    d.preFilterMsg = preMsg;
    // The framework gives every node the PreFilter status; it must not be counted again.
    for (const char* n : {"node1", "node2", "node3"})
      d.nodeToStatus.emplace_back(n, unsched(preMsg));
    cases.push_back({"nodes failed Prefilter plugin", 3, d,
                     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter."});
    d.postFilterMsg = "Error running PostFilter plugin FailedPostFilter";
    cases.push_back({"nodes failed Prefilter plugin and the preemption also failed", 3, d,
                     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. "
                     "Error running PostFilter plugin FailedPostFilter"});
  }
  {
    Diagnosis d;
    for (const char* n : {"node1", "node2", "node3"}) {
      d.nodeToStatus.emplace_back(n, unsched("Node(s) failed Filter plugin FalseFilter-1"));
    }
    cases.push_back({"nodes failed one Filter plugin with an empty PostFilterMsg", 3, d,
                     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1."});
    d.postFilterMsg = "Error running PostFilter plugin FailedPostFilter";
    cases.push_back({"nodes failed one Filter plugin with a non-empty PostFilterMsg", 3, d,
                     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
                     "Error running PostFilter plugin FailedPostFilter"});
  }
  {
    Diagnosis d;
    d.nodeToStatus.emplace_back("node1", unsched("Node(s) failed Filter plugin FalseFilter-1"));
    d.nodeToStatus.emplace_back("node2", unsched("Node(s) failed Filter plugin FalseFilter-1"));
    d.nodeToStatus.emplace_back("node3", unsched("Node(s) failed Filter plugin FalseFilter-2"));
    cases.push_back({"nodes failed two Filter plugins with an empty PostFilterMsg", 3, d,
                     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
                     "2 Node(s) failed Filter plugin FalseFilter-1."});
    d.postFilterMsg = "Error running PostFilter plugin FailedPostFilter";
    cases.push_back({"nodes failed two Filter plugins with a non-empty PostFilterMsg", 3, d,
                     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
                     "2 Node(s) failed Filter plugin FalseFilter-1. "
                     "Error running PostFilter plugin FailedPostFilter"});
  }
  {
    Diagnosis d;
    d.nodeToStatus.emplace_back("node1", unsched("Node failed Reserve plugin Reserve-1"));
    cases.push_back({"failed to Reserve on node", 1, d,
                     "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1."});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FitError e{c.numAllNodes, c.diagnosis};
    EXPECT_EQ(e.message(), c.want);
  }
}

TEST(FitError, CountsEveryReasonOfAStatus) {
  Diagnosis d;
  Status both(Code::Unschedulable, "Insufficient cpu");
  both.addReason(std::string_view("Insufficient memory"));
  d.nodeToStatus.emplace_back("a", both);
  d.nodeToStatus.emplace_back("b", Status(Code::Unschedulable, "Insufficient cpu"));
  FitError e{2, d};
  EXPECT_EQ(e.message(), "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.");
}

TEST(FitError, SortsWholeEntriesAsStrings) {
  // Upstream sorts "count reason" strings, so "10 …" comes before "2 …" and before "9 …".
  Diagnosis d;
  for (int i = 0; i < 10; ++i) {
    d.nodeToStatus.emplace_back("z", Status(Code::Unschedulable, "node(s) were unschedulable"));
  }
  for (int i = 0; i < 2; ++i) {
    d.nodeToStatus.emplace_back("y", Status(Code::Unschedulable, "Insufficient cpu"));
  }
  for (int i = 0; i < 9; ++i) {
    d.nodeToStatus.emplace_back("x", Status(Code::Unschedulable, "A reason sorting first"));
  }
  FitError e{21, d};
  EXPECT_EQ(e.message(),
            "0/21 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu, "
            "9 A reason sorting first.");
}

TEST(FitError, AbsentNodesCountWithTheAbsentStatus) {
  Diagnosis d;
  d.nodeToStatus.emplace_back("n1", Status(Code::Unschedulable, "Insufficient cpu"));
  d.nodeToStatus.emplace_back("n2", Status(Code::UnschedulableAndUnresolvable,
                                           "node(s) didn't satisfy plugin(s) [NodeAffinity]"));
  d.absentNodesStatus =
      Status(Code::UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
  FitError e{5, d};
  EXPECT_EQ(e.message(),
            "0/5 nodes are available: 1 Insufficient cpu, "
            "4 node(s) didn't satisfy plugin(s) [NodeAffinity].");
}

TEST(FitError, AbsentStatusWithoutReasonsAddsNothing) {
  Diagnosis d;
  d.nodeToStatus.emplace_back("n1", Status(Code::Unschedulable, "Insufficient cpu"));
  d.absentNodesStatus = Status(Code::UnschedulableAndUnresolvable, std::string_view());
  FitError e{3, d};
  EXPECT_EQ(e.message(), "0/3 nodes are available: 1 Insufficient cpu.");
}

TEST(FitError, NoReasonsAtAllEndsAfterTheColon) {
  // Upstream appends the histogram only when it is not empty: "0/0 nodes are available:".
  FitError e{0, Diagnosis{}};
  EXPECT_EQ(e.message(), "0/0 nodes are available:");
  Diagnosis d;
  d.postFilterMsg = "preemption: 0/0 nodes are available.";
  FitError withPost{0, d};
  EXPECT_EQ(withPost.message(), "0/0 nodes are available: preemption: 0/0 nodes are available.");
}

}  // namespace
}  // namespace berth::framework
