// InterPodIndex through the Snapshot that keeps it: per-domain counts of labelled pods and groups
// of identical terms stay equal to a walk over every pod as pods and nodes come, go and change.

#include "pkg/framework/inter_pod_index.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "pkg/framework/snapshot.h"
#include "tests/support/builders.h"

namespace berth::framework {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kHost = "kubernetes.io/hostname";

api::NodePtr node(const std::string& name, const std::string& zone) {
  return MakeNode().name(name).label(kHost, name).label(kZone, zone).obj();
}

test::PodWrapper pod(const std::string& name, const std::string& nodeName) {
  return MakePod().name(name).uid(name).ns("default").node(nodeName);
}

test::PodWrapper withAnti(test::PodWrapper w, const std::string& value, const std::string& key,
                          std::vector<std::string> namespaces = {}) {
  return w.mutate([&](api::Pod& p) {
    api::PodAffinityTerm t;
    t.labelSelector.emplace().matchLabels = {{"app", value}};
    t.topologyKey = key;
    t.namespaces = namespaces;
    p.spec.affinity.emplace()
        .podAntiAffinity.emplace()
        .requiredDuringSchedulingIgnoredDuringExecution.push_back(t);
  });
}

using Counts = std::map<std::string, int64_t>;

Counts sorted(const DomainCounts& counts) { return Counts(counts.begin(), counts.end()); }

// What the index should say: every pod of the snapshot walked.
Counts walk(const Snapshot& s, const std::string& ns, const std::string& key,
            const std::string& value, const std::string& topologyKey) {
  Counts out;
  for (const auto& info : s.nodeInfos()) {
    auto v = info->labels().find(topologyKey);
    if (!v) continue;
    for (const auto& p : info->pods()) {
      auto it = p->pod->metadata.labels.find(key);
      if (p->pod->metadata.namespace_ == ns && it != p->pod->metadata.labels.end() &&
          it->second == value) {
        out[std::string(*v)]++;
      }
    }
  }
  return out;
}

class InterPodIndexTest : public ::testing::Test {
 protected:
  InterPodIndexTest()
      : snapshot_(test::makeSnapshot(
            {node("n1", "z1"), node("n2", "z1"), node("n3", "z2")},
            {pod("a", "n1").label("app", "web").obj(), pod("b", "n2").label("app", "web").obj(),
             pod("c", "n3").label("app", "web").obj(), pod("d", "n3").label("app", "db").obj()})) {}

  void expectConsistent() {
    for (const char* value : {"web", "db"}) {
      for (const char* key : {kZone, kHost}) {
        SCOPED_TRACE(std::string(value) + " by " + key);
        EXPECT_EQ(sorted(snapshot_.interPodIndex().labelCounts("default", "app", value, key)),
                  walk(snapshot_, "default", "app", value, key));
      }
    }
  }

  Snapshot snapshot_;
};

TEST_F(InterPodIndexTest, CountsLabelledPodsPerDomain) {
  EXPECT_EQ(sorted(snapshot_.interPodIndex().labelCounts("default", "app", "web", kZone)),
            (Counts{{"z1", 2}, {"z2", 1}}));
  EXPECT_EQ(sorted(snapshot_.interPodIndex().labelCounts("default", "app", "db", kHost)),
            (Counts{{"n3", 1}}));
  EXPECT_TRUE(snapshot_.interPodIndex().labelCounts("other", "app", "web", kZone).empty());
  EXPECT_TRUE(snapshot_.interPodIndex().labelCounts("default", "app", "web", "no-key").empty());
}

TEST_F(InterPodIndexTest, FollowsPodsAddedAndRemoved) {
  expectConsistent();  // builds the per-zone and per-host counts first, so they are updated below
  ASSERT_TRUE(snapshot_.addPod("n3", pod("e", "n3").label("app", "web").info()));
  expectConsistent();
  ASSERT_TRUE(snapshot_.removePod("n3", *pod("d", "n3").obj()));
  expectConsistent();
  EXPECT_TRUE(snapshot_.interPodIndex().labelCounts("default", "app", "db", kZone).empty());
  ASSERT_TRUE(snapshot_.removePod("n1", *pod("a", "n1").obj()));
  expectConsistent();
}

TEST_F(InterPodIndexTest, FollowsNodesRelabelledReplacedAndRemoved) {
  expectConsistent();
  auto moved = std::make_shared<NodeInfo>(*snapshot_.get("n3"));
  moved->setNode(node("n3", "z1"));
  snapshot_.addNodeInfo(moved);
  expectConsistent();
  EXPECT_EQ(sorted(snapshot_.interPodIndex().labelCounts("default", "app", "web", kZone)),
            (Counts{{"z1", 3}}));
  ASSERT_TRUE(snapshot_.removeNodeInfo("n1"));
  expectConsistent();
  snapshot_.addNodeInfo(std::make_shared<NodeInfo>(node("n4", "z3")));
  ASSERT_TRUE(snapshot_.addPod("n4", pod("f", "n4").label("app", "db").info()));
  expectConsistent();
}

TEST_F(InterPodIndexTest, GroupsIdenticalTermsOfExistingPods) {
  using Kind = InterPodIndex::TermKind;
  ASSERT_TRUE(snapshot_.addPod("n1", withAnti(pod("r1", "n1"), "web", kHost).info()));
  ASSERT_TRUE(snapshot_.addPod("n2", withAnti(pod("r2", "n2"), "web", kHost).info()));
  ASSERT_TRUE(snapshot_.addPod("n2", withAnti(pod("r3", "n2"), "web", kHost).info()));
  // Another namespace list, or another key, is another group.
  ASSERT_TRUE(snapshot_.addPod("n3", withAnti(pod("r4", "n3"), "web", kHost, {"x"}).info()));
  ASSERT_TRUE(snapshot_.addPod("n3", withAnti(pod("r5", "n3"), "web", kZone).info()));
  const InterPodIndex::Groups& groups =
      snapshot_.interPodIndex().groups(Kind::RequiredAntiAffinity);
  ASSERT_EQ(groups.size(), 3u);
  std::map<std::string, Counts> byTerm;
  for (const auto& [key, g] : groups) {
    byTerm[g.term.topologyKey + (g.term.namespaces == std::vector<std::string>{"x"} ? "/x" : "")] =
        sorted(g.counts);
  }
  EXPECT_EQ(byTerm[kHost], (Counts{{"n1", 1}, {"n2", 2}}));
  EXPECT_EQ(byTerm[std::string(kHost) + "/x"], (Counts{{"n3", 1}}));
  EXPECT_EQ(byTerm[kZone], (Counts{{"z2", 1}}));
  EXPECT_TRUE(snapshot_.interPodIndex().groups(Kind::RequiredAffinity).empty());

  ASSERT_TRUE(snapshot_.removePod("n2", *pod("r2", "n2").obj()));
  ASSERT_TRUE(snapshot_.removePod("n3", *pod("r4", "n3").obj()));
  ASSERT_TRUE(snapshot_.removeNodeInfo("n1"));
  ASSERT_EQ(groups.size(), 2u);
  for (const auto& [key, g] : groups) {
    if (g.term.topologyKey == kHost) {
      EXPECT_EQ(sorted(g.counts), (Counts{{"n2", 1}}));
      EXPECT_EQ(g.terms, 1);
    }
  }
}

}  // namespace
}  // namespace berth::framework
