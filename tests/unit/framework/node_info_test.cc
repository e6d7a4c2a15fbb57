// NodeInfo accounting (requested, non-zero requested, ports, generation, pods with pod affinity),
// HostPortInfo conflicts (upstream's HostPortInfo tests in types_test.go), PodInfo's compiled
// affinity terms (upstream's PodInfo tests) and Snapshot construction.

#include "pkg/framework/node_info.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "pkg/framework/pod_info.h"
#include "pkg/framework/snapshot.h"
#include "tests/support/builders.h"

namespace berth::framework {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr int64_t kMi = int64_t{1} << 20;

// A pod with one required term of the given kind selecting app=web by zone.
api::PodPtr podWithTerm(std::string name, std::string node, bool anti) {
  return MakePod()
      .name(name)
      .uid(name)
      .node(std::move(node))
      .mutate([anti](api::Pod& p) {
        api::PodAffinityTerm t;
        t.labelSelector.emplace().matchLabels = {{"app", "web"}};
        t.topologyKey = "zone";
        auto& a = p.spec.affinity.emplace();
        auto& side = anti ? a.podAntiAffinity : a.podAffinity;
        side.emplace().requiredDuringSchedulingIgnoredDuringExecution.push_back(t);
      })
      .obj();
}

TEST(PodInfo, PrecomputesRequestsAndHostPorts) {
  PodInfo info(MakePod()
                   .name("p")
                   .req({{"cpu", "200m"}})
                   .hostPort(80)
                   .hostPort(53, "UDP", "10.0.0.1")
                   .initHostPort(/*sidecar=*/true, 9000)
                   .initHostPort(/*sidecar=*/false, 9001)
                   .obj());
  EXPECT_EQ(info.requests.milliCPU, 200);
  EXPECT_EQ(info.requests.memory, 0);
  // Scoring defaults the sidecar (100m/200Mi) and the container's memory; the regular init step
  // (its own defaults plus the sidecar's) is smaller than the steady state.
  EXPECT_EQ(info.nonZeroRequests.milliCPU, 300);
  EXPECT_EQ(info.nonZeroRequests.memory, 400 * kMi);
  // Regular init containers' ports are released before the pod runs; sidecars keep theirs.
  std::vector<HostPort> want = {
      {"0.0.0.0", "TCP", 9000}, {"0.0.0.0", "TCP", 80}, {"10.0.0.1", "UDP", 53}};
  EXPECT_EQ(info.hostPorts, want);
}

TEST(NodeInfo, AddAndRemovePodKeepsSumsAndBumpsGeneration) {
  NodeInfo n(
      MakeNode().name("n1").allocatable({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}).obj());
  EXPECT_EQ(n.name(), "n1");
  EXPECT_EQ(n.allocatable().milliCPU, 4000);
  EXPECT_EQ(n.allocatable().allowedPodNumber, 110);
  const int64_t g0 = n.generation();

  auto a = makePodInfo(
      MakePod().name("a").uid("ua").req({{"cpu", "500m"}, {"memory", "1Gi"}}).hostPort(8080).obj());
  auto b = makePodInfo(MakePod().name("b").uid("ub").req({}).obj());
  n.addPod(a);
  const int64_t g1 = n.generation();
  EXPECT_GT(g1, g0);
  n.addPod(b);
  const int64_t g2 = n.generation();
  EXPECT_GT(g2, g1);

  EXPECT_EQ(n.pods().size(), 2u);
  EXPECT_EQ(n.requested().milliCPU, 500);
  EXPECT_EQ(n.requested().memory, int64_t{1} << 30);
  // The requestless pod counts as 100m / 200Mi for scoring only.
  EXPECT_EQ(n.nonZeroRequested().milliCPU, 600);
  EXPECT_EQ(n.nonZeroRequested().memory, (int64_t{1} << 30) + 200 * kMi);
  EXPECT_TRUE(n.usedPorts().conflicts({"0.0.0.0", "TCP", 8080}));

  EXPECT_TRUE(n.removePod(*a->pod));
  EXPECT_GT(n.generation(), g2);
  EXPECT_EQ(n.pods().size(), 1u);
  EXPECT_EQ(n.requested().milliCPU, 0);
  EXPECT_EQ(n.nonZeroRequested().milliCPU, 100);
  EXPECT_FALSE(n.usedPorts().conflicts({"0.0.0.0", "TCP", 8080}));
  EXPECT_TRUE(n.usedPorts().empty());

  const int64_t g3 = n.generation();
  EXPECT_FALSE(n.removePod(*a->pod));  // already gone
  EXPECT_EQ(n.generation(), g3);
  EXPECT_TRUE(n.removePod(*b->pod));
  EXPECT_TRUE(n.pods().empty());
  EXPECT_EQ(n.nonZeroRequested().milliCPU, 0);
  EXPECT_EQ(n.nonZeroRequested().memory, 0);
}

TEST(NodeInfo, RemovePodMatchesByUidElseByNamespacedName) {
  NodeInfo n(MakeNode().name("n1").obj());
  n.addPod(makePodInfo(MakePod().name("web").ns("a").req({{"cpu", "1"}}).obj()));
  n.addPod(makePodInfo(MakePod().name("web").ns("b").req({{"cpu", "2"}}).obj()));
  n.addPod(makePodInfo(MakePod().name("db").ns("a").uid("u1").req({{"cpu", "4"}}).obj()));

  EXPECT_FALSE(n.removePod(*MakePod().name("web").ns("c").obj()));
  EXPECT_TRUE(n.removePod(*MakePod().name("web").ns("b").obj()));
  EXPECT_EQ(n.requested().milliCPU, 5000);
  // A different uid is a different pod, even with the same name.
  EXPECT_FALSE(n.removePod(*MakePod().name("db").ns("a").uid("u2").obj()));
  EXPECT_TRUE(n.removePod(*MakePod().name("other").uid("u1").obj()));
  EXPECT_EQ(n.requested().milliCPU, 1000);
}

TEST(NodeInfo, SetNodeRefreshesAllocatableAndGeneration) {
  NodeInfo n;
  EXPECT_EQ(n.node(), nullptr);
  EXPECT_EQ(n.name(), "");
  n.addPod(makePodInfo(MakePod().name("p").req({{"cpu", "1"}}).obj()));
  const int64_t g = n.generation();
  n.setNode(MakeNode().name("late").allocatable({{"cpu", "2"}}).obj());
  EXPECT_GT(n.generation(), g);
  EXPECT_EQ(n.name(), "late");
  EXPECT_EQ(n.allocatable().milliCPU, 2000);
  EXPECT_EQ(n.requested().milliCPU, 1000);  // pods stay
}

TEST(NodeInfo, GenerationsAreUniqueAcrossNodes) {
  NodeInfo a(MakeNode().name("a").obj());
  NodeInfo b(MakeNode().name("b").obj());
  EXPECT_NE(a.generation(), b.generation());
}

TEST(HostPortInfo, ConflictsLikeUpstream) {
  struct Case {
    const char* name;
    std::vector<HostPort> used;
    HostPort asked;
    bool conflict;
  };
  const Case cases[] = {
      {"nothing used", {}, {"127.0.0.1", "TCP", 80}, false},
      {"same ip, protocol and port", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"other port", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 81}, false},
      {"other protocol", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "UDP", 80}, false},
      {"other ip", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.2", "TCP", 80}, false},
      {"0.0.0.0 asked conflicts with a specific ip",
       {{"127.0.0.1", "TCP", 80}},
       {"0.0.0.0", "TCP", 80},
       true},
      {"a specific ip conflicts with 0.0.0.0 in use",
       {{"0.0.0.0", "TCP", 80}},
       {"10.1.2.3", "TCP", 80},
       true},
      {"0.0.0.0 in use, other protocol", {{"0.0.0.0", "TCP", 80}}, {"10.1.2.3", "SCTP", 80}, false},
      {"both 0.0.0.0", {{"0.0.0.0", "UDP", 53}}, {"0.0.0.0", "UDP", 53}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HostPortInfo info;
    for (const auto& p : c.used) info.add(p);
    EXPECT_EQ(info.conflicts(c.asked), c.conflict);
  }
}

TEST(HostPortInfo, RemoveReleasesOneHolder) {
  HostPortInfo info;
  info.add({"127.0.0.1", "TCP", 80});
  info.add({"127.0.0.1", "TCP", 80});
  info.remove({"127.0.0.1", "TCP", 80});
  EXPECT_TRUE(info.conflicts({"127.0.0.1", "TCP", 80}));
  info.remove({"127.0.0.1", "TCP", 80});
  EXPECT_FALSE(info.conflicts({"127.0.0.1", "TCP", 80}));
  EXPECT_TRUE(info.empty());
  info.remove({"127.0.0.1", "TCP", 80});  // removing what is absent is harmless
  EXPECT_TRUE(info.empty());
}

TEST(Snapshot, BuildPlacesBoundPodsAndReportsOrphans) {
  auto n1 = MakeNode().name("n1").obj();
  auto n2 = MakeNode().name("n2").obj();
  std::vector<PodInfoPtr> pods = {
      makePodInfo(MakePod().name("a").node("n2").req({{"cpu", "1"}}).obj()),
      makePodInfo(MakePod().name("b").node("gone").obj()),
      makePodInfo(MakePod().name("c").node("n2").req({{"cpu", "2"}}).obj()),
  };
  std::vector<PodInfoPtr> orphans;
  Snapshot s = Snapshot::build({n1, n2}, pods, &orphans);
  ASSERT_EQ(s.numNodes(), 2u);
  EXPECT_EQ(s.nodeInfos()[0]->name(), "n1");
  EXPECT_EQ(s.nodeInfos()[1]->name(), "n2");
  EXPECT_EQ(s.get("n2")->pods().size(), 2u);
  EXPECT_EQ(s.get("n2")->requested().milliCPU, 3000);
  EXPECT_TRUE(s.get("n1")->pods().empty());
  EXPECT_EQ(s.get("missing"), nullptr);
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0]->pod->metadata.name, "b");

  // Adding a NodeInfo with an existing name replaces it in place.
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n1").label("new", "yes").obj()));
  EXPECT_EQ(s.numNodes(), 2u);
  EXPECT_EQ(s.nodeInfos()[0]->node()->metadata.labels.at("new"), "yes");
}

TEST(PodInfo, CompilesAffinityTermsOnce) {
  PodInfo plain(MakePod().name("plain").obj());
  EXPECT_FALSE(plain.hasPodAffinity());
  EXPECT_TRUE(plain.affinityTerms().requiredAffinity.empty());

  auto pod = MakePod().name("p").ns("ns1").label("app", "web").mutate([](api::Pod& p) {
    auto& a = p.spec.affinity.emplace();
    api::PodAffinityTerm own;  // no namespaces, no namespaceSelector: the pod's namespace
    own.labelSelector.emplace().matchLabels = {{"app", "web"}};
    own.topologyKey = "zone";
    api::PodAffinityTerm listed = own;  // namespaces given: exactly those, sorted
    listed.namespaces = {"b", "a", "b"};
    api::PodAffinityTerm none = own;  // no labelSelector: selects nothing
    none.labelSelector.reset();
    api::PodAffinityTerm bySelector = own;  // a namespaceSelector alone: no namespace by name
    bySelector.namespaceSelector.emplace().matchLabels = {{"team", "x"}};
    a.podAffinity.emplace().requiredDuringSchedulingIgnoredDuringExecution = {own, listed, none};
    a.podAntiAffinity.emplace().preferredDuringSchedulingIgnoredDuringExecution = {{7, bySelector}};
  });
  PodInfo info(pod.obj());
  ASSERT_TRUE(info.hasPodAffinity());
  EXPECT_FALSE(info.hasRequiredAntiAffinity());
  const PodAffinityTerms& t = info.affinityTerms();
  EXPECT_TRUE(t.error.empty()) << t.error;
  ASSERT_EQ(t.requiredAffinity.size(), 3u);
  EXPECT_EQ(t.requiredAffinity[0].namespaces, std::vector<std::string>{"ns1"});
  EXPECT_TRUE(t.requiredAffinity[0].matches(*pod.obj(), nullptr));
  EXPECT_EQ(t.requiredAffinity[1].namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(t.requiredAffinity[2].matches(*pod.obj(), nullptr));
  ASSERT_EQ(t.preferredAntiAffinity.size(), 1u);
  EXPECT_EQ(t.preferredAntiAffinity[0].weight, 7);
  const AffinityTerm& bs = t.preferredAntiAffinity[0].term;
  EXPECT_TRUE(bs.namespaces.empty());
  const api::StringMap teamX = {{"team", "x"}};
  EXPECT_TRUE(bs.matches(*pod.obj(), &teamX));
  EXPECT_FALSE(bs.matches(*pod.obj(), nullptr));
}

TEST(PodInfo, AffinityTermThatDoesNotCompileEmptiesItsListAndNamesTheField) {
  auto pod = MakePod().name("p").mutate([](api::Pod& p) {
    api::PodAffinityTerm good;
    good.labelSelector.emplace();
    good.topologyKey = "zone";
    api::PodAffinityTerm bad = good;
    bad.labelSelector->matchExpressions.push_back({"app", "Near", {"x"}});
    auto& a = p.spec.affinity.emplace();
    a.podAntiAffinity.emplace().requiredDuringSchedulingIgnoredDuringExecution = {good, bad};
    a.podAffinity.emplace().requiredDuringSchedulingIgnoredDuringExecution = {good};
  });
  PodInfo info(pod.obj());
  const PodAffinityTerms& t = info.affinityTerms();
  EXPECT_EQ(t.error,
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1]"
            ".labelSelector: \"Near\" is not a valid pod selector operator");
  EXPECT_TRUE(t.requiredAntiAffinity.empty());
  EXPECT_EQ(t.requiredAffinity.size(), 1u);
  EXPECT_FALSE(info.hasRequiredAntiAffinity());
}

TEST(NodeInfo, KeepsPodsWithAffinityAndRequiredAntiAffinity) {
  NodeInfo n(MakeNode().name("n").obj());
  auto plain = MakePod().name("plain").uid("plain").node("n").obj();
  auto affine = podWithTerm("affine", "n", false);
  auto hater = podWithTerm("hater", "n", true);
  n.addPod(makePodInfo(plain));
  n.addPod(makePodInfo(affine));
  n.addPod(makePodInfo(hater));
  EXPECT_EQ(n.podsWithAffinity().size(), 2u);
  ASSERT_EQ(n.podsWithRequiredAntiAffinity().size(), 1u);
  EXPECT_EQ(n.podsWithRequiredAntiAffinity()[0]->pod, hater);
  ASSERT_TRUE(n.removePod(*hater));
  ASSERT_EQ(n.podsWithAffinity().size(), 1u);
  EXPECT_EQ(n.podsWithAffinity()[0]->pod, affine);
  EXPECT_TRUE(n.podsWithRequiredAntiAffinity().empty());
  ASSERT_TRUE(n.removePod(*plain));
  EXPECT_EQ(n.podsWithAffinity().size(), 1u);
  NodeInfo copy = n;  // a cache copying a NodeInfo into a snapshot keeps the lists
  EXPECT_EQ(copy.podsWithAffinity().size(), 1u);
}

TEST(Snapshot, NodesWithPodAffinityFollowEveryChange) {
  Snapshot s = Snapshot::build(
      {MakeNode().name("n1").obj(), MakeNode().name("n2").obj(), MakeNode().name("n3").obj()},
      {makePodInfo(podWithTerm("a", "n1", false)), makePodInfo(podWithTerm("h", "n2", true))});
  auto names = [](const std::vector<const NodeInfo*>& nodes) {
    std::set<std::string> out;
    for (const NodeInfo* n : nodes) out.insert(n->name());
    return out;
  };
  using Names = std::set<std::string>;
  EXPECT_EQ(names(s.nodesWithPodAffinity()), (Names{"n1", "n2"}));
  EXPECT_EQ(names(s.nodesWithRequiredAntiAffinity()), (Names{"n2"}));
  auto h3 = podWithTerm("h3", "n3", true);
  ASSERT_TRUE(s.addPod("n3", makePodInfo(h3)));
  EXPECT_EQ(names(s.nodesWithRequiredAntiAffinity()), (Names{"n2", "n3"}));
  ASSERT_TRUE(s.removePod("n2", *podWithTerm("h", "n2", true)));
  EXPECT_EQ(names(s.nodesWithPodAffinity()), (Names{"n1", "n3"}));
  EXPECT_EQ(names(s.nodesWithRequiredAntiAffinity()), (Names{"n3"}));
  // Replacing a NodeInfo re-files it; removing one drops it.
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n1").obj()));
  EXPECT_EQ(names(s.nodesWithPodAffinity()), (Names{"n3"}));
  ASSERT_TRUE(s.removeNodeInfo("n3"));
  EXPECT_TRUE(s.nodesWithPodAffinity().empty());
  EXPECT_TRUE(s.nodesWithRequiredAntiAffinity().empty());
}

TEST(Snapshot, NodesWithImagesFollowNodeChanges) {
  auto withImage = [](const std::string& name) {
    auto node = std::make_shared<api::Node>(*MakeNode().name(name).obj());
    node->status.images.push_back({{"nginx:latest"}, 100});
    return api::NodePtr(node);
  };
  Snapshot s = Snapshot::build({withImage("n1"), MakeNode().name("n2").obj()}, {});
  ASSERT_EQ(s.nodesWithImages().size(), 1u);
  EXPECT_EQ(s.nodesWithImages()[0]->name(), "n1");
  EXPECT_EQ(s.positionOf(*s.nodesWithImages()[0]), 0u);
  s.addNodeInfo(std::make_shared<NodeInfo>(withImage("n2")));
  EXPECT_EQ(s.nodesWithImages().size(), 2u);
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n1").obj()));  // images gone
  ASSERT_EQ(s.nodesWithImages().size(), 1u);
  EXPECT_EQ(s.nodesWithImages()[0]->name(), "n2");
  ASSERT_TRUE(s.removeNodeInfo("n2"));
  EXPECT_TRUE(s.nodesWithImages().empty());
}

// The equivalence cache finds changed nodes through generations(): it must follow every change.
TEST(Snapshot, GenerationsFollowEveryChange) {
  auto pod = MakePod().name("p").uid("p").node("n2").req({{"cpu", "1"}}).obj();
  Snapshot s = Snapshot::build({MakeNode().name("n1").obj(), MakeNode().name("n2").obj()},
                               {makePodInfo(pod)});
  auto expectInStep = [&](const char* after) {
    SCOPED_TRACE(after);
    ASSERT_EQ(s.generations().size(), s.numNodes());
    for (size_t i = 0; i < s.numNodes(); ++i) {
      EXPECT_EQ(s.generations()[i], s.nodeInfos()[i]->generation()) << s.nodeInfos()[i]->name();
    }
  };
  expectInStep("build");
  const int64_t before = s.generations()[1];
  ASSERT_TRUE(s.addPod("n2", makePodInfo(MakePod().name("q").uid("q").node("n2").obj())));
  EXPECT_GT(s.generations()[1], before);
  expectInStep("addPod");
  ASSERT_TRUE(s.removePod("n2", *pod));
  expectInStep("removePod");
  EXPECT_FALSE(s.addPod("missing", makePodInfo(pod)));
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n3").obj()));
  expectInStep("addNodeInfo, new");
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n1").label("a", "b").obj()));
  expectInStep("addNodeInfo, replacing");
  ASSERT_TRUE(s.removeNodeInfo("n1"));
  expectInStep("removeNodeInfo");
  EXPECT_EQ(s.nodeInfos()[0]->name(), "n2");
}

// A pod on `node` with a persistentVolumeClaim volume per claim and one generic ephemeral volume.
api::PodPtr podWithClaims(std::string name, std::string node, std::vector<std::string> claims,
                          bool ephemeral = false) {
  return MakePod()
      .name(name)
      .uid(name)
      .node(std::move(node))
      .mutate([&](api::Pod& p) {
        for (const std::string& c : claims) {
          api::Volume v;
          v.name = "v-" + c;
          v.source = "persistentVolumeClaim";
          v.claimName = c;
          p.spec.volumes.push_back(v);
        }
        if (ephemeral) {
          api::Volume v;
          v.name = "scratch";
          v.source = "ephemeral";
          p.spec.volumes.push_back(v);
        }
      })
      .obj();
}

// Upstream's NodeInfo.PVCRefCounts: claims and generic ephemeral claims by "namespace/name".
TEST(NodeInfo, CountsClaimReferencesOfItsPods) {
  NodeInfo n(MakeNode().name("n1").obj());
  n.addPod(makePodInfo(podWithClaims("a", "n1", {"data"}, /*ephemeral=*/true)));
  n.addPod(makePodInfo(podWithClaims("b", "n1", {"data", "logs"})));
  using Counts = std::map<std::string, int>;
  EXPECT_EQ(n.pvcRefCounts(),
            (Counts{{"default/a-scratch", 1}, {"default/data", 2}, {"default/logs", 1}}));
  ASSERT_TRUE(n.removePod(*podWithClaims("b", "n1", {"data", "logs"})));
  EXPECT_EQ(n.pvcRefCounts(), (Counts{{"default/a-scratch", 1}, {"default/data", 1}}));
  ASSERT_TRUE(n.removePod(*podWithClaims("a", "n1", {"data"}, true)));
  EXPECT_TRUE(n.pvcRefCounts().empty());
}

// Upstream's StorageInfos().IsPVCUsedByPods, kept through pod and node changes.
TEST(Snapshot, KnowsWhichClaimsScheduledPodsUse) {
  Snapshot s = Snapshot::build({MakeNode().name("n1").obj(), MakeNode().name("n2").obj()},
                               {makePodInfo(podWithClaims("a", "n1", {"data"})),
                                makePodInfo(podWithClaims("b", "n2", {"data"}))});
  EXPECT_TRUE(s.isPVCUsedByPods("default/data"));
  EXPECT_FALSE(s.isPVCUsedByPods("other/data"));
  ASSERT_TRUE(s.removePod("n1", *podWithClaims("a", "n1", {"data"})));
  EXPECT_TRUE(s.isPVCUsedByPods("default/data"));  // b still uses it
  ASSERT_TRUE(s.addPod("n1", makePodInfo(podWithClaims("c", "n1", {"logs"}))));
  EXPECT_TRUE(s.isPVCUsedByPods("default/logs"));
  // Replacing n2's NodeInfo with an empty one drops b's reference; removing n1 drops c's.
  s.addNodeInfo(std::make_shared<NodeInfo>(MakeNode().name("n2").obj()));
  EXPECT_FALSE(s.isPVCUsedByPods("default/data"));
  ASSERT_TRUE(s.removeNodeInfo("n1"));
  EXPECT_FALSE(s.isPVCUsedByPods("default/logs"));
}

}  // namespace
}  // namespace berth::framework
