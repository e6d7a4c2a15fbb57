// PodTopologySpread: upstream's filtering_test.go (TestSingleConstraint, TestMultipleConstraints:
// skew, minDomains, node inclusion policies, missing keys, matchLabelKeys), scoring_test.go
// (TestPodTopologySpreadScore, the system defaults), plugin_test.go's queueing hints, and the args
// validation, through the runtime over a real Snapshot in the cycle state.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/plugins/podtopologyspread/args.h"
#include "pkg/plugins/podtopologyspread/constraints.h"
#include "pkg/plugins/podtopologyspread/pod_topology_spread.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/parallel.h"
#include "tests/support/builders.h"

namespace berth::plugins::podtopologyspread {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;
using ::testing::HasSubstr;

constexpr std::string_view kPlugin = "PodTopologySpread";

// --- Builders ------------------------------------------------------------------------------------

api::LabelSelector exists(std::string key) {
  api::LabelSelector s;
  s.matchExpressions.push_back({std::move(key), "Exists", {}});
  return s;
}

struct Spread {
  int32_t maxSkew = 1;
  std::string key = "zone";
  std::string action = "DoNotSchedule";
  std::optional<api::LabelSelector> selector = exists("foo");
  std::optional<int32_t> minDomains = std::nullopt;
  std::optional<std::string> affinityPolicy = std::nullopt;
  std::optional<std::string> taintsPolicy = std::nullopt;
  std::vector<std::string> matchLabelKeys = {};
};

std::function<void(api::Pod&)> with(std::vector<Spread> spreads) {
  return [spreads = std::move(spreads)](api::Pod& p) {
    for (const Spread& s : spreads) {
      api::TopologySpreadConstraint c;
      c.maxSkew = s.maxSkew;
      c.topologyKey = s.key;
      c.whenUnsatisfiable = s.action;
      c.labelSelector = s.selector;
      c.minDomains = s.minDomains;
      c.nodeAffinityPolicy = s.affinityPolicy;
      c.nodeTaintsPolicy = s.taintsPolicy;
      c.matchLabelKeys = s.matchLabelKeys;
      p.spec.topologySpreadConstraints.push_back(std::move(c));
    }
  };
}

// A node labelled node=<name> and, unless zone is empty, zone=<zone>.
api::NodePtr node(const std::string& name, const std::string& zone) {
  auto n = MakeNode().name(name).label("node", name);
  if (!zone.empty()) n.label("zone", zone);
  return n.obj();
}

// `count` bound pods on `nodeName` labelled key=value.
std::vector<api::PodPtr> podsOn(const std::string& nodeName, int count,
                                const std::string& key = "foo", const std::string& value = "") {
  std::vector<api::PodPtr> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    out.push_back(MakePod()
                      .name(nodeName + "-" + key + "-" + std::to_string(i))
                      .node(nodeName)
                      .label(key, value)
                      .obj());
  }
  return out;
}

std::vector<api::PodPtr> concat(std::vector<std::vector<api::PodPtr>> parts) {
  std::vector<api::PodPtr> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// --- A cycle over a snapshot, as GenericScheduler runs it
// ------------------------------------------

class Cycle {
 public:
  Cycle(const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods,
        const config::Json& args = nullptr, const framework::ClusterObjects* objects = nullptr)
      : snapshot_(test::makeSnapshot(nodes, pods)) {
    static const framework::runtime::Registry registry = makeInTreeRegistry();
    auto profile = test::profileWith({test::plugin(kPlugin, 2)});
    if (!args.is_null()) {
      profile.pluginConfig.push_back(
          {std::string(kPlugin), args, "profiles[0].pluginConfig[0].args"});
    }
    framework::Handle handle;
    handle.objects = objects;
    auto fw = framework::runtime::Framework::create(registry, profile, handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    fw_ = std::move(*fw);
  }

  // Per node: "ok", "skew" (Unschedulable), "label" (UnschedulableAndUnresolvable, missing key),
  // or the PreFilter's failure as "prefilter <code>: <message>".
  std::vector<std::string> filter(const api::PodPtr& pod) const {
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PodInfo info(pod);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    framework::Status pre = fw_->runPreFilterPlugins(state, info, result, rejectedBy);
    if (!pre.isSuccess()) {
      return {"prefilter " + std::to_string(static_cast<int>(pre.code())) + ": " + pre.message()};
    }
    std::vector<std::string> out;
    for (const auto& n : snapshot_.nodeInfos()) {
      framework::Status s = fw_->runFilterPlugins(state, info, *n);
      if (s.isSuccess()) {
        out.emplace_back("ok");
      } else if (s.code() == Code::Unschedulable && s.message() == kErrReasonConstraintsNotMatch &&
                 s.plugin() == kPlugin) {
        out.emplace_back("skew");
      } else if (s.code() == Code::UnschedulableAndUnresolvable &&
                 s.message() == kErrReasonNodeLabelNotMatch && s.plugin() == kPlugin) {
        out.emplace_back("label");
      } else {
        out.push_back("unexpected " + s.message());
      }
    }
    return out;
  }

  bool filterSkipped(const api::PodPtr& pod) const {
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PodInfo info(pod);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    EXPECT_TRUE(fw_->runPreFilterPlugins(state, info, result, rejectedBy).isSuccess());
    return state.filterSkipped(kPlugin);
  }

  // Normalized scores of the feasible nodes (all when empty), in snapshot order; empty when
  // PreScore skipped the plugin.
  std::vector<int64_t> score(const api::PodPtr& pod,
                             const std::vector<std::string>& feasible = {}) const {
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PodInfo info(pod);
    std::vector<const framework::NodeInfo*> nodes;
    for (const auto& n : snapshot_.nodeInfos()) {
      if (feasible.empty() ||
          std::find(feasible.begin(), feasible.end(), n->name()) != feasible.end()) {
        nodes.push_back(n.get());
      }
    }
    framework::Status s = fw_->runPreScorePlugins(state, info, nodes);
    EXPECT_TRUE(s.isSuccess()) << s.message();
    util::Parallelizer parallelizer(1);
    framework::runtime::ScoreTable table;
    s = fw_->runScorePlugins(state, info, nodes, parallelizer, table);
    EXPECT_TRUE(s.isSuccess()) << s.message();
    for (size_t i = 0; i < table.plugins.size(); ++i) {
      if (table.plugins[i] == kPlugin) return table.scores[i];
    }
    return {};
  }

  const framework::runtime::Framework& fw() const { return *fw_; }

 private:
  framework::runtime::FrameworkPtr fw_;
  framework::Snapshot snapshot_;
};

// --- Filter --------------------------------------------------------------------------------------

const std::vector<api::NodePtr> kFourNodes = {node("node-a", "zone1"), node("node-b", "zone1"),
                                              node("node-x", "zone2"), node("node-y", "zone2")};
using V = std::vector<std::string>;

TEST(PodTopologySpread, FilterMatchesUpstreamSingleConstraintTable) {
  struct Case {
    std::string name;
    test::PodWrapper pod;
    std::vector<api::PodPtr> existing;
    V want;
    std::vector<api::NodePtr> nodes = kFourNodes;
  };
  const auto incoming = [] { return MakePod().name("p").uid("p").label("foo", ""); };
  const auto terminating = MakePod()
                               .name("gone")
                               .node("node-a")
                               .label("foo", "")
                               .mutate([](api::Pod& p) { p.metadata.deletionTimestamp.emplace(); })
                               .obj();
  const auto elsewhere = [](std::string name, std::string nodeName) {
    return MakePod().name(std::move(name)).ns("other").node(std::move(nodeName)).label("foo", "");
  };
  const auto rev = [](std::string name, std::string nodeName, std::string value) {
    return MakePod()
        .name(std::move(name))
        .node(std::move(nodeName))
        .label("foo", "")
        .label("rev", std::move(value))
        .obj();
  };
  const auto spread2103 = concat({podsOn("node-a", 2), podsOn("node-b", 1), podsOn("node-y", 3)});
  auto tainted = kFourNodes;
  tainted[2] = MakeNode()
                   .name("node-x")
                   .label("node", "node-x")
                   .label("zone", "zone2")
                   .taint("dedicated", "infra", "NoSchedule")
                   .obj();
  std::vector<Case> cases = {
      {"no existing pods", incoming().mutate(with({{}})), {}, {"ok", "ok", "ok", "ok"}},
      {"no existing pods, incoming pod doesn't match itself",
       incoming().mutate(with({{.selector = exists("bar")}})),
       {},
       {"ok", "ok", "ok", "ok"}},
      {"existing pods in a different namespace do not count",
       incoming().mutate(with({{}})),
       {elsewhere("a1", "node-a").obj(), podsOn("node-b", 1)[0], elsewhere("x1", "node-x").obj(),
        elsewhere("x2", "node-x").obj()},
       {"skew", "skew", "ok", "ok"}},
      {"pods spread across zones as 3/3, all nodes fit",
       incoming().mutate(with({{}})),
       concat({podsOn("node-a", 2), podsOn("node-b", 1), podsOn("node-x", 1), podsOn("node-y", 2)}),
       {"ok", "ok", "ok", "ok"}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       incoming().mutate(with({{}})),
       concat({podsOn("node-a", 1), podsOn("node-b", 1), podsOn("node-x", 2)}),
       {"ok", "label", "skew", "skew"},
       {node("node-a", "zone1"), node("node-b", ""), node("node-x", "zone2"),
        node("node-y", "zone2")}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       incoming().mutate(with({{.key = "rack"}})),
       {},
       {"label", "label", "label", "label"}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       incoming().mutate(with({{.key = "node"}})),
       spread2103,
       {"skew", "skew", "ok", "skew"}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       incoming().mutate(with({{.maxSkew = 2, .key = "node"}})),
       spread2103,
       {"skew", "ok", "ok", "skew"}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       incoming().mutate(with({{.key = "node", .selector = exists("bar")}})),
       concat({podsOn("node-a", 2, "bar"), podsOn("node-b", 1, "bar"), podsOn("node-y", 3, "bar")}),
       {"skew", "ok", "ok", "skew"}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       incoming()
           .requiredNodeAffinityIn("node", {"node-a", "node-y"})
           .mutate(with({{.key = "node"}})),
       spread2103,
       {"ok", "ok", "ok", "skew"}},
      {"nodeAffinityPolicy Ignore counts the nodes the pod cannot go to",
       incoming()
           .requiredNodeAffinityIn("node", {"node-a", "node-y"})
           .mutate(with({{.key = "node", .affinityPolicy = "Ignore"}})),
       spread2103,
       {"skew", "skew", "ok", "skew"}},
      {"nodeSelector is honoured like required affinity",
       incoming().nodeSelector({{"zone", "zone1"}}).mutate(with({{.key = "node"}})),
       concat({podsOn("node-a", 1), podsOn("node-b", 1)}),
       {"ok", "ok", "ok", "ok"}},
      {"terminating pods are not counted",
       incoming().mutate(with({{.key = "node"}})),
       concat({{terminating}, podsOn("node-b", 1), podsOn("node-x", 1), podsOn("node-y", 1)}),
       {"ok", "skew", "skew", "skew"}},
      {"minDomains above the number of domains makes the global minimum 0",
       incoming().mutate(with({{.maxSkew = 2, .minDomains = 3}})),
       concat({podsOn("node-a", 1), podsOn("node-b", 1), podsOn("node-x", 1)}),
       {"skew", "skew", "ok", "ok"}},
      {"minDomains equal to the number of domains keeps the real minimum",
       incoming().mutate(with({{.maxSkew = 2, .minDomains = 2}})),
       concat({podsOn("node-a", 1), podsOn("node-b", 1), podsOn("node-x", 1)}),
       {"ok", "ok", "ok", "ok"}},
      {"nodeTaintsPolicy Ignore (the default) counts a tainted node",
       incoming().mutate(with({{.key = "node"}})),
       spread2103,
       {"skew", "skew", "ok", "skew"},
       tainted},
      {"nodeTaintsPolicy Honor leaves out a node with an untolerated NoSchedule taint",
       incoming().mutate(with({{.key = "node", .taintsPolicy = "Honor"}})),
       spread2103,
       {"skew", "ok", "ok", "skew"},
       tainted},
      {"nodeTaintsPolicy Honor counts a node whose taint the pod tolerates",
       incoming()
           .toleration("dedicated", "Equal", "infra", "NoSchedule")
           .mutate(with({{.key = "node", .taintsPolicy = "Honor"}})),
       spread2103,
       {"skew", "skew", "ok", "skew"},
       tainted},
      {"matchLabelKeys counts only the pods with the incoming pod's values",
       incoming().label("rev", "v2").mutate(with({{.matchLabelKeys = {"rev"}}})),
       {rev("a1", "node-a", "v1"), rev("a2", "node-a", "v1"), rev("b1", "node-b", "v2"),
        rev("x1", "node-x", "v2")},
       {"ok", "ok", "ok", "ok"}},
      {"without matchLabelKeys the same pods are skewed",
       incoming().label("rev", "v2").mutate(with({{}})),
       {rev("a1", "node-a", "v1"), rev("a2", "node-a", "v1"), rev("b1", "node-b", "v2"),
        rev("x1", "node-x", "v2")},
       {"skew", "skew", "ok", "ok"}},
      {"a constraint without labelSelector selects no pod",
       incoming().mutate(with({{.selector = std::nullopt}})),
       podsOn("node-a", 5),
       {"ok", "ok", "ok", "ok"}},
      {"an empty labelSelector counts no existing pod but matches the incoming one",
       incoming().mutate(with({{.selector = api::LabelSelector{}}})),
       podsOn("node-a", 5),
       {"ok", "ok", "ok", "ok"}},
      {"ScheduleAnyway constraints do not filter",
       incoming().mutate(with({{.key = "rack", .action = "ScheduleAnyway"}, {}})),
       podsOn("node-a", 3),
       {"skew", "skew", "ok", "ok"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle(c.nodes, c.existing);
    EXPECT_EQ(cycle.filter(c.pod.obj()), c.want);
  }
}

TEST(PodTopologySpread, FilterMatchesUpstreamMultipleConstraintsTable) {
  struct Case {
    std::string name;
    std::vector<api::PodPtr> existing;
    V want;
    std::vector<api::NodePtr> nodes = kFourNodes;
  };
  const auto pod = MakePod()
                       .name("p")
                       .label("foo", "")
                       .label("bar", "")
                       .mutate(with({{}, {.key = "node", .selector = exists("bar")}}))
                       .obj();
  std::vector<Case> cases = {
      {"two constraints on zone and node, spreads = [3/3, 2/1/0/3]",
       concat({podsOn("node-a", 2, "bar"), podsOn("node-b", 1, "bar"), podsOn("node-y", 3, "bar"),
               podsOn("node-a", 1), podsOn("node-b", 2), podsOn("node-y", 3)}),
       {"skew", "skew", "ok", "skew"}},
      {"two constraints on zone and node, spreads = [3/4, 2/1/0/4]",
       concat({podsOn("node-a", 2, "bar"), podsOn("node-b", 1, "bar"), podsOn("node-y", 4, "bar"),
               podsOn("node-a", 1), podsOn("node-b", 2), podsOn("node-y", 4)}),
       {"skew", "skew", "skew", "skew"}},
      {"two constraints, node-b lacks the zone label and counts for neither",
       concat({podsOn("node-a", 2, "bar"), podsOn("node-b", 1, "bar"), podsOn("node-y", 3, "bar"),
               podsOn("node-a", 2), podsOn("node-b", 1), podsOn("node-y", 3)}),
       {"skew", "label", "skew", "skew"},
       {node("node-a", "zone1"), node("node-b", ""), node("node-x", "zone2"),
        node("node-y", "zone2")}},
      {"two constraints on zone and node, spreads = [1/1, 0/1/0/1]: node-a and node-x fit",
       concat({podsOn("node-b", 1, "bar"), podsOn("node-y", 1, "bar"), podsOn("node-b", 1),
               podsOn("node-y", 1)}),
       {"ok", "skew", "ok", "skew"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle(c.nodes, c.existing);
    EXPECT_EQ(cycle.filter(pod), c.want);
  }
}

TEST(PodTopologySpread, PodWithoutConstraintsOrDefaultsSkipsFilter) {
  Cycle cycle(kFourNodes, podsOn("node-a", 3));
  // System defaults are ScheduleAnyway only, and nothing selects this pod anyway.
  EXPECT_TRUE(cycle.filterSkipped(MakePod().name("p").label("foo", "").obj()));
  EXPECT_TRUE(
      cycle.filterSkipped(MakePod().name("p").mutate(with({{.action = "ScheduleAnyway"}})).obj()));
  EXPECT_FALSE(cycle.filterSkipped(MakePod().name("p").mutate(with({{}})).obj()));
}

TEST(PodTopologySpread, BadConstraintsFailPreFilterNamingTheField) {
  struct Case {
    std::string name;
    Spread spread;
    std::string want;
  };
  api::LabelSelector badOp;
  badOp.matchExpressions.push_back({"foo", "Bad", {}});
  const std::vector<Case> cases = {
      {"maxSkew 0",
       {.maxSkew = 0},
       "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"},
      {"empty topologyKey",
       {.key = ""},
       "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"},
      {"topologyKey that is no label key",
       {.key = "-bad-"},
       "spec.topologySpreadConstraints[0].topologyKey: Invalid value: \"-bad-\": "},
      {"unknown whenUnsatisfiable",
       {.action = "Sometimes"},
       "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Sometimes\": "
       "supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"minDomains 0",
       {.minDomains = 0},
       "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero"},
      {"minDomains with ScheduleAnyway",
       {.action = "ScheduleAnyway", .minDomains = 2},
       "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains "
       "if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"},
      {"unknown nodeAffinityPolicy",
       {.affinityPolicy = "Sometimes"},
       "spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: \"Sometimes\": "
       "supported values: \"Honor\", \"Ignore\""},
      {"unknown nodeTaintsPolicy",
       {.taintsPolicy = "Never"},
       "spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: \"Never\""},
      {"invalid selector operator",
       {.selector = badOp},
       "spec.topologySpreadConstraints[0].labelSelector: \"Bad\" is not a valid"},
  };
  Cycle cycle(kFourNodes, {});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto run = cycle.filter(MakePod().name("p").mutate(with({c.spread})).obj());
    ASSERT_EQ(run.size(), 1u);
    EXPECT_THAT(run[0], HasSubstr("prefilter " + std::to_string(static_cast<int>(Code::Error))));
    EXPECT_THAT(run[0], HasSubstr(c.want));
  }
  auto dup = cycle.filter(MakePod().name("p").mutate(with({{}, {.maxSkew = 2}})).obj());
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_THAT(dup[0], HasSubstr("spec.topologySpreadConstraints[1]: Duplicate value: "
                                "\"{zone, DoNotSchedule}\""));
}

// --- Score ---------------------------------------------------------------------------------------

api::NodePtr hostNode(const std::string& name, const std::string& zone,
                      const std::string& zoneKey = "zone", const api::StringMap& extra = {}) {
  auto n = MakeNode().name(name).label(std::string(kHostnameKey), name);
  if (!zone.empty()) n.label(zoneKey, zone);
  for (const auto& [k, v] : extra) n.label(k, v);
  return n.obj();
}

TEST(PodTopologySpread, ScoreMatchesUpstreamTable) {
  struct Case {
    std::string name;
    test::PodWrapper pod;
    std::vector<api::NodePtr> nodes;
    std::vector<api::PodPtr> existing;
    std::vector<int64_t> want;
    std::vector<std::string> feasible = {};
  };
  const auto incoming = [] { return MakePod().name("p").label("foo", ""); };
  const Spread onNode{.key = std::string(kHostnameKey), .action = "ScheduleAnyway"};
  const Spread onZone{.action = "ScheduleAnyway"};
  const std::vector<api::NodePtr> abcd = {hostNode("a", ""), hostNode("b", ""), hostNode("c", ""),
                                          hostNode("d", "")};
  const std::vector<api::NodePtr> zoned = {
      hostNode("a", "zone1", "zone", {{"pool", "p"}}), hostNode("b", "zone1"),
      hostNode("x", "zone2", "zone", {{"pool", "p"}}), hostNode("y", "zone2")};
  Spread skew2 = onNode;
  skew2.maxSkew = 2;
  Spread ignoreAffinity = onZone;
  ignoreAffinity.affinityPolicy = "Ignore";
  std::vector<Case> cases = {
      {"one constraint on node, no existing pods",
       incoming().mutate(with({onNode})),
       {hostNode("a", ""), hostNode("b", "")},
       {},
       {100, 100}},
      {"one constraint on node, only one node is candidate",
       incoming().mutate(with({onNode})),
       {hostNode("a", ""), hostNode("b", "")},
       concat({podsOn("a", 2), podsOn("b", 1)}),
       {100},
       {"a"}},
      {"one constraint on node, all nodes have the same number of matching pods",
       incoming().mutate(with({onNode})),
       {hostNode("a", ""), hostNode("b", "")},
       concat({podsOn("a", 1), podsOn("b", 1)}),
       {100, 100}},
      // weight ln(4+2): raw round(2w)=4, round(w)=2, 0, round(3w)=5.
      {"one constraint on node, all 4 nodes are candidates",
       incoming().mutate(with({onNode})),
       abcd,
       concat({podsOn("a", 2), podsOn("b", 1), podsOn("d", 3)}),
       {20, 60, 100, 0}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
       incoming().mutate(with({skew2})),
       abcd,
       concat({podsOn("a", 2), podsOn("b", 1), podsOn("d", 3)}),
       {33, 66, 100, 16}},
      {"pods that don't match the selector or live in another namespace don't count",
       incoming().mutate(with({onNode})),
       {hostNode("a", ""), hostNode("b", "")},
       concat({podsOn("a", 3, "bar"),
               {MakePod().name("o").ns("other").node("a").label("foo", "").obj()}}),
       {100, 100}},
      {"one constraint on zone, a node without the zone label is ignored",
       incoming().mutate(with({onZone})),
       {hostNode("a", "zone1"), hostNode("b", "zone1"), hostNode("c", "")},
       concat({podsOn("a", 1), podsOn("c", 2)}),
       {100, 100, 0}},
      // zone weight ln4, node weight ln6: raw 3, 1, 6, 3.
      {"two constraints on zone and node, 2 zones",
       incoming().mutate(with({onZone, onNode})),
       zoned,
       concat({podsOn("a", 1), podsOn("x", 2)}),
       {66, 100, 16, 66}},
      {"nodes outside the feasible set still count for their domain",
       incoming().mutate(with({onZone})),
       zoned,
       podsOn("b", 3),
       {0, 100},
       {"a", "x"}},
      {"nodeAffinityPolicy Honor: nodes the pod cannot go to do not count",
       incoming().nodeSelector({{"pool", "p"}}).mutate(with({onZone})),
       zoned,
       concat({podsOn("b", 3), podsOn("x", 1)}),
       {100, 0},
       {"a", "x"}},
      {"nodeAffinityPolicy Ignore: every node counts",
       incoming().nodeSelector({{"pool", "p"}}).mutate(with({ignoreAffinity})),
       zoned,
       concat({podsOn("b", 3), podsOn("x", 1)}),
       {25, 100},
       {"a", "x"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle(c.nodes, c.existing);
    EXPECT_EQ(cycle.score(c.pod.obj(), c.feasible), c.want);
  }
}

TEST(PodTopologySpread, DoNotScheduleConstraintsDoNotScore) {
  Cycle cycle(kFourNodes, {});
  EXPECT_TRUE(cycle.score(MakePod().name("p").mutate(with({{}})).obj()).empty());
}

// --- System and List defaults --------------------------------------------------------------------

api::ObjectMeta meta(std::string name) {
  api::ObjectMeta m;
  m.name = std::move(name);
  m.namespace_ = "default";
  return m;
}

api::OwnerReference controllerRef(std::string apiVersion, std::string kind, std::string name,
                                  bool controller = true) {
  return {std::move(apiVersion), std::move(kind), std::move(name), "uid", controller};
}

std::shared_ptr<api::ReplicaSet> replicaSet(std::string name, api::LabelSelector selector) {
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata = meta(std::move(name));
  rs->selector = std::move(selector);
  return rs;
}

TEST(PodTopologySpread, SystemDefaultsSpreadThePodsOfItsServiceAndController) {
  framework::ClusterObjectStore store;
  auto svc = std::make_shared<api::Service>();
  svc->metadata = meta("web");
  svc->selector = {{"app", "web"}};
  store.upsert(api::ServicePtr(svc));
  auto other = std::make_shared<api::Service>();
  other->metadata = meta("db");
  other->selector = {{"app", "db"}};
  store.upsert(api::ServicePtr(other));
  api::LabelSelector rsSelector;
  rsSelector.matchLabels = {{"tier", "front"}};
  store.upsert(api::ReplicaSetPtr(replicaSet("rs", rsSelector)));
  auto ss = std::make_shared<api::StatefulSet>();
  ss->metadata = meta("ss");
  ss->selector = rsSelector;
  store.upsert(api::StatefulSetPtr(ss));
  auto rc = std::make_shared<api::ReplicationController>();
  rc->metadata = meta("rc");
  rc->selector = {{"tier", "front"}};
  store.upsert(api::ReplicationControllerPtr(rc));

  const std::string zoneKey(kZoneKey);
  const std::vector<api::NodePtr> nodes = {hostNode("a", "zone1", zoneKey),
                                           hostNode("b", "zone1", zoneKey)};
  const auto web = [](std::string name, std::string nodeName) {
    return MakePod().name(std::move(name)).node(std::move(nodeName)).label("app", "web");
  };
  const std::vector<api::PodPtr> existing = {
      web("w1", "a").label("tier", "front").obj(), web("w2", "a").label("tier", "front").obj(),
      web("w3", "b").obj(),  // not the controller's: counts only for the Service alone
      podsOn("b", 3, "app", "db")[0], podsOn("b", 3, "app", "db")[1]};
  const auto pod = [] { return MakePod().name("p").label("app", "web").label("tier", "front"); };
  // Service only: a has 2 matching pods, b 1. Hostname weight ln4, zone weight ln3 (one zone of 3
  // pods): raw round(2*ln4 + 2 + 3*ln3 + 4) = 12, round(ln4 + 2 + 3*ln3 + 4) = 11.
  // With the controller's selector ANDed in, b has none: raw 11 and round(2 + 2*ln3 + 4) = 8.
  struct Case {
    std::string name;
    test::PodWrapper pod;
    std::vector<int64_t> want;  // empty: PreScore skipped the plugin
    const framework::ClusterObjects* objects;
  };
  const std::vector<Case> cases = {
      {"a Service selects the pod", pod(), {91, 100}, &store},
      {"a Service and the ReplicaSet that controls the pod",
       pod().mutate([](api::Pod& p) {
         p.metadata.ownerReferences = {controllerRef("apps/v1", "ReplicaSet", "rs")};
       }),
       {72, 100},
       &store},
      {"a Service and the StatefulSet that controls the pod",
       pod().mutate([](api::Pod& p) {
         p.metadata.ownerReferences = {controllerRef("apps/v1", "StatefulSet", "ss")};
       }),
       {72, 100},
       &store},
      {"a Service and the ReplicationController that controls the pod",
       pod().mutate([](api::Pod& p) {
         p.metadata.ownerReferences = {controllerRef("v1", "ReplicationController", "rc")};
       }),
       {72, 100},
       &store},
      {"an owner that is not the controller adds nothing",
       pod().mutate([](api::Pod& p) {
         p.metadata.ownerReferences = {controllerRef("apps/v1", "ReplicaSet", "rs", false)};
       }),
       {91, 100},
       &store},
      {"a ReplicaSet owner alone",
       MakePod().name("p").label("tier", "front").mutate([](api::Pod& p) {
         p.metadata.ownerReferences = {controllerRef("apps/v1", "ReplicaSet", "rs")};
       }),
       {72, 100},
       &store},
      {"nothing selects the pod: no default constraints",
       MakePod().name("p").label("app", "cache"),
       {},
       &store},
      {"no cluster objects at all: no default constraints", pod(), {}, nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle(nodes, existing, nullptr, c.objects);
    EXPECT_EQ(cycle.score(c.pod.obj()), c.want);
    EXPECT_TRUE(cycle.filterSkipped(c.pod.obj()));  // system defaults never filter
  }
}

TEST(PodTopologySpread, SystemDefaultsStillSpreadOverHostnamesWithoutZones) {
  framework::ClusterObjectStore store;
  auto svc = std::make_shared<api::Service>();
  svc->metadata = meta("web");
  svc->selector = {{"app", "web"}};
  store.upsert(api::ServicePtr(svc));
  Cycle cycle({hostNode("a", "zone1", std::string(kZoneKey)), hostNode("c", "")},
              podsOn("a", 1, "app", "web"), nullptr, &store);
  // Both constraints weigh ln4 (two hostnames; zones "zone1" and ""): a scores round(ln4 + 2 +
  // ln4 + 4) = 9, c only its hostname term, 2.
  EXPECT_EQ(cycle.score(MakePod().name("p").label("app", "web").obj()),
            (std::vector<int64_t>{22, 100}));
}

TEST(PodTopologySpread, ListDefaultsApplyTheirOwnConstraints) {
  framework::ClusterObjectStore store;
  auto svc = std::make_shared<api::Service>();
  svc->metadata = meta("web");
  svc->selector = {{"app", "web"}};
  store.upsert(api::ServicePtr(svc));
  const config::Json args = config::Json::parse(R"({"defaultingType": "List",
      "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                              "whenUnsatisfiable": "DoNotSchedule"}]})");
  Cycle cycle(kFourNodes, podsOn("node-a", 2, "app", "web"), args, &store);
  EXPECT_EQ(cycle.filter(MakePod().name("p").label("app", "web").obj()),
            (V{"skew", "skew", "ok", "ok"}));
  // Without a Service selecting it the pod gets no constraints.
  EXPECT_TRUE(cycle.filterSkipped(MakePod().name("p").label("app", "db").obj()));
  // The pod's own constraints replace the defaults.
  EXPECT_EQ(cycle.filter(MakePod()
                             .name("p")
                             .label("app", "web")
                             .mutate(with({{.maxSkew = 3, .selector = exists("app")}}))
                             .obj()),
            (V{"ok", "ok", "ok", "ok"}));

  const config::Json empty = config::Json::parse(R"({"defaultingType": "List"})");
  Cycle none(kFourNodes, podsOn("node-a", 2, "app", "web"), empty, &store);
  EXPECT_TRUE(none.filterSkipped(MakePod().name("p").label("app", "web").obj()));
  EXPECT_TRUE(none.score(MakePod().name("p").label("app", "web").obj()).empty());
}

// --- Args ----------------------------------------------------------------------------------------

TEST(PodTopologySpreadArgs, DecodeAndValidateAsUpstream) {
  struct Case {
    std::string name;
    std::string args;
    std::string wantError;  // empty: valid
  };
  const std::string p = "args";
  const std::vector<Case> cases = {
      {"empty args default to System", "{}", ""},
      {"System", R"({"defaultingType": "System"})", ""},
      {"List with constraints",
       R"({"defaultingType": "List", "defaultConstraints": [
           {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
           {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]})",
       ""},
      {"unknown defaultingType", R"({"defaultingType": "Sometimes"})",
       "args.defaultingType: unsupported value \"Sometimes\", supported values: \"System\", "
       "\"List\""},
      {"System with constraints",
       R"({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
           "whenUnsatisfiable": "DoNotSchedule"}]})",
       "args.defaultingType: invalid value \"System\": when .defaultConstraints are not empty"},
      {"maxSkew 0",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone",
           "whenUnsatisfiable": "DoNotSchedule"}]})",
       "args.defaultConstraints[0].maxSkew: invalid value 0: not in valid range (0, inf)"},
      {"empty topologyKey",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1,
           "whenUnsatisfiable": "DoNotSchedule"}]})",
       "args.defaultConstraints[0].topologyKey: required: can not be empty"},
      {"invalid topologyKey",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "a/b/c",
           "whenUnsatisfiable": "DoNotSchedule"}]})",
       "args.defaultConstraints[0].topologyKey: invalid value \"a/b/c\": "},
      {"missing whenUnsatisfiable",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1,
           "topologyKey": "zone"}]})",
       "args.defaultConstraints[0].whenUnsatisfiable: required: can not be empty"},
      {"unknown whenUnsatisfiable",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
           "whenUnsatisfiable": "Never"}]})",
       "args.defaultConstraints[0].whenUnsatisfiable: unsupported value \"Never\", supported "
       "values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"a selector",
       R"({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
           "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]})",
       "args.defaultConstraints[0].labelSelector: forbidden: constraint must not define a "
       "selector, as they deduced for each pod"},
      {"duplicate key and action",
       R"({"defaultingType": "List", "defaultConstraints": [
           {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
           {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})",
       "args.defaultConstraints[1]: duplicate value \"{zone, DoNotSchedule}\""},
      {"an unknown field", R"({"defaultConstraint": []})", "args.defaultConstraint"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::Decoder d;
    PodTopologySpreadArgs args;
    decodePodTopologySpreadArgs(d, config::Json::parse(c.args), p, args);
    if (c.wantError.empty()) {
      EXPECT_FALSE(d.failed()) << d.error();
    } else {
      ASSERT_TRUE(d.failed());
      EXPECT_THAT(d.error(), HasSubstr(c.wantError));
    }
  }
  config::Decoder d;
  PodTopologySpreadArgs args;
  decodePodTopologySpreadArgs(d, config::Json::parse("{}"), p, args);
  EXPECT_EQ(args.defaultingType, "System");
  EXPECT_TRUE(args.defaultConstraints.empty());
}

// --- Queueing hints ------------------------------------------------------------------------------

TEST(PodTopologySpread, QueueingHintsAsUpstream) {
  Cycle cycle(kFourNodes, {});
  const auto& regs = cycle.fw().pluginEvents().at(std::string(kPlugin));
  const auto hint = [&regs](const framework::ClusterEvent& e, const api::PodPtr& pod,
                            const framework::EventObjects& objects) {
    for (const auto& r : regs) {
      if (r.event.matches(e)) return r.hint(e, *pod, objects) == framework::QueueingHint::Queue;
    }
    return false;
  };
  namespace events = framework::events;
  const auto pending = MakePod().name("p").uid("p").label("foo", "").mutate(with({{}})).obj();
  const auto matching = MakePod().name("m").uid("m").node("node-a").label("foo", "").obj();
  const auto unrelated = MakePod().name("u").uid("u").node("node-a").label("bar", "").obj();
  const auto otherNs =
      MakePod().name("o").uid("o").ns("other").node("node-a").label("foo", "").obj();
  const auto relabelled = MakePod().name("m").uid("m").node("node-a").label("bar", "").obj();
  const auto stillMatching =
      MakePod().name("m").uid("m").node("node-a").label("foo", "").label("x", "y").obj();
  const api::NodePtr zoned = node("node-n", "zone3");
  const api::NodePtr bare = MakeNode().name("node-n").obj();
  const api::NodePtr moved = node("node-n", "zone4");
  const api::NodePtr taintedZoned = MakeNode()
                                        .name("node-n")
                                        .label("node", "node-n")
                                        .label("zone", "zone3")
                                        .taint("k", "v", "NoSchedule")
                                        .obj();
  const api::NodePtr relabelledNode = MakeNode()
                                          .name("node-n")
                                          .label("node", "node-n")
                                          .label("zone", "zone3")
                                          .label("x", "y")
                                          .obj();

  struct Case {
    std::string name;
    framework::ClusterEvent event;
    framework::EventObjects objects;
    bool want;
  };
  const std::vector<Case> cases = {
      {"a matching pod is added", events::kAssignedPodAdd, {.newPod = matching.get()}, true},
      {"an unrelated pod is added", events::kAssignedPodAdd, {.newPod = unrelated.get()}, false},
      {"a pod of another namespace is added",
       events::kAssignedPodAdd,
       {.newPod = otherNs.get()},
       false},
      {"a matching pod is deleted", events::kAssignedPodDelete, {.oldPod = matching.get()}, true},
      {"an unrelated pod is deleted",
       events::kAssignedPodDelete,
       {.oldPod = unrelated.get()},
       false},
      {"a pod stops matching",
       events::kAssignedPodUpdate,
       {.oldPod = matching.get(), .newPod = relabelled.get()},
       true},
      {"a label change that keeps the match",
       events::kAssignedPodUpdate,
       {.oldPod = matching.get(), .newPod = stillMatching.get()},
       false},
      {"a node with the keys is added", events::kNodeAdd, {.newNode = zoned.get()}, true},
      {"a node without the keys is added", events::kNodeAdd, {.newNode = bare.get()}, false},
      {"a node gains the keys",
       events::kNodeLabelChange,
       {.oldNode = bare.get(), .newNode = zoned.get()},
       true},
      {"a node changes its zone",
       events::kNodeLabelChange,
       {.oldNode = zoned.get(), .newNode = moved.get()},
       true},
      {"a node changes an unrelated label",
       events::kNodeLabelChange,
       {.oldNode = zoned.get(), .newNode = relabelledNode.get()},
       false},
      {"a node with the keys changes its taints",
       events::kNodeTaintChange,
       {.oldNode = zoned.get(), .newNode = taintedZoned.get()},
       true},
      {"a node with the keys is deleted",
       framework::ClusterEvent{framework::EventResource::Node, framework::ActionType::Delete},
       {.oldNode = zoned.get()},
       true},
      {"a node without the keys is deleted",
       framework::ClusterEvent{framework::EventResource::Node, framework::ActionType::Delete},
       {.oldNode = bare.get()},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(hint(c.event, pending, c.objects), c.want);
  }
}

TEST(PodTopologySpread, IsNotNodeLocal) {
  Cycle cycle(kFourNodes, {});
  const auto& notLocal = cycle.fw().notNodeLocalPlugins();
  EXPECT_NE(std::find(notLocal.begin(), notLocal.end(), kPlugin), notLocal.end());
}

// --- The memo carried across cycles --------------------------------------------------------------

// One plugin instance scheduling cycle after cycle over a snapshot that changes in between (pods
// bound and deleted, a node relabelled, added and removed) must decide as a plugin that has never
// seen the cluster: a memo that missed a change would fail this.
TEST(PodTopologySpread, MemoDecidesAsAFreshPluginAcrossChangingCycles) {
  framework::ClusterObjectStore store;
  api::LabelSelector rsSelector;
  rsSelector.matchLabels = {{"app", "web"}};
  store.upsert(api::ReplicaSetPtr(replicaSet("rs", rsSelector)));
  static const framework::runtime::Registry registry = makeInTreeRegistry();
  const auto makeFw = [&store] {
    framework::Handle handle;
    handle.objects = &store;
    auto fw = framework::runtime::Framework::create(
        registry, test::profileWith({test::plugin(kPlugin, 2)}), handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    return std::move(*fw);
  };
  const auto kept = makeFw();

  const std::string zoneKey(kZoneKey);
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 8; ++i) {
    auto n = MakeNode()
                 .name("n" + std::to_string(i))
                 .label(std::string(kHostnameKey), "n" + std::to_string(i))
                 .label("zone", "z" + std::to_string(i % 3))
                 .label("disk", i % 2 == 0 ? "ssd" : "hdd");
    if (i != 5) n.label(zoneKey, "z" + std::to_string(i % 3));  // n5 has no standard zone
    if (i == 6) n.taint("dedicated", "x", "NoSchedule");
    nodes.push_back(n.obj());
  }
  framework::Snapshot snapshot = test::makeSnapshot(nodes, {});

  // The pods asked about every cycle: the system defaults (through the ReplicaSet), its own
  // ScheduleAnyway and DoNotSchedule constraints, node inclusion policies, another namespace.
  const auto owned = [](test::PodWrapper w) {
    return w.mutate([](api::Pod& p) {
      p.metadata.ownerReferences = {controllerRef("apps/v1", "ReplicaSet", "rs")};
    });
  };
  std::vector<api::PodPtr> asked = {
      owned(MakePod().name("sys").label("app", "web")).obj(),
      MakePod()
          .name("soft")
          .label("foo", "")
          .mutate(with({{.key = "zone", .action = "ScheduleAnyway"},
                        {.maxSkew = 2, .key = "node", .action = "ScheduleAnyway"}}))
          .obj(),
      MakePod()
          .name("hard")
          .label("foo", "")
          .mutate(with({{.key = "zone"}, {.key = std::string(kHostnameKey)}}))
          .obj(),
      MakePod()
          .name("policies")
          .label("foo", "")
          .mutate([](api::Pod& p) {
            p.spec.nodeSelector = {{"disk", "ssd"}};
          })
          .mutate(with({{.maxSkew = 1, .key = "zone", .taintsPolicy = "Honor"},
                        {.maxSkew = 1,
                         .key = "zone",
                         .action = "ScheduleAnyway",
                         .affinityPolicy = "Ignore",
                         .taintsPolicy = "Honor"}}))
          .obj(),
      MakePod()
          .name("minDomains")
          .label("foo", "")
          .mutate(with({{.maxSkew = 2, .key = "zone", .minDomains = 4}}))
          .obj(),
  };

  const auto decide = [&snapshot](const framework::runtime::Framework& fw, const api::PodPtr& pod,
                                  size_t skip) {
    std::vector<std::string> out;
    framework::CycleState state;
    state.setSnapshot(&snapshot);
    framework::PodInfo info(pod);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    framework::Status pre = fw.runPreFilterPlugins(state, info, result, rejectedBy);
    out.push_back("prefilter " + std::to_string(static_cast<int>(pre.code())));
    std::vector<const framework::NodeInfo*> feasible;
    for (size_t i = 0; i < snapshot.nodeInfos().size(); ++i) {
      const auto& n = snapshot.nodeInfos()[i];
      if (pre.isSuccess()) {
        framework::Status s = fw.runFilterPlugins(state, info, *n);
        out.push_back(n->name() + " " + std::to_string(static_cast<int>(s.code())));
      }
      if (i % 4 != skip) feasible.push_back(n.get());  // not every node is feasible
    }
    framework::Status s = fw.runPreScorePlugins(state, info, feasible);
    out.push_back("prescore " + std::to_string(static_cast<int>(s.code())));
    util::Parallelizer parallelizer(1);
    framework::runtime::ScoreTable table;
    s = fw.runScorePlugins(state, info, feasible, parallelizer, table);
    for (size_t i = 0; i < table.plugins.size(); ++i) {
      for (int64_t v : table.scores[i]) out.push_back(std::to_string(v));
    }
    return out;
  };

  int bound = 0;
  const auto bind = [&](const std::string& nodeName, const std::string& ns, bool web) {
    auto pod = MakePod().name("b" + std::to_string(bound++)).node(nodeName);
    if (web) pod.label("app", "web");
    pod.label("foo", "");
    pod.mutate([&ns](api::Pod& p) { p.metadata.namespace_ = ns; });
    auto obj = pod.obj();
    EXPECT_TRUE(snapshot.addPod(nodeName, framework::makePodInfo(obj)));
    return obj;
  };
  std::vector<std::function<void()>> changes = {
      [] {},
      [&] { bind("n0", "default", true); },
      [&] { bind("n1", "default", false); },
      [&] { bind("n0", "other", true); },
      [&] {
        for (int i = 0; i < 5; ++i) bind("n" + std::to_string(i % 4 + 2), "default", true);
      },
      [&] {
        // Relabel n2 into another zone.
        auto n = std::make_shared<api::Node>(*nodes[2]);
        n->metadata.labels["zone"] = "z9";
        n->metadata.labels[std::string(kZoneKey)] = "z9";
        auto info = std::make_shared<framework::NodeInfo>(n);
        for (const auto& p : snapshot.get("n2")->pods()) info->addPod(p);
        snapshot.addNodeInfo(info);
      },
      [&] {
        const api::PodPtr gone = bind("n3", "default", true);
        EXPECT_TRUE(snapshot.removePod("n3", *gone));
      },
      [&] {
        auto pods = snapshot.get("n0")->pods();
        for (const auto& p : pods) EXPECT_TRUE(snapshot.removePod("n0", **p));
      },
      [&] { EXPECT_TRUE(snapshot.removeNodeInfo("n4")); },
      [&] {
        snapshot.addNodeInfo(
            std::make_shared<framework::NodeInfo>(MakeNode()
                                                      .name("n8")
                                                      .label(std::string(kHostnameKey), "n8")
                                                      .label("zone", "z3")
                                                      .label(zoneKey, "z3")
                                                      .obj()));
        bind("n8", "default", true);
      },
      [&] { bind("n8", "default", true); },
  };
  for (size_t step = 0; step < changes.size(); ++step) {
    changes[step]();
    for (const api::PodPtr& pod : asked) {
      SCOPED_TRACE("step " + std::to_string(step) + ", pod " + pod->metadata.name);
      const auto fresh = makeFw();
      EXPECT_EQ(decide(*kept, pod, step % 4), decide(*fresh, pod, step % 4));
    }
  }
}

}  // namespace
}  // namespace berth::plugins::podtopologyspread
