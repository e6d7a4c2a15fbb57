// InterPodAffinity: upstream's filtering_test.go (TestRequiredAffinitySingleNode,
// TestRequiredAffinityMultipleNodes), scoring_test.go (TestPreferredAffinity,
// TestPreferredAffinityWithHardPodAffinitySymmetricWeight) and plugin_test.go (queueing hints),
// rows rewritten from their intent, through the runtime over a real Snapshot and Namespace objects.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/plugins/interpodaffinity/inter_pod_affinity.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/parallel.h"
#include "tests/support/builders.h"

namespace berth::plugins::interpodaffinity {
namespace {

using framework::Code;
using framework::QueueingHint;
using test::MakeNode;
using test::MakePod;

constexpr const char* kAffinity = "node(s) didn't match pod affinity rules";
constexpr const char* kAnti = "node(s) didn't match pod anti-affinity rules";
constexpr const char* kExisting = "node(s) didn't satisfy existing pods anti-affinity rules";

// --- Building terms ------------------------------------------------------------------------------

api::LabelSelector sel(std::string key, std::string op, std::vector<std::string> values = {}) {
  api::LabelSelector s;
  s.matchExpressions.push_back({std::move(key), std::move(op), std::move(values)});
  return s;
}

api::LabelSelector matchLabels(api::StringMap labels) {
  api::LabelSelector s;
  s.matchLabels = std::move(labels);
  return s;
}

api::PodAffinityTerm term(std::optional<api::LabelSelector> selector, std::string topologyKey,
                          std::vector<std::string> namespaces = {},
                          std::optional<api::LabelSelector> namespaceSelector = std::nullopt) {
  api::PodAffinityTerm t;
  t.labelSelector = std::move(selector);
  t.topologyKey = std::move(topologyKey);
  t.namespaces = std::move(namespaces);
  t.namespaceSelector = std::move(namespaceSelector);
  return t;
}

enum class Kind { Affinity, AntiAffinity };

api::PodAffinity& side(api::Pod& p, Kind kind) {
  auto& a = p.spec.affinity ? *p.spec.affinity : p.spec.affinity.emplace();
  auto& s = kind == Kind::Affinity ? a.podAffinity : a.podAntiAffinity;
  return s ? *s : s.emplace();
}

test::PodWrapper required(test::PodWrapper w, Kind kind, api::PodAffinityTerm t) {
  return w.mutate([&](api::Pod& p) {
    side(p, kind).requiredDuringSchedulingIgnoredDuringExecution.push_back(t);
  });
}

test::PodWrapper preferred(test::PodWrapper w, Kind kind, int32_t weight, api::PodAffinityTerm t) {
  return w.mutate([&](api::Pod& p) {
    side(p, kind).preferredDuringSchedulingIgnoredDuringExecution.push_back({weight, t});
  });
}

// --- Running the plugin --------------------------------------------------------------------------

// A profile with InterPodAffinity over nodes, bound pods and namespaces.
class Env {
 public:
  Env(const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods,
      const std::vector<std::pair<std::string, api::StringMap>>& namespaces = {},
      config::Json args = nullptr)
      : snapshot_(test::makeSnapshot(nodes, pods)) {
    for (const auto& [name, labels] : namespaces) {
      auto ns = std::make_shared<api::Namespace>();
      ns->metadata.name = name;
      ns->metadata.labels = labels;
      objects_.upsert(api::NamespacePtr(std::move(ns)));
    }
    auto profile = test::profileWith({test::plugin("InterPodAffinity", 2)});
    if (!args.is_null()) {
      profile.pluginConfig.push_back(
          {"InterPodAffinity", std::move(args), "profiles[0].pluginConfig[0].args"});
    }
    static const framework::runtime::Registry registry = makeInTreeRegistry();
    framework::Handle handle;
    handle.objects = &objects_;
    auto fw = framework::runtime::Framework::create(registry, profile, handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    fw_ = std::move(*fw);
  }

  struct FilterRun {
    framework::Status preFilter;
    bool skipped = false;
    std::vector<framework::Status> filter;  // per node, empty when PreFilter rejected the pod
  };
  FilterRun filter(const api::PodPtr& pod) const {
    FilterRun run;
    framework::PodInfo info(pod);
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    run.preFilter = fw_->runPreFilterPlugins(state, info, result, rejectedBy);
    run.skipped = state.filterSkipped("InterPodAffinity");
    if (!run.preFilter.isSuccess()) return run;
    for (const auto& n : snapshot_.nodeInfos()) {
      run.filter.push_back(fw_->runFilterPlugins(state, info, *n));
    }
    return run;
  }

  // Normalized scores per node; nullopt when PreScore skipped the plugin.
  std::optional<std::vector<int64_t>> score(const api::PodPtr& pod) const {
    framework::PodInfo info(pod);
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    std::vector<const framework::NodeInfo*> nodes;
    for (const auto& n : snapshot_.nodeInfos()) nodes.push_back(n.get());
    framework::Status pre = fw_->runPreScorePlugins(state, info, nodes);
    EXPECT_TRUE(pre.isSuccess()) << pre.message();
    if (state.scoreSkipped("InterPodAffinity")) return std::nullopt;
    util::Parallelizer parallelizer(1);
    framework::runtime::ScoreTable table;
    framework::Status s = fw_->runScorePlugins(state, info, nodes, parallelizer, table);
    EXPECT_TRUE(s.isSuccess()) << s.message();
    for (size_t i = 0; i < table.plugins.size(); ++i) {
      if (table.plugins[i] == "InterPodAffinity") return table.scores[i];
    }
    return std::vector<int64_t>{};
  }

 private:
  framework::ClusterObjectStore objects_;
  framework::runtime::FrameworkPtr fw_;
  framework::Snapshot snapshot_;
};

// What Filter says on one node: nullptr fits, else the reason.
struct Want {
  const char* reason = nullptr;
};

void expectFilter(const Env::FilterRun& run, const std::vector<Want>& want) {
  ASSERT_TRUE(run.preFilter.isSuccess()) << run.preFilter.message();
  if (run.skipped) {
    for (const auto& w : want) EXPECT_EQ(w.reason, nullptr);
    return;
  }
  ASSERT_EQ(run.filter.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    if (want[i].reason == nullptr) {
      EXPECT_TRUE(run.filter[i].isSuccess()) << run.filter[i].message();
      continue;
    }
    EXPECT_EQ(run.filter[i].message(), want[i].reason);
    EXPECT_EQ(run.filter[i].plugin(), "InterPodAffinity");
    // Only anti-affinity may be resolved by preemption.
    EXPECT_EQ(run.filter[i].code(), std::string_view(want[i].reason) == kAffinity
                                        ? Code::UnschedulableAndUnresolvable
                                        : Code::Unschedulable);
  }
}

const api::StringMap kRegion1Zone11 = {
    {"region", "r1"}, {"zone", "z11"}, {"kubernetes.io/hostname", "node1"}};

test::PodWrapper incoming() { return MakePod().name("incoming").ns("default"); }
test::PodWrapper existing(std::string name, std::string node) {
  return MakePod().name(std::move(name)).ns("default").node(std::move(node));
}

// --- Filter: one node ----------------------------------------------------------------------------

TEST(InterPodAffinity, FilterOnOneNodeMatchesUpstreamTable) {
  const auto S = [](std::string v) { return sel("service", "In", {std::move(v)}); };
  const auto securityscan = existing("p1", "node1").label("service", "securityscan");
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::vector<test::PodWrapper> pods;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"a pod without pod affinity fits a node without pods", incoming(), {}, nullptr},
      {"required affinity with In matching the existing pod fits",
       required(incoming(), Kind::Affinity,
                term(sel("service", "In", {"securityscan", "value2"}), "region")),
       {securityscan},
       nullptr},
      {"required affinity with NotIn matching the existing pod fits",
       required(incoming(), Kind::Affinity,
                term(sel("service", "NotIn", {"securityscan3", "value3"}), "region")),
       {securityscan},
       nullptr},
      {"required affinity naming another namespace does not fit",
       required(incoming(), Kind::Affinity, term(S("securityscan"), "region", {"DiffNameSpace"})),
       {securityscan},
       kAffinity},
      {"required affinity whose selector does not match the existing pod does not fit",
       required(incoming(), Kind::Affinity,
                term(sel("service", "In", {"antivirusscan", "value2"}), "region")),
       {securityscan},
       kAffinity},
      {"required affinity terms with different operators, all matched, fit",
       required(required(incoming(), Kind::Affinity, term(sel("service", "Exists"), "region")),
                Kind::Affinity, term(sel("wrongkey", "DoesNotExist"), "region")),
       {securityscan},
       nullptr},
      {"the requirements of one selector are ANDed: one unmatched requirement does not fit",
       required(incoming(), Kind::Affinity,
                term(
                    [] {
                      auto s = sel("service", "Exists");
                      s.matchExpressions.push_back({"wrongkey", "In", {"x"}});
                      return s;
                    }(),
                    "region")),
       {securityscan},
       kAffinity},
      {"affinity and anti-affinity both satisfied fit",
       required(required(incoming(), Kind::Affinity, term(S("securityscan"), "region")),
                Kind::AntiAffinity, term(S("antivirusscan"), "node")),
       {securityscan},
       nullptr},
      {"affinity satisfied but anti-affinity matching the existing pod does not fit",
       required(required(incoming(), Kind::Affinity, term(S("securityscan"), "region")),
                Kind::AntiAffinity, term(S("securityscan"), "zone")),
       {securityscan},
       kAnti},
      {"the existing pod's anti-affinity against the incoming pod does not fit (symmetry)",
       incoming().label("service", "securityscan"),
       {required(existing("p1", "node1"), Kind::AntiAffinity, term(S("securityscan"), "zone"))},
       kExisting},
      {"the existing pod's anti-affinity that does not match the incoming pod fits",
       incoming().label("service", "securityscan"),
       {required(existing("p1", "node1"), Kind::AntiAffinity, term(S("antivirusscan"), "zone"))},
       nullptr},
      {"the existing pod's anti-affinity on a key the node lacks fits",
       incoming().label("service", "securityscan"),
       {required(existing("p1", "node1"), Kind::AntiAffinity, term(S("securityscan"), "rack"))},
       nullptr},
      {"the incoming pod's own labels do not satisfy its affinity when another pod is counted",
       required(incoming().label("service", "securityscan"), Kind::Affinity,
                term(sel("service", "NotIn", {"securityscan"}), "region")),
       {securityscan},
       kAffinity},
      {"an existing pod's anti-affinity is ignored when its namespace is not the incoming pod's",
       incoming().label("service", "securityscan"),
       {required(existing("p1", "node1").ns("other"), Kind::AntiAffinity,
                 term(S("securityscan"), "zone"))},
       nullptr},
      {"a terminating existing pod still counts for anti-affinity, as upstream",
       required(incoming(), Kind::AntiAffinity, term(S("securityscan"), "zone")),
       {existing("p1", "node1").label("service", "securityscan").mutate([](api::Pod& p) {
         p.metadata.deletionTimestamp = api::Timestamp{};
       })},
       kAnti},
      {"a terminating existing pod still satisfies affinity, as upstream",
       required(incoming(), Kind::Affinity, term(S("securityscan"), "zone")),
       {existing("p1", "node1").label("service", "securityscan").mutate([](api::Pod& p) {
         p.metadata.deletionTimestamp = api::Timestamp{};
       })},
       nullptr},
      {"an absent labelSelector selects no pod: the term is never satisfied",
       required(incoming().label("service", "securityscan"), Kind::Affinity,
                term(std::nullopt, "region")),
       {securityscan},
       kAffinity},
      {"an empty labelSelector selects every pod of the namespace",
       required(incoming(), Kind::AntiAffinity, term(api::LabelSelector{}, "region")),
       {securityscan},
       kAnti},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::PodPtr> pods;
    for (const auto& p : c.pods) pods.push_back(p.obj());
    auto node = MakeNode().name("node1");
    for (const auto& [k, v] : kRegion1Zone11) node.label(k, v);
    Env env({node.obj()}, pods);
    expectFilter(env.filter(c.pod.obj()), {Want{c.want}});
  }
}

TEST(InterPodAffinity, PreFilterSkipsWhenNothingConstrainsThePod) {
  auto node = MakeNode().name("node1").label("zone", "z1");
  Env env({node.obj()}, {existing("p1", "node1").label("app", "web").obj()});
  auto run = env.filter(incoming().label("app", "web").obj());
  EXPECT_TRUE(run.preFilter.isSuccess());
  EXPECT_TRUE(run.skipped);
  // An existing pod's anti-affinity matching the incoming pod prevents the skip.
  Env blocked({node.obj()}, {required(existing("p1", "node1"), Kind::AntiAffinity,
                                      term(matchLabels({{"app", "web"}}), "zone"))
                                 .obj()});
  auto run2 = blocked.filter(incoming().label("app", "web").obj());
  EXPECT_FALSE(run2.skipped);
  expectFilter(run2, {Want{kExisting}});
}

// --- Filter: bad input ---------------------------------------------------------------------------

TEST(InterPodAffinity, PreFilterRejectsTermsThatDoNotParseNamingTheField) {
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"an invalid operator in the affinity's labelSelector",
       required(incoming(), Kind::Affinity, term(sel("service", "Bogus", {"x"}), "region")),
       "parsing pod: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
       ".labelSelector: \"Bogus\" is not a valid pod selector operator"},
      {"an invalid value in the anti-affinity's labelSelector",
       required(incoming(), Kind::AntiAffinity,
                term(sel("service", "In", {"invalid value: ___@#$%^"}), "region")),
       "parsing pod: "
       "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
       ".labelSelector: "},
      {"a namespaceSelector that does not parse",
       preferred(incoming(), Kind::Affinity, 5,
                 term(matchLabels({{"a", "b"}}), "region", {}, sel("team", "Gt", {"1"}))),
       "parsing pod: "
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
       ".podAffinityTerm.namespaceSelector: "},
      {"an empty topologyKey",
       required(incoming(), Kind::AntiAffinity, term(matchLabels({{"a", "b"}}), "")),
       "parsing pod: "
       "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
       ".topologyKey: must not be empty"},
  };
  auto node = MakeNode().name("node1").label("region", "r1");
  Env env({node.obj()}, {});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto run = env.filter(c.pod.obj());
    EXPECT_EQ(run.preFilter.code(), Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(run.preFilter.plugin(), "InterPodAffinity");
    EXPECT_EQ(run.preFilter.message().rfind(c.want, 0), 0u) << run.preFilter.message();
  }
}

TEST(InterPodAffinity, ExistingPodWithBadTermsIsPlacedAndItsBadListIgnored) {
  auto node = MakeNode().name("node1").label("zone", "z1");
  auto bad = required(existing("p1", "node1").label("app", "web"), Kind::AntiAffinity,
                      term(sel("app", "Bogus"), "zone"));
  Env env({node.obj()}, {bad.obj()});
  // Its anti-affinity is dropped, its labels still count for the incoming pod's affinity.
  auto run = env.filter(required(incoming().label("app", "web"), Kind::Affinity,
                                 term(matchLabels({{"app", "web"}}), "zone"))
                            .obj());
  expectFilter(run, {Want{}});
}

// --- Filter: several nodes -----------------------------------------------------------------------

api::NodePtr node(std::string name, api::StringMap labels) {
  auto n = MakeNode().name(std::move(name));
  for (const auto& [k, v] : labels) n.label(k, v);
  return n.obj();
}

TEST(InterPodAffinity, FilterOnSeveralNodesMatchesUpstreamTable) {
  const auto fooBar = matchLabels({{"foo", "bar"}});
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::vector<test::PodWrapper> pods;
    std::vector<api::NodePtr> nodes;
    std::vector<Want> want;
  };
  const std::vector<Case> cases = {
      {"every node of the domain holding a matching pod fits affinity",
       required(incoming(), Kind::Affinity, term(fooBar, "region")),
       {existing("p1", "nodeA").label("foo", "bar")},
       {node("nodeA", {{"region", "r1"}, {"hostname", "h1"}}),
        node("nodeB", {{"region", "r1"}, {"hostname", "h2"}}),
        node("nodeC", {{"region", "r2"}, {"hostname", "h3"}})},
       {{}, {}, {kAffinity}}},
      {"the first pod of a self-affine collection may go anywhere with the topology key",
       required(incoming().label("foo", "bar"), Kind::Affinity, term(fooBar, "zone")),
       {},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {{"zone", "z2"}}),
        node("nodeC", {{"region", "r1"}})},
       {{}, {}, {kAffinity}}},
      {"the first pod still needs every term's topology key on the node",
       required(required(incoming().label("foo", "bar"), Kind::Affinity, term(fooBar, "zone")),
                Kind::Affinity, term(fooBar, "region")),
       {},
       {node("nodeA", {{"zone", "z1"}, {"region", "r1"}}), node("nodeB", {{"zone", "z2"}})},
       {{}, {kAffinity}}},
      {"no first-pod exception when the pod does not match its own terms",
       required(incoming(), Kind::Affinity, term(fooBar, "zone")),
       {},
       {node("nodeA", {{"zone", "z1"}})},
       {{kAffinity}}},
      {"no first-pod exception when a matching pod sits on a node in another domain",
       required(incoming().label("foo", "bar"), Kind::Affinity, term(fooBar, "zone")),
       {existing("p1", "nodeB").label("foo", "bar")},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {{"zone", "z2"}})},
       {{kAffinity}, {}}},
      {"a matching pod on a node without the key leaves the first-pod exception in force",
       required(incoming().label("foo", "bar"), Kind::Affinity, term(fooBar, "zone")),
       {existing("p1", "nodeB").label("foo", "bar")},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {})},
       {{}, {kAffinity}}},
      {"anti-affinity blocks the whole domain of the matching pod, not the other domains",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "region")),
       {existing("p1", "nodeA").label("foo", "bar")},
       {node("nodeA", {{"region", "r1"}}), node("nodeB", {{"region", "r1"}}),
        node("nodeC", {{"region", "r2"}})},
       {{kAnti}, {kAnti}, {}}},
      {"anti-affinity: any term matching a pod blocks",
       required(required(incoming(), Kind::AntiAffinity, term(fooBar, "zone")), Kind::AntiAffinity,
                term(matchLabels({{"x", "y"}}), "region")),
       {existing("p1", "nodeA").label("x", "y")},
       {node("nodeA", {{"region", "r1"}, {"zone", "z1"}}),
        node("nodeB", {{"region", "r1"}, {"zone", "z2"}}),
        node("nodeC", {{"region", "r2"}, {"zone", "z1"}})},
       {{kAnti}, {kAnti}, {}}},
      {"a node without the anti-affinity topology key passes",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "zone")),
       {existing("p1", "nodeA").label("foo", "bar")},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {{"region", "r1"}})},
       {{kAnti}, {}}},
      {"existing pods' anti-affinity: only the domains of the pods whose terms match are blocked",
       incoming().label("foo", "bar"),
       {required(existing("p1", "nodeA"), Kind::AntiAffinity, term(fooBar, "zone")),
        required(existing("p2", "nodeB"), Kind::AntiAffinity,
                 term(matchLabels({{"foo", "other"}}), "zone"))},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {{"zone", "z2"}}),
        node("nodeC", {{"zone", "z1"}})},
       {{kExisting}, {}, {kExisting}}},
      {"existing pods' anti-affinity is checked on its own topology key",
       incoming().label("foo", "bar"),
       {required(existing("p1", "nodeA"), Kind::AntiAffinity, term(fooBar, "region"))},
       {node("nodeA", {{"region", "r1"}, {"zone", "z1"}}),
        node("nodeB", {{"region", "r1"}, {"zone", "z2"}}),
        node("nodeC", {{"region", "r2"}, {"zone", "z1"}})},
       {{kExisting}, {kExisting}, {}}},
      {"affinity is checked before anti-affinity, which is checked before symmetry",
       required(required(incoming().label("foo", "bar"), Kind::Affinity,
                         term(matchLabels({{"a", "b"}}), "zone")),
                Kind::AntiAffinity, term(matchLabels({{"c", "d"}}), "zone")),
       {existing("p1", "nodeA").label("a", "b"),
        existing("p2", "nodeB").label("a", "b").label("c", "d"),
        required(existing("p3", "nodeC").label("a", "b"), Kind::AntiAffinity,
                 term(fooBar, "zone"))},
       {node("nodeA", {{"zone", "z1"}}), node("nodeB", {{"zone", "z2"}}),
        node("nodeC", {{"zone", "z3"}}), node("nodeD", {{"zone", "z4"}})},
       {{}, {kAnti}, {kExisting}, {kAffinity}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::PodPtr> pods;
    for (const auto& p : c.pods) pods.push_back(p.obj());
    Env env(c.nodes, pods);
    expectFilter(env.filter(c.pod.obj()), c.want);
  }
}

// --- Filter: namespaces and namespaceSelector ----------------------------------------------------

TEST(InterPodAffinity, NamespaceSelectorMatchesNamespaceObjectsLabels) {
  const std::vector<std::pair<std::string, api::StringMap>> namespaces = {
      {"team1", {{"team", "team1"}}}, {"team2", {{"team", "team2"}}}, {"default", {}}};
  const auto fooBar = matchLabels({{"foo", "bar"}});
  const auto team1 = sel("team", "In", {"team1"});
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::vector<test::PodWrapper> pods;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"affinity with a namespaceSelector matching the pod's namespace fits",
       required(incoming(), Kind::Affinity, term(fooBar, "zone", {}, team1)),
       {existing("p1", "node1").ns("team1").label("foo", "bar")},
       nullptr},
      {"affinity with a namespaceSelector not matching the pod's namespace does not fit",
       required(incoming(), Kind::Affinity, term(fooBar, "zone", {}, team1)),
       {existing("p1", "node1").ns("team2").label("foo", "bar")},
       kAffinity},
      {"anti-affinity with a namespaceSelector matching the pod's namespace does not fit",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "zone", {}, team1)),
       {existing("p1", "node1").ns("team1").label("foo", "bar")},
       kAnti},
      {"anti-affinity with a namespaceSelector not matching the pod's namespace fits",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "zone", {}, team1)),
       {existing("p1", "node1").ns("team2").label("foo", "bar")},
       nullptr},
      {"namespaces and namespaceSelector are ORed",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "zone", {"team2"}, team1)),
       {existing("p1", "node1").ns("team2").label("foo", "bar")},
       kAnti},
      {"an empty namespaceSelector selects every namespace",
       required(incoming(), Kind::AntiAffinity, term(fooBar, "zone", {}, api::LabelSelector{})),
       {existing("p1", "node1").ns("team2").label("foo", "bar")},
       kAnti},
      {"a namespaceSelector matching no Namespace object selects no pod",
       required(incoming(), Kind::AntiAffinity,
                term(fooBar, "zone", {}, sel("team", "In", {"nobody"}))),
       {existing("p1", "node1").ns("team2").label("foo", "bar")},
       nullptr},
      {"an existing pod's anti-affinity namespaceSelector reads the incoming pod's namespace",
       incoming().ns("team1").label("foo", "bar"),
       {required(existing("p1", "node1").ns("team2"), Kind::AntiAffinity,
                 term(fooBar, "zone", {}, team1))},
       kExisting},
      {"an existing pod's anti-affinity namespaceSelector not matching the incoming pod's "
       "namespace fits",
       incoming().ns("team2").label("foo", "bar"),
       {required(existing("p1", "node1").ns("team1"), Kind::AntiAffinity,
                 term(fooBar, "zone", {}, team1))},
       nullptr},
      {"an incoming pod in an unknown namespace has no namespace labels",
       incoming().ns("ghost").label("foo", "bar"),
       {required(existing("p1", "node1").ns("team1"), Kind::AntiAffinity,
                 term(fooBar, "zone", {}, sel("team", "DoesNotExist")))},
       kExisting},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::PodPtr> pods;
    for (const auto& p : c.pods) pods.push_back(p.obj());
    Env env({node("node1", {{"zone", "z1"}})}, pods, namespaces);
    expectFilter(env.filter(c.pod.obj()), {Want{c.want}});
  }
}

// --- Score ---------------------------------------------------------------------------------------

TEST(InterPodAffinity, ScoreMatchesUpstreamTable) {
  const auto china = node("machine1", {{"region", "China"}});
  const auto india = node("machine2", {{"region", "India"}});
  const auto az1 = node("machine3", {{"az", "az1"}});
  const auto s1 = [](std::string name, std::string node) {
    return existing(std::move(name), std::move(node)).label("security", "S1");
  };
  const auto s2 = [](std::string name, std::string node) {
    return existing(std::move(name), std::move(node)).label("security", "S2");
  };
  const auto withS1 = term(matchLabels({{"security", "S1"}}), "region");
  const auto withS2 = term(matchLabels({{"security", "S2"}}), "region");
  struct Case {
    const char* name;
    test::PodWrapper pod;
    std::vector<test::PodWrapper> pods;
    std::vector<api::NodePtr> nodes;
    std::optional<std::vector<int64_t>> want;  // nullopt: skipped
    config::Json args = nullptr;
  };
  const std::vector<Case> cases = {
      {"no pod has affinity: skipped",
       incoming().label("security", "S1"),
       {s1("p1", "machine1")},
       {china, india, az1},
       std::nullopt},
      {"preferred affinity: the domain with a matching pod scores highest",
       preferred(incoming(), Kind::Affinity, 5, withS1),
       {s1("p1", "machine1"), s2("p2", "machine2"), s1("p3", "machine3")},
       {china, india, az1},
       std::vector<int64_t>{100, 0, 0}},
      {"every node of the matching domain gets the same score",
       preferred(incoming(), Kind::Affinity, 5, withS1),
       {s1("p1", "machine1")},
       {china, node("machine4", {{"region", "China"}}), india},
       std::vector<int64_t>{100, 100, 0}},
      {"weights add up per domain; normalization divides before multiplying",
       preferred(preferred(incoming(), Kind::Affinity, 5, withS1), Kind::Affinity, 6, withS2),
       {s1("p1", "machine1"), s2("p2", "machine1"), s2("p3", "machine2"), s1("p4", "machine3")},
       {china, india, az1},
       std::vector<int64_t>{100, 54, 0}},
      {"29 of 100 truncates to 28, as upstream's float arithmetic",
       preferred(preferred(incoming(), Kind::Affinity, 29, withS1), Kind::Affinity, 100, withS2),
       {s1("p1", "machine1"), s2("p2", "machine2")},
       {china, india, az1},
       std::vector<int64_t>{28, 100, 0}},
      {"preferred anti-affinity: the domain with a matching pod scores lowest",
       preferred(incoming(), Kind::AntiAffinity, 5, withS1),
       {s1("p1", "machine1")},
       {china, india, az1},
       std::vector<int64_t>{0, 100, 100}},
      {"affinity and anti-affinity to the same pods cancel out: every node 0",
       preferred(preferred(incoming(), Kind::Affinity, 5, withS1), Kind::AntiAffinity, 5, withS1),
       {s1("p1", "machine1")},
       {china, india, az1},
       std::vector<int64_t>{0, 0, 0}},
      {"no matching pod: skipped",
       preferred(incoming(), Kind::Affinity, 5, withS1),
       {s2("p1", "machine1")},
       {china, india, az1},
       std::nullopt},
      {"existing pods' preferred affinity to the incoming pod scores their domain",
       incoming().label("security", "S1"),
       {preferred(existing("p1", "machine2"), Kind::Affinity, 7, withS1)},
       {china, india, az1},
       std::vector<int64_t>{0, 100, 0}},
      {"existing pods' preferred anti-affinity to the incoming pod lowers their domain",
       incoming().label("security", "S1"),
       {preferred(existing("p1", "machine2"), Kind::AntiAffinity, 7, withS1)},
       {china, india, az1},
       std::vector<int64_t>{100, 0, 100}},
      {"existing pods' required affinity counts hardPodAffinityWeight (default 1)",
       incoming().label("security", "S1"),
       {required(existing("p1", "machine1"), Kind::Affinity, withS1)},
       {china, india, az1},
       std::vector<int64_t>{100, 0, 0}},
      {"hardPodAffinityWeight against a preferred anti-affinity weight",
       incoming().label("security", "S1"),
       {required(existing("p1", "machine1"), Kind::Affinity, withS1),
        preferred(existing("p2", "machine2"), Kind::AntiAffinity, 3, withS1)},
       {china, india, az1},
       std::vector<int64_t>{100, 0, 37},
       config::Json{{"hardPodAffinityWeight", 5}}},
      {"hardPodAffinityWeight 0 ignores existing pods' required affinity",
       incoming().label("security", "S1"),
       {required(existing("p1", "machine1"), Kind::Affinity, withS1)},
       {china, india, az1},
       std::nullopt,
       config::Json{{"hardPodAffinityWeight", 0}}},
      {"existing pods' required anti-affinity is not scored",
       incoming().label("security", "S1"),
       {required(existing("p1", "machine1"), Kind::AntiAffinity, withS1)},
       {china, india, az1},
       std::nullopt},
      {"ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
       incoming().label("security", "S1"),
       {preferred(existing("p1", "machine2"), Kind::Affinity, 7, withS1),
        required(existing("p2", "machine1"), Kind::Affinity, withS1)},
       {china, india, az1},
       std::nullopt,
       config::Json{{"ignorePreferredTermsOfExistingPods", true}}},
      {"ignorePreferredTermsOfExistingPods still scores both sides for a pod with preferred terms",
       preferred(incoming().label("security", "S1"), Kind::Affinity, 2, withS2),
       {preferred(existing("p1", "machine2"), Kind::Affinity, 7, withS1), s2("p2", "machine1")},
       {china, india, az1},
       std::vector<int64_t>{28, 100, 0},
       config::Json{{"ignorePreferredTermsOfExistingPods", true}}},
      {"nodes without labels are not scored from",
       preferred(incoming(), Kind::Affinity, 5, withS1),
       {s1("p1", "bare")},
       {node("bare", {}), china},
       std::nullopt},
      {"preferred terms with a namespaceSelector merge the selected namespaces",
       preferred(
           incoming(), Kind::Affinity, 5,
           term(matchLabels({{"security", "S1"}}), "region", {}, sel("team", "In", {"team1"}))),
       {s1("p1", "machine1").ns("team1"), s1("p2", "machine2").ns("team2")},
       {china, india, az1},
       std::vector<int64_t>{100, 0, 0}},
  };
  const std::vector<std::pair<std::string, api::StringMap>> namespaces = {
      {"team1", {{"team", "team1"}}}, {"team2", {{"team", "team2"}}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<api::PodPtr> pods;
    for (const auto& p : c.pods) pods.push_back(p.obj());
    Env env(c.nodes, pods, namespaces, c.args);
    EXPECT_EQ(env.score(c.pod.obj()), c.want);
  }
}

// --- Through the scheduling algorithm, default profile ------------------------------------------

// Schedules pods one by one with the default profile, binding each into the snapshot.
class Placer {
 public:
  Placer(const std::vector<api::NodePtr>& nodes, bool reuse)
      : snapshot_(test::makeSnapshot(nodes)),
        fw_(test::mustMakeFramework(config::defaultConfiguration().profiles[0])),
        parallelizer_(2),
        sched_(parallelizer_, 7, 100, reuse) {}

  algorithm::ScheduleOutcome place(const api::PodPtr& pod) {
    framework::CycleState state;
    framework::PodInfo info(pod);
    auto out = sched_.schedulePod(*fw_, state, info, snapshot_);
    if (!out.node.empty()) {
      auto bound = std::make_shared<api::Pod>(*pod);
      bound->spec.nodeName = out.node;
      snapshot_.addPod(out.node, framework::makePodInfo(bound));
    }
    return out;
  }
  framework::Snapshot& snapshot() { return snapshot_; }

 private:
  framework::Snapshot snapshot_;
  framework::runtime::FrameworkPtr fw_;
  util::Parallelizer parallelizer_;
  algorithm::GenericScheduler sched_;
};

// A node with room for many pods, for the default profile's NodeResourcesFit.
api::NodePtr roomyNode(const std::string& name, const std::string& zone) {
  return MakeNode()
      .name(name)
      .label("kubernetes.io/hostname", name)
      .label("zone", zone)
      .allocatable({{"cpu", "8"}, {"memory", "16Gi"}, {"pods", "110"}})
      .obj();
}

test::PodWrapper replica(int i) {
  return required(
      MakePod().name("web-" + std::to_string(i)).uid("u" + std::to_string(i)).label("app", "web"),
      Kind::AntiAffinity, term(matchLabels({{"app", "web"}}), "kubernetes.io/hostname"));
}

TEST(InterPodAffinity, ReplicasWithAntiAffinityLandOnePerNodeAndTheExtraOneIsRejected) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(roomyNode("n" + std::to_string(i), "z"));
  }
  Placer placer(nodes, /*reuse=*/true);
  std::set<std::string> used;
  for (int i = 0; i < 3; ++i) {
    auto out = placer.place(replica(i).obj());
    ASSERT_FALSE(out.node.empty()) << out.status.message();
    used.insert(out.node);
  }
  EXPECT_EQ(used.size(), 3u);
  auto out = placer.place(replica(3).obj());
  EXPECT_TRUE(out.node.empty());
  ASSERT_TRUE(out.fitError.has_value());
  EXPECT_EQ(out.fitError->message(),
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
  // Once a conflicting replica is gone, the extra one fits where it was.
  const api::PodPtr& first = placer.snapshot().get("n1")->pods().front()->pod;
  ASSERT_TRUE(placer.snapshot().removePod("n1", *first));
  EXPECT_EQ(placer.place(replica(3).obj()).node, "n1");
}

// The equivalence cache reuses node-local plugins' results across equivalent pods; with
// InterPodAffinity's terms mixed in, it must still decide as evaluating every node every time.
TEST(InterPodAffinity, ReusingEquivalentResultsDecidesAsEvaluatingEveryNode) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 30; ++i) {
    nodes.push_back(roomyNode("n" + std::to_string(i), "z" + std::to_string(i % 4)));
  }
  Placer reusing(nodes, true);
  Placer evaluating(nodes, false);
  auto templateOf = [](int i) -> test::PodWrapper {
    auto base = MakePod().name("p" + std::to_string(i)).uid("u" + std::to_string(i));
    switch (i % 5) {
      case 0:
        return replica(i);
      case 1:
        return required(base.label("app", "db"), Kind::Affinity,
                        term(matchLabels({{"app", "web"}}), "zone"));
      case 2:
        return preferred(base.label("app", "cache"), Kind::AntiAffinity, 50,
                         term(matchLabels({{"app", "cache"}}), "zone"));
      case 3:
        return base.label("app", "web");
      default:
        return preferred(base.label("app", "batch"), Kind::Affinity, 10,
                         term(matchLabels({{"app", "db"}}), "kubernetes.io/hostname"));
    }
  };
  int placed = 0;
  int rejected = 0;
  for (int i = 0; i < 150; ++i) {
    SCOPED_TRACE("pod " + std::to_string(i));
    auto pod = templateOf(i).obj();
    auto a = reusing.place(pod);
    auto b = evaluating.place(pod);
    ASSERT_TRUE(a.status.isSuccess() || a.fitError) << a.status.message();
    ASSERT_EQ(a.node, b.node);
    EXPECT_EQ(a.scores.totals, b.scores.totals);
    ASSERT_EQ(a.fitError.has_value(), b.fitError.has_value());
    if (a.fitError) {
      EXPECT_EQ(a.fitError->message(), b.fitError->message());
      ++rejected;
    } else {
      ++placed;
    }
  }
  EXPECT_GT(placed, 50);
  EXPECT_GT(rejected, 0);  // the 31st replica and after find no node
}

// --- Args ----------------------------------------------------------------------------------------

TEST(InterPodAffinity, ArgsDefaultAndValidateAsUpstream) {
  struct Case {
    const char* name;
    config::Json args;
    std::string wantError;  // empty: valid
    int32_t wantWeight = 1;
    bool wantIgnore = false;
  };
  const std::vector<Case> cases = {
      {"defaults", config::Json::object(), ""},
      {"weight 0", {{"hardPodAffinityWeight", 0}}, "", 0},
      {"weight 100 and ignore",
       {{"hardPodAffinityWeight", 100}, {"ignorePreferredTermsOfExistingPods", true}},
       "",
       100,
       true},
      {"weight below range",
       {{"hardPodAffinityWeight", -1}},
       "args.hardPodAffinityWeight: not in valid range [0, 100], got -1"},
      {"weight above range",
       {{"hardPodAffinityWeight", 101}},
       "args.hardPodAffinityWeight: not in valid range [0, 100], got 101"},
      {"unknown field", {{"hardPodAffinity", 1}}, "args.hardPodAffinity: "},
      {"wrong kind", {{"kind", "NodeAffinityArgs"}}, "args.kind: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::Decoder d;
    InterPodAffinityArgs out;
    decodeInterPodAffinityArgs(d, c.args, "args", out);
    if (c.wantError.empty()) {
      ASSERT_FALSE(d.failed()) << d.error();
      EXPECT_EQ(out.hardPodAffinityWeight, c.wantWeight);
      EXPECT_EQ(out.ignorePreferredTermsOfExistingPods, c.wantIgnore);
    } else {
      ASSERT_TRUE(d.failed());
      EXPECT_EQ(d.error().rfind(c.wantError, 0), 0u) << d.error();
    }
  }
}

TEST(InterPodAffinity, ProfileWithInvalidArgsIsRejectedNamingTheField) {
  auto profile = test::profileWith({test::plugin("InterPodAffinity", 2)});
  profile.pluginConfig.push_back({"InterPodAffinity", config::Json{{"hardPodAffinityWeight", 101}},
                                  "profiles[0].pluginConfig[0].args"});
  auto fw = test::makeFramework(profile);
  ASSERT_FALSE(fw.ok());
  EXPECT_NE(fw.error().message.find("profiles[0].pluginConfig[0].args.hardPodAffinityWeight: not "
                                    "in valid range [0, 100], got 101"),
            std::string::npos)
      << fw.error().message;
}

// --- Queueing hints ------------------------------------------------------------------------------

std::vector<framework::ClusterEventWithHint> registrations() {
  framework::Handle handle;
  auto plugin = newInterPodAffinity(InterPodAffinityArgs{}, handle);
  EXPECT_TRUE(plugin.ok());
  return dynamic_cast<const framework::EnqueueExtensions&>(**plugin).eventsToRegister();
}

TEST(InterPodAffinity, RegistersAssignedPodAndNodeEvents) {
  auto regs = registrations();
  ASSERT_EQ(regs.size(), 2u);
  EXPECT_TRUE(regs[0].event.matches(framework::events::kAssignedPodAdd));
  EXPECT_TRUE(regs[0].event.matches(framework::events::kAssignedPodUpdate));
  EXPECT_TRUE(regs[0].event.matches(framework::events::kAssignedPodDelete));
  EXPECT_TRUE(regs[1].event.matches(framework::events::kNodeAdd));
  EXPECT_TRUE(regs[1].event.matches(framework::events::kNodeLabelChange));
  EXPECT_FALSE(regs[1].event.matches(framework::events::kNodeTaintChange));
  EXPECT_FALSE(regs[1].event.matches(framework::events::kNodeAllocatableChange));
}

TEST(InterPodAffinity, AssignedPodHintMatchesUpstreamTable) {
  const auto fooBar = matchLabels({{"foo", "bar"}});
  const auto affine = required(incoming(), Kind::Affinity, term(fooBar, "zone")).pod();
  const auto hater = required(incoming(), Kind::AntiAffinity, term(fooBar, "zone")).pod();
  const auto bound = [](api::StringMap labels) {
    auto p = existing("p1", "node1");
    for (const auto& [k, v] : labels) p.label(k, v);
    return p.pod();
  };
  struct Case {
    const char* name;
    api::Pod pod;
    std::optional<api::Pod> before, after;
    QueueingHint want;
  };
  const api::Pod unassigned = incoming().label("foo", "bar").pod();
  const std::vector<Case> cases = {
      {"an added pod matching the affinity queues", affine, std::nullopt, bound({{"foo", "bar"}}),
       QueueingHint::Queue},
      {"an added pod not matching the affinity skips", affine, std::nullopt, bound({{"x", "y"}}),
       QueueingHint::Skip},
      {"an unassigned pod skips", affine, std::nullopt, unassigned, QueueingHint::Skip},
      {"a pod relabelled to match the affinity queues", affine, bound({}), bound({{"foo", "bar"}}),
       QueueingHint::Queue},
      {"a pod relabelled to stop matching the anti-affinity queues", hater, bound({{"foo", "bar"}}),
       bound({}), QueueingHint::Queue},
      {"a pod relabelled to match the anti-affinity skips", hater, bound({}),
       bound({{"foo", "bar"}}), QueueingHint::Skip},
      {"a deleted pod matching the anti-affinity queues", hater, bound({{"foo", "bar"}}),
       std::nullopt, QueueingHint::Queue},
      {"a deleted pod whose anti-affinity matched the pod queues",
       incoming().label("foo", "bar").pod(),
       required(existing("p1", "node1"), Kind::AntiAffinity, term(fooBar, "zone")).pod(),
       std::nullopt, QueueingHint::Queue},
      {"a deleted pod unrelated to the pod skips", hater, bound({{"x", "y"}}), std::nullopt,
       QueueingHint::Skip},
  };
  auto regs = registrations();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(regs[0].podHint);
    EXPECT_EQ(
        regs[0].podHint(c.pod, c.before ? &*c.before : nullptr, c.after ? &*c.after : nullptr),
        c.want);
  }
}

TEST(InterPodAffinity, NodeHintMatchesUpstreamTable) {
  const auto fooBar = matchLabels({{"foo", "bar"}});
  const auto affine = required(incoming(), Kind::Affinity, term(fooBar, "zone")).pod();
  const auto hater = required(incoming(), Kind::AntiAffinity, term(fooBar, "zone")).pod();
  const auto n = [](api::StringMap labels) { return *node("n", std::move(labels)); };
  struct Case {
    const char* name;
    api::Pod pod;
    std::optional<api::Node> before;
    api::Node after;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"an added node with the affinity key queues", affine, std::nullopt, n({{"zone", "z1"}}),
       QueueingHint::Queue},
      {"an added node without the affinity key skips", affine, std::nullopt, n({}),
       QueueingHint::Skip},
      {"the affinity key appearing queues", affine, n({}), n({{"zone", "z1"}}),
       QueueingHint::Queue},
      {"the affinity key changing value queues", affine, n({{"zone", "z1"}}), n({{"zone", "z2"}}),
       QueueingHint::Queue},
      {"the affinity key unchanged skips", affine, n({{"zone", "z1"}}),
       n({{"zone", "z1"}, {"x", "y"}}), QueueingHint::Skip},
      {"any added node queues a pod with anti-affinity", hater, std::nullopt, n({}),
       QueueingHint::Queue},
      {"the anti-affinity key disappearing queues", hater, n({{"zone", "z1"}}), n({}),
       QueueingHint::Queue},
      {"the anti-affinity key appearing skips", hater, n({}), n({{"zone", "z1"}}),
       QueueingHint::Skip},
      {"a pod without pod affinity skips", incoming().pod(), std::nullopt, n({{"zone", "z1"}}),
       QueueingHint::Skip},
  };
  auto regs = registrations();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(regs[1].nodeHint);
    EXPECT_EQ(regs[1].nodeHint(c.pod, c.before ? &*c.before : nullptr, &c.after), c.want);
  }
}

}  // namespace
}  // namespace berth::plugins::interpodaffinity
