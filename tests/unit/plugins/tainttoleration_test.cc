// TaintToleration: upstream's taint_toleration_test.go (Filter with the v1.25-v1.34 reason that
// names the taint; Score + NormalizeScore), through the runtime over a real Snapshot.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/plugins/tainttoleration/taint_toleration.h"
#include "tests/support/builders.h"

namespace berth::plugins::tainttoleration {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

config::Profile profile() { return test::profileWith({test::plugin("TaintToleration", 3)}); }

struct T {
  std::string key, value, effect;
};
struct Tol {
  std::string key, op, value, effect;
};

api::PodPtr podWith(const std::vector<Tol>& tolerations) {
  auto p = MakePod().name("pod1");
  for (const auto& t : tolerations) p.toleration(t.key, t.op, t.value, t.effect);
  return p.obj();
}

api::NodePtr nodeWith(const std::string& name, const std::vector<T>& taints) {
  auto n = MakeNode().name(name);
  for (const auto& t : taints) n.taint(t.key, t.value, t.effect);
  return n.obj();
}

TEST(TaintToleration, FilterMatchesUpstreamTable) {
  struct Case {
    const char* name;
    std::vector<Tol> tolerations;
    std::vector<T> taints;
    std::string wantReason;  // empty: fits
  };
  const std::vector<Case> cases = {
      {"A pod having no tolerations can't be scheduled onto a node with nonempty taints",
       {},
       {{"dedicated", "user1", "NoSchedule"}},
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       {{"dedicated", "", "user1", "NoSchedule"}},
       {{"dedicated", "user1", "NoSchedule"}},
       ""},
      {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
       "NoSchedule",
       {{"dedicated", "Equal", "user2", "NoSchedule"}},
       {{"dedicated", "user1", "NoSchedule"}},
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod can be scheduled onto the node, with a toleration uses operator Exists that "
       "tolerates the taints on the node",
       {{"foo", "Exists", "", "NoSchedule"}},
       {{"foo", "bar", "NoSchedule"}},
       ""},
      {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
       "pod can be scheduled onto the node",
       {{"dedicated", "Equal", "user2", "NoSchedule"}, {"foo", "Exists", "", "NoSchedule"}},
       {{"dedicated", "user2", "NoSchedule"}, {"foo", "bar", "NoSchedule"}},
       ""},
      {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
       "effect doesn't match, can't be scheduled onto the node",
       {{"foo", "Equal", "bar", "PreferNoSchedule"}},
       {{"foo", "bar", "NoSchedule"}},
       "node(s) had untolerated taint {foo: bar}"},
      {"The pod has a toleration that keys and values match the taint on the node, the effect of "
       "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the "
       "node",
       {{"foo", "Equal", "bar", ""}},
       {{"foo", "bar", "NoSchedule"}},
       ""},
      {"The pod has a toleration that key and value don't match the taint on the node, but the "
       "effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
       {{"dedicated", "Equal", "user2", "NoSchedule"}},
       {{"dedicated", "user1", "PreferNoSchedule"}},
       ""},
      {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
       "scheduled onto the node",
       {},
       {{"dedicated", "user1", "PreferNoSchedule"}},
       ""},
      // berth-specific cases below.
      {"NoExecute taints are enforced too",
       {},
       {{"node.kubernetes.io/not-ready", "", "NoExecute"}},
       "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
      {"the first untolerated taint in node order is named",
       {{"a", "Exists", "", ""}},
       {{"a", "1", "NoSchedule"}, {"b", "2", "NoSchedule"}, {"c", "3", "NoExecute"}},
       "node(s) had untolerated taint {b: 2}"},
      {"an empty key with Exists tolerates every taint",
       {{"", "Exists", "", ""}},
       {{"a", "1", "NoSchedule"}, {"b", "2", "NoExecute"}},
       ""},
      {"Gt without the alpha comparison feature tolerates nothing",
       {{"sla", "Gt", "750", "NoSchedule"}},
       {{"sla", "950", "NoSchedule"}},
       "node(s) had untolerated taint {sla: 950}"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    test::Harness h(profile(), {nodeWith("nodeA", c.taints)});
    auto run = h.filter(podWith(c.tolerations));
    ASSERT_TRUE(run.preFilter.isSuccess());
    ASSERT_EQ(run.filter.size(), 1u);
    if (c.wantReason.empty()) {
      EXPECT_TRUE(run.filter[0].isSuccess()) << run.filter[0].message();
    } else {
      EXPECT_EQ(run.filter[0].code(), Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(run.filter[0].reasons(), std::vector<std::string>{c.wantReason});
      EXPECT_EQ(run.filter[0].plugin(), "TaintToleration");
    }
  }
}

TEST(TaintToleration, RejectsUntoleratedNoSchedule) {
  test::Harness h(profile(), {nodeWith("gpu", {{"gpu", "true", "NoSchedule"}})});
  auto run = h.filter(MakePod().name("p").obj());
  ASSERT_EQ(run.filter.size(), 1u);
  EXPECT_EQ(run.filter[0].message(), "node(s) had untolerated taint {gpu: true}");
}

TEST(TaintToleration, ScoreMatchesUpstreamTable) {
  struct Case {
    const char* name;
    std::vector<Tol> tolerations;
    std::vector<std::vector<T>> nodeTaints;  // nodeA, nodeB, …
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"node with taints tolerated by the pod, gets a higher score than those node with "
       "intolerable taints",
       {{"foo", "Equal", "bar", "PreferNoSchedule"}},
       {{{"foo", "bar", "PreferNoSchedule"}}, {{"foo", "blah", "PreferNoSchedule"}}},
       {100, 0}},
      {"the nodes that all of their taints are tolerated by the pod, get the same score, no "
       "matter how many tolerable taints a node has",
       {{"cpu-type", "Equal", "arm64", "PreferNoSchedule"},
        {"disk-type", "Equal", "ssd", "PreferNoSchedule"}},
       {{},
        {{"cpu-type", "arm64", "PreferNoSchedule"}},
        {{"cpu-type", "arm64", "PreferNoSchedule"}, {"disk-type", "ssd", "PreferNoSchedule"}}},
       {100, 100, 100}},
      {"the more intolerable taints a node has, the lower score it gets.",
       {{"foo", "Equal", "bar", "PreferNoSchedule"}},
       {{},
        {{"cpu-type", "arm64", "PreferNoSchedule"}},
        {{"cpu-type", "arm64", "PreferNoSchedule"}, {"disk-type", "ssd", "PreferNoSchedule"}}},
       {100, 50, 0}},
      {"only taints and tolerations that have effect PreferNoSchedule are checked by "
       "taints-tolerations priority function",
       {{"cpu-type", "Equal", "arm64", "NoSchedule"}, {"disk-type", "Equal", "ssd", "NoSchedule"}},
       {{},
        {{"cpu-type", "arm64", "NoSchedule"}},
        {{"cpu-type", "arm64", "PreferNoSchedule"}, {"disk-type", "ssd", "PreferNoSchedule"}}},
       {100, 100, 0}},
      {"Default behaviour No taints and tolerations, lands on node with no taints",
       {},
       {{}, {{"cpu-type", "arm64", "PreferNoSchedule"}}},
       {100, 0}},
      // berth-specific cases below.
      {"a toleration without effect counts for PreferNoSchedule",
       {{"cpu-type", "Exists", "", ""}},
       {{}, {{"cpu-type", "arm64", "PreferNoSchedule"}}},
       {100, 100}},
      {"no node has untolerated taints: all get the maximum", {}, {{}, {}, {}}, {100, 100, 100}},
      {"three untolerated taints against one",
       {},
       {{{"a", "", "PreferNoSchedule"}},
        {{"a", "", "PreferNoSchedule"},
         {"b", "", "PreferNoSchedule"},
         {"c", "", "PreferNoSchedule"}}},
       {67, 0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::NodePtr> nodes;
    for (size_t i = 0; i < c.nodeTaints.size(); ++i) {
      nodes.push_back(nodeWith(std::string("node") + char('A' + i), c.nodeTaints[i]));
    }
    test::Harness h(profile(), nodes);
    auto run = h.score(podWith(c.tolerations));
    ASSERT_TRUE(run.status.isSuccess()) << run.status.message();
    EXPECT_EQ(run.of("TaintToleration"), c.want);
    // The profile weight (3) multiplies the normalized score.
    std::vector<int64_t> weighted;
    for (int64_t s : c.want) weighted.push_back(3 * s);
    EXPECT_EQ(run.table.totals, weighted);
  }
}

}  // namespace
}  // namespace berth::plugins::tainttoleration
