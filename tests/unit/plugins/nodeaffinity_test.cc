// NodeAffinity: upstream's node_affinity_test.go (TestNodeAffinity: PreFilter result and status,
// Filter status; TestNodeAffinityPriority: normalized scores), including the profile's
// addedAffinity (NodeAffinityArgs), through the runtime over a real Snapshot.

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/plugins/nodeaffinity/node_affinity.h"
#include "tests/support/builders.h"

namespace berth::plugins::nodeaffinity {
namespace {

using api::NodeSelectorOperator;
using framework::Code;
using test::MakeNode;
using test::MakePod;

constexpr const char* kErrPod = "node(s) didn't match Pod's node affinity/selector";
constexpr const char* kErrEnforced = "node(s) didn't match scheduler-enforced node affinity";

// A profile with NodeAffinity, given `added` as its pluginConfig args (as the file would give it).
config::Profile profile(std::optional<api::NodeAffinity> added = std::nullopt) {
  auto p = test::profileWith({test::plugin("NodeAffinity", 2)});
  if (added) {
    api::Pod carrier;
    carrier.spec.affinity.emplace().nodeAffinity = std::move(added);
    const auto encoded = api::encodePod(carrier)["spec"]["affinity"]["nodeAffinity"];
    config::Json args = {{"addedAffinity", config::Json::parse(encoded.dump())}};
    p.pluginConfig.push_back({"NodeAffinity", std::move(args), "profiles[0].pluginConfig[0].args"});
  }
  return p;
}

api::NodeSelectorTerm nameIn(std::vector<std::string> names) {
  api::NodeSelectorTerm t;
  t.matchFields.push_back({"metadata.name", NodeSelectorOperator::In, std::move(names)});
  return t;
}

api::NodeSelectorTerm exprIn(std::string key, std::vector<std::string> values) {
  api::NodeSelectorTerm t;
  t.matchExpressions.push_back({std::move(key), NodeSelectorOperator::In, std::move(values)});
  return t;
}

api::NodeAffinity addedRequired(api::NodeSelectorTerm term) {
  api::NodeAffinity a;
  a.requiredDuringSchedulingIgnoredDuringExecution.emplace();
  a.requiredDuringSchedulingIgnoredDuringExecution->nodeSelectorTerms.push_back(std::move(term));
  return a;
}

enum class Pre { Success, Skip, Conflict };

TEST(NodeAffinity, FilterAndPreFilterMatchUpstreamTable) {
  struct Case {
    std::string name;
    test::PodWrapper pod;
    api::StringMap labels = {};
    std::string nodeName = "node";
    const char* wantFilter = nullptr;  // nullptr: fits
    Pre wantPre = Pre::Success;
    std::optional<std::set<std::string>> wantNodes = std::nullopt;
    std::optional<api::NodeAffinity> added = std::nullopt;
  };
  std::vector<Case> cases = {
      {.name = "missing labels",
       .pod = MakePod().nodeSelector({{"foo", "bar"}}),
       .labels = {},
       .wantFilter = kErrPod},
      {.name = "same labels",
       .pod = MakePod().nodeSelector({{"foo", "bar"}}),
       .labels = {{"foo", "bar"}}},
      {.name = "node labels are superset",
       .pod = MakePod().nodeSelector({{"foo", "bar"}}),
       .labels = {{"foo", "bar"}, {"baz", "blah"}}},
      {.name = "node labels are subset",
       .pod = MakePod().nodeSelector({{"foo", "bar"}, {"baz", "blah"}}),
       .labels = {{"foo", "bar"}},
       .wantFilter = kErrPod},
      {.name = "Pod with matchExpressions using In operator that matches the existing node",
       .pod = MakePod().requiredNodeAffinityIn("foo", {"bar", "value2"}),
       .labels = {{"foo", "bar"}}},
      {.name = "Pod with matchExpressions using Gt operator that matches the existing node",
       .pod = MakePod().requiredNodeAffinity("kernel-version", NodeSelectorOperator::Gt, {"0204"}),
       .labels = {{"kernel-version", "0206"}}},
      {.name = "Pod with matchExpressions using NotIn operator that matches the existing node",
       .pod =
           MakePod().requiredNodeAffinity("mem-type", NodeSelectorOperator::NotIn, {"DDR", "DDR2"}),
       .labels = {{"mem-type", "DDR3"}}},
      {.name = "Pod with matchExpressions using Exists operator that matches the existing node",
       .pod = MakePod().requiredNodeAffinity("GPU", NodeSelectorOperator::Exists, {}),
       .labels = {{"GPU", "NVIDIA-GRID-K1"}}},
      {.name = "Pod with affinity that don't match node's labels won't schedule onto the node",
       .pod = MakePod().requiredNodeAffinityIn("foo", {"value1", "value2"}),
       .labels = {{"foo", "bar"}},
       .wantFilter = kErrPod},
      {.name = "Pod with empty MatchExpressions is not a valid value will match no objects and "
               "won't schedule onto the node",
       .pod = MakePod().requiredTerm({}),
       .labels = {{"foo", "bar"}},
       .wantFilter = kErrPod},
      {.name = "Pod with no Affinity will schedule onto a node",
       .pod = MakePod(),
       .labels = {{"foo", "bar"}},
       .wantPre = Pre::Skip},
      {.name = "Pod with Affinity but nil NodeSelector will schedule onto a node",
       .pod = MakePod().mutate([](api::Pod& p) {
         p.spec.affinity.emplace();
         p.spec.affinity->nodeAffinity.emplace();
       }),
       .labels = {{"foo", "bar"}},
       .wantPre = Pre::Skip},
      {.name = "Pod with multiple matchExpressions ANDed that matches the existing node",
       .pod = MakePod()
                  .requiredNodeAffinity("GPU", NodeSelectorOperator::Exists, {})
                  .requiredNodeAffinity("GPU", NodeSelectorOperator::NotIn, {"AMD", "INTER"}),
       .labels = {{"GPU", "NVIDIA-GRID-K1"}}},
      {.name = "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
       .pod = MakePod()
                  .requiredNodeAffinity("GPU", NodeSelectorOperator::Exists, {})
                  .requiredNodeAffinity("GPU", NodeSelectorOperator::In, {"AMD", "INTER"}),
       .labels = {{"GPU", "NVIDIA-GRID-K1"}},
       .wantFilter = kErrPod},
      {.name = "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels "
               "and will schedule onto the node",
       .pod = MakePod()
                  .requiredNodeAffinityIn("foo", {"bar", "value2"})
                  .orTerm()
                  .requiredNodeAffinityIn("diffkey", {"wrong", "value2"}),
       .labels = {{"foo", "bar"}}},
      {.name = "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are "
               "deprecating) both are satisfied, will schedule onto the node",
       .pod = MakePod()
                  .nodeSelector({{"foo", "bar"}})
                  .requiredNodeAffinity("foo", NodeSelectorOperator::Exists, {}),
       .labels = {{"foo", "bar"}}},
      {.name = "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old "
               "thing that we are deprecating) is not satisfied, won't schedule onto the node",
       .pod = MakePod()
                  .nodeSelector({{"foo", "bar"}})
                  .requiredNodeAffinity("foo", NodeSelectorOperator::Exists, {}),
       .labels = {{"foo", "barrrrrr"}},
       .wantFilter = kErrPod},
      {.name = "Pod with an invalid value in Affinity term won't be scheduled onto the node",
       .pod = MakePod().requiredNodeAffinity("foo", NodeSelectorOperator::NotIn,
                                             {"invalid value: ___@#$%^"}),
       .labels = {{"foo", "bar"}},
       .wantFilter = kErrPod},
      {.name = "Pod with matchFields using In operator that matches the existing node",
       .pod = MakePod().matchFieldsName({"node1"}),
       .nodeName = "node1",
       .wantNodes = std::set<std::string>{"node1"}},
      {.name = "Pod with matchFields using In operator that does not match the existing node",
       .pod = MakePod().matchFieldsName({"node1"}),
       .nodeName = "node2",
       .wantFilter = kErrPod,
       .wantNodes = std::set<std::string>{"node1"}},
      {.name = "Pod with two terms: matchFields does not match, but matchExpressions matches",
       .pod = MakePod().matchFieldsName({"node1"}).orTerm().requiredNodeAffinityIn("foo", {"bar"}),
       .labels = {{"foo", "bar"}},
       .nodeName = "node2"},
      {.name = "Pod with one term: matchFields does not match, but matchExpressions matches",
       .pod = MakePod().matchFieldsName({"node1"}).requiredNodeAffinityIn("foo", {"bar"}),
       .labels = {{"foo", "bar"}},
       .nodeName = "node2",
       .wantFilter = kErrPod,
       .wantNodes = std::set<std::string>{"node1"}},
      {.name = "Pod with one term: both matchFields and matchExpressions match",
       .pod = MakePod().matchFieldsName({"node1"}).requiredNodeAffinityIn("foo", {"bar"}),
       .labels = {{"foo", "bar"}},
       .nodeName = "node1",
       .wantNodes = std::set<std::string>{"node1"}},
      {.name = "Pod with two terms: both matchFields and matchExpressions do not match",
       .pod = MakePod().matchFieldsName({"node1"}).orTerm().requiredNodeAffinityIn(
           "foo", {"not-match-to-bar"}),
       .labels = {{"foo", "bar"}},
       .nodeName = "node2",
       .wantFilter = kErrPod},
      {.name = "Pod with two terms of node.Name affinity",
       .pod = MakePod().matchFieldsName({"node1"}).orTerm().matchFieldsName({"node2"}),
       .nodeName = "node2",
       .wantNodes = std::set<std::string>{"node1", "node2"}},
      {.name = "Pod with two conflicting mach field requirements",
       .pod = MakePod().matchFieldsName({"node1"}).matchFieldsName({"node2"}),
       .labels = {{"foo", "bar"}},
       .nodeName = "node2",
       .wantFilter = kErrPod,
       .wantPre = Pre::Conflict},
      {.name = "Matches added affinity and Pod's node affinity",
       .pod = MakePod().requiredNodeAffinityIn("zone", {"foo"}),
       .labels = {{"zone", "foo"}},
       .nodeName = "node2",
       .added = addedRequired(nameIn({"node2"}))},
      {.name = "Matches added affinity but not Pod's node affinity",
       .pod = MakePod().requiredNodeAffinityIn("zone", {"bar"}),
       .labels = {{"zone", "foo"}},
       .nodeName = "node2",
       .wantFilter = kErrPod,
       .added = addedRequired(nameIn({"node2"}))},
      {.name = "Doesn't match added affinity",
       .pod = MakePod(),
       .labels = {{"zone", "foo"}},
       .nodeName = "node2",
       .wantFilter = kErrEnforced,
       .added = addedRequired(exprIn("zone", {"bar"}))},
      // berth-specific cases below.
      {.name = "matchFields NotIn does not narrow",
       .pod =
           MakePod().requiredTerm([] {
             api::NodeSelectorTerm t;
             t.matchFields.push_back({"metadata.name", NodeSelectorOperator::NotIn, {"node1"}});
             return t;
           }()),
       .nodeName = "node2"},
      {.name = "a required affinity without terms matches no node",
       .pod = MakePod().requiredNodeAffinityNoTerms(),
       .labels = {{"foo", "bar"}},
       .wantFilter = kErrPod},
      {.name = "enforced affinity is checked before the pod's own",
       .pod = MakePod().nodeSelector({{"zone", "x"}}),
       .labels = {{"zone", "foo"}},
       .wantFilter = kErrEnforced,
       .added = addedRequired(exprIn("zone", {"bar"}))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = MakeNode().name(c.nodeName);
    for (const auto& [k, v] : c.labels) node.label(k, v);
    test::Harness h(profile(c.added), {node.obj()});
    auto run = h.filter(c.pod.obj());

    switch (c.wantPre) {
      case Pre::Success:
        EXPECT_TRUE(run.preFilter.isSuccess()) << run.preFilter.message();
        EXPECT_FALSE(run.state.filterSkipped("NodeAffinity"));
        break;
      case Pre::Skip:
        EXPECT_TRUE(run.preFilter.isSuccess()) << run.preFilter.message();
        EXPECT_TRUE(run.state.filterSkipped("NodeAffinity"));
        break;
      case Pre::Conflict:
        EXPECT_EQ(run.preFilter.code(), Code::UnschedulableAndUnresolvable);
        EXPECT_EQ(run.preFilter.message(), "pod affinity terms conflict");
        EXPECT_EQ(run.preFilter.plugin(), "NodeAffinity");
        break;
    }
    if (c.wantPre != Pre::Conflict) {
      EXPECT_EQ(run.preFilterNodes, c.wantNodes);
    }

    ASSERT_EQ(run.filter.size(), 1u);
    if (c.wantFilter == nullptr) {
      EXPECT_TRUE(run.filter[0].isSuccess()) << run.filter[0].message();
    } else {
      EXPECT_EQ(run.filter[0].code(), Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(run.filter[0].message(), c.wantFilter);
      EXPECT_EQ(run.filter[0].plugin(), "NodeAffinity");
    }
  }
}

// --- Score ---------------------------------------------------------------------------------------

test::PodWrapper affinity1() {
  return MakePod().preferredNodeAffinity(2, "foo", NodeSelectorOperator::In, {"bar"});
}

test::PodWrapper affinity2() {
  return MakePod()
      .preferredNodeAffinity(2, "foo", NodeSelectorOperator::In, {"bar"})
      .preferredNodeAffinity(4, "key", NodeSelectorOperator::In, {"value"})
      .mutate([](api::Pod& p) {
        api::PreferredSchedulingTerm t;
        t.weight = 5;
        t.preference.matchExpressions = {{"foo", NodeSelectorOperator::In, {"bar"}},
                                         {"key", NodeSelectorOperator::In, {"value"}},
                                         {"az", NodeSelectorOperator::In, {"az1"}}};
        p.spec.affinity->nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(t);
      });
}

api::NodeAffinity addedPreferred(int32_t weight, std::string key, std::string value) {
  api::NodeAffinity a;
  api::PreferredSchedulingTerm t;
  t.weight = weight;
  t.preference = exprIn(std::move(key), {std::move(value)});
  a.preferredDuringSchedulingIgnoredDuringExecution.push_back(std::move(t));
  return a;
}

TEST(NodeAffinity, ScoreMatchesUpstreamTable) {
  const api::StringMap label1 = {{"foo", "bar"}};
  const api::StringMap label2 = {{"key", "value"}};
  const api::StringMap label3 = {{"az", "az1"}};
  const api::StringMap label4 = {{"abc", "az11"}, {"def", "az22"}};
  const api::StringMap label5 = {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::vector<std::pair<std::string, api::StringMap>> nodes;
    std::vector<int64_t> want;  // empty: PreScore skipped the plugin
    std::optional<api::NodeAffinity> added = std::nullopt;
  };
  const std::vector<Case> cases = {
      {"all nodes are same priority as NodeAffinity is nil",
       MakePod(),
       {{"node1", label1}, {"node2", label2}, {"node3", label3}},
       {}},
      {"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
       "priority is zero",
       affinity1(),
       {{"node1", label4}, {"node2", label2}, {"node3", label3}},
       {0, 0, 0}},
      {"only node1 matches the preferred scheduling requirements of pod",
       affinity1(),
       {{"node1", label1}, {"node2", label2}, {"node3", label3}},
       {100, 0, 0}},
      {"all nodes matches the preferred scheduling requirements of pod but with different "
       "priorities ",
       affinity2(),
       {{"node1", label1}, {"node5", label5}, {"node2", label2}},
       {18, 100, 36}},
      {"added affinity",
       MakePod(),
       {{"node1", label1}, {"node2", label2}},
       {100, 0},
       addedPreferred(2, "foo", "bar")},
      {"added affinity and pod has default affinity",
       affinity1(),
       {{"node1", label1}, {"node2", label2}, {"node3", label5}},
       {40, 60, 100},
       addedPreferred(3, "key", "value")},
      // berth-specific: a weight-0 term counts for nothing.
      {"zero-weight preferred term",
       MakePod().preferredNodeAffinity(0, "foo", NodeSelectorOperator::In, {"bar"}),
       {{"node1", label1}, {"node2", label2}},
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::NodePtr> nodes;
    for (const auto& [name, labels] : c.nodes) {
      auto n = MakeNode().name(name);
      for (const auto& [k, v] : labels) n.label(k, v);
      nodes.push_back(n.obj());
    }
    test::Harness h(profile(c.added), nodes);
    auto run = h.score(c.pod.obj());
    ASSERT_TRUE(run.status.isSuccess()) << run.status.message();
    EXPECT_EQ(run.of("NodeAffinity"), c.want);
    std::vector<int64_t> weighted(nodes.size(), 0);
    for (size_t i = 0; i < c.want.size(); ++i) weighted[i] = 2 * c.want[i];
    EXPECT_EQ(run.table.totals, weighted);
  }
}

TEST(NodeAffinity, ScoreWorksWithPreScoreDisabled) {
  // Upstream's "calculate the priorities correctly even if PreScore is not called": Score falls
  // back to reading the pod when its PreScore did not run.
  auto p = profile();
  p.plugins.preScore.disabled = {test::plugin("NodeAffinity")};
  test::Harness h(
      p,
      {MakeNode().name("node1").label("foo", "bar").obj(),
       MakeNode().name("node5").label("foo", "bar").label("key", "value").label("az", "az1").obj(),
       MakeNode().name("node2").label("key", "value").obj()});
  ASSERT_TRUE(h.fw().pluginsByExtensionPoint().at("PreScore").empty());
  auto run = h.score(affinity2().obj());
  ASSERT_TRUE(run.status.isSuccess()) << run.status.message();
  EXPECT_EQ(run.of("NodeAffinity"), (std::vector<int64_t>{18, 100, 36}));
}

TEST(NodeAffinity, FilterWorksWithPreFilterDisabled) {
  auto p = profile();
  p.plugins.preFilter.disabled = {test::plugin("NodeAffinity")};
  test::Harness h(p, {MakeNode().name("a").label("foo", "bar").label("baz", "blah").obj(),
                      MakeNode().name("b").obj()});
  auto run = h.filter(MakePod().nodeSelector({{"foo", "bar"}}).obj());
  ASSERT_EQ(run.filter.size(), 2u);
  EXPECT_TRUE(run.filter[0].isSuccess());
  EXPECT_EQ(run.filter[1].message(), kErrPod);
}

}  // namespace
}  // namespace berth::plugins::nodeaffinity
