// InterPodIndex's counts by topology value id, read at a node's snapshot position (what Filter and
// Score read): they stay equal to the counts by value as pods and nodes come, go and change, and
// a value id names one value while any node has it.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "pkg/framework/inter_pod_index.h"
#include "pkg/framework/snapshot.h"
#include "tests/support/builders.h"

namespace berth::framework {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr const char* kZoneKey = "topology.kubernetes.io/zone";
constexpr const char* kHostKey = "kubernetes.io/hostname";

api::NodePtr zoned(const std::string& name, const std::string& zone) {
  return MakeNode().name(name).label(kHostKey, name).label(kZoneKey, zone).obj();
}

test::PodWrapper web(const std::string& name, const std::string& nodeName) {
  return MakePod().name(name).uid(name).ns("default").node(nodeName).label("app", "web");
}

test::PodWrapper antiWeb(const std::string& name, const std::string& nodeName,
                         const std::string& key) {
  return web(name, nodeName).mutate([&](api::Pod& p) {
    api::PodAffinityTerm t;
    t.labelSelector.emplace().matchLabels = {{"app", "web"}};
    t.topologyKey = key;
    p.spec.affinity.emplace()
        .podAntiAffinity.emplace()
        .requiredDuringSchedulingIgnoredDuringExecution.push_back(t);
  });
}

class InterPodIndexIdsTest : public ::testing::Test {
 protected:
  InterPodIndexIdsTest()
      : snapshot_(test::makeSnapshot({zoned("n1", "z1"), zoned("n2", "z1"), zoned("n3", "z2"),
                                      MakeNode().name("bare").obj()},
                                     {web("a", "n1").obj(), web("b", "n2").obj(),
                                      web("c", "n3").obj(), antiWeb("r1", "n1", kZoneKey).obj()})) {
  }

  // For every node, by position: the id says whether it has the key, nodes share an id exactly
  // when they share the value, and the count by id is the count by value.
  void expectAgree(const std::string& topologyKey) {
    SCOPED_TRACE(topologyKey);
    const InterPodIndex& index = snapshot_.interPodIndex();
    const KeyCounts& webCounts = index.labelKeyCounts("default", "app", "web", topologyKey);
    const std::vector<int32_t>& ids = index.topologyIds(topologyKey);
    ASSERT_EQ(ids.size(), snapshot_.numNodes());
    std::map<int32_t, std::string> valueOf;
    for (size_t p = 0; p < snapshot_.numNodes(); ++p) {
      const NodeInfo& node = *snapshot_.nodeInfos()[p];
      SCOPED_TRACE(node.name());
      EXPECT_EQ(snapshot_.findPosition(node), static_cast<int64_t>(p));
      const std::optional<std::string_view> value = node.labels().find(topologyKey);
      ASSERT_EQ(ids[p] >= 0, value.has_value());
      if (!value) {
        EXPECT_EQ(countOf(webCounts.byId, ids[p]), 0);
        continue;
      }
      auto [named, fresh] = valueOf.try_emplace(ids[p], std::string(*value));
      EXPECT_EQ(named->second, *value) << "one id, two values";
      auto byValue = webCounts.byValue.find(*value);
      EXPECT_EQ(countOf(webCounts.byId, ids[p]),
                byValue == webCounts.byValue.end() ? 0 : byValue->second);
    }
    std::map<std::string, int32_t> idOf;
    for (const auto& [id, value] : valueOf) {
      EXPECT_TRUE(idOf.emplace(value, id).second) << value << " has two ids";
    }
    for (const auto& [key, g] : index.groups(InterPodIndex::TermKind::RequiredAntiAffinity)) {
      if (g.term.topologyKey != topologyKey) continue;
      for (size_t p = 0; p < snapshot_.numNodes(); ++p) {
        const std::optional<std::string_view> value =
            snapshot_.nodeInfos()[p]->labels().find(topologyKey);
        auto byValue = value ? g.counts.find(*value) : g.counts.end();
        EXPECT_EQ(countOf(g.countsById, ids[p]), byValue == g.counts.end() ? 0 : byValue->second);
      }
    }
  }

  void expectAllAgree() {
    expectAgree(kZoneKey);
    expectAgree(kHostKey);
  }

  Snapshot snapshot_;
};

TEST_F(InterPodIndexIdsTest, CountsByIdMatchCountsByValue) {
  expectAllAgree();
  const InterPodIndex& index = snapshot_.interPodIndex();
  const std::vector<int32_t>& zones = index.topologyIds(kZoneKey);
  EXPECT_EQ(zones[0], zones[1]);  // n1 and n2 are both in z1
  EXPECT_NE(zones[0], zones[2]);
  EXPECT_EQ(zones[3], -1);  // "bare" has no zone
  const KeyCounts& webCounts = index.labelKeyCounts("default", "app", "web", kZoneKey);
  EXPECT_EQ(countOf(webCounts.byId, zones[0]), 3);  // a, b and r1
  EXPECT_EQ(countOf(webCounts.byId, zones[2]), 1);
}

TEST_F(InterPodIndexIdsTest, FollowsPodsAddedAndRemoved) {
  expectAllAgree();  // builds the columns and counts first, so that they are updated below
  ASSERT_TRUE(snapshot_.addPod("n3", web("d", "n3").info()));
  ASSERT_TRUE(snapshot_.addPod("n2", antiWeb("r2", "n2", kZoneKey).info()));
  expectAllAgree();
  ASSERT_TRUE(snapshot_.removePod("n1", *web("a", "n1").obj()));
  ASSERT_TRUE(snapshot_.removePod("n1", *web("r1", "n1").obj()));
  expectAllAgree();
}

TEST_F(InterPodIndexIdsTest, FollowsNodesRelabelledReplacedAndRemoved) {
  expectAllAgree();
  // n3 moves to z1: z2 has no node left, and its id may name a zone that comes later.
  auto moved = std::make_shared<NodeInfo>(*snapshot_.get("n3"));
  moved->setNode(zoned("n3", "z1"));
  snapshot_.addNodeInfo(moved);
  expectAllAgree();
  ASSERT_TRUE(snapshot_.removeNodeInfo("n1"));
  expectAllAgree();
  snapshot_.addNodeInfo(std::make_shared<NodeInfo>(zoned("n4", "z3")));
  ASSERT_TRUE(snapshot_.addPod("n4", web("e", "n4").info()));
  ASSERT_TRUE(snapshot_.addPod("n4", antiWeb("r3", "n4", kZoneKey).info()));
  expectAllAgree();
  ASSERT_TRUE(snapshot_.removeNodeInfo("bare"));
  snapshot_.addNodeInfo(std::make_shared<NodeInfo>(zoned("n5", "z2")));
  expectAllAgree();
}

TEST_F(InterPodIndexIdsTest, FindPositionRefusesCopiesAndOtherSnapshots) {
  const NodeInfo& n2 = *snapshot_.get("n2");
  EXPECT_EQ(snapshot_.findPosition(n2), 1);
  const NodeInfo copy(n2);
  EXPECT_EQ(snapshot_.findPosition(copy), -1);
  Snapshot other = test::makeSnapshot({zoned("n2", "z1")});
  EXPECT_EQ(other.findPosition(n2), -1);
  EXPECT_EQ(snapshot_.findPosition(*other.get("n2")), -1);
  // A NodeInfo added to a second snapshot takes that one's position; the first no longer finds
  // it by position, and its own index still counts it where it is.
  Snapshot second;
  second.addNodeInfo(snapshot_.nodeInfos()[1]);
  EXPECT_EQ(second.findPosition(n2), 0);
  EXPECT_EQ(snapshot_.findPosition(n2), -1);
  ASSERT_TRUE(snapshot_.addPod("n2", web("f", "n2").info()));
  const KeyCounts& webCounts =
      snapshot_.interPodIndex().labelKeyCounts("default", "app", "web", kHostKey);
  EXPECT_EQ(countOf(webCounts.byId, snapshot_.interPodIndex().topologyIds(kHostKey)[1]), 2);
}

}  // namespace
}  // namespace berth::framework
