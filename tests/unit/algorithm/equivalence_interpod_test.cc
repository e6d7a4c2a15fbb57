// The equivalence cache with both inter-pod plugins of the default profile at once: a stream that
// mixes plain pods (equivalent to each other, so results are reused) with pods carrying required
// and preferred (anti-)affinity and topology spread constraints, over 50 nodes, is placed exactly
// as when every node is evaluated from scratch, including which pods fit nowhere and why.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "tests/support/builders.h"

namespace berth::algorithm {
namespace {

using test::MakeNode;
using test::MakePod;

api::PodAffinityTerm selecting(const std::string& app, std::string topologyKey) {
  api::PodAffinityTerm t;
  t.labelSelector.emplace().matchLabels = {{"app", app}};
  t.topologyKey = std::move(topologyKey);
  return t;
}

api::TopologySpreadConstraint spreadOf(const std::string& app, std::string key,
                                       std::string action) {
  api::TopologySpreadConstraint c;
  c.maxSkew = 1;
  c.topologyKey = std::move(key);
  c.whenUnsatisfiable = std::move(action);
  c.labelSelector.emplace().matchLabels = {{"app", app}};
  return c;
}

// Pod i of the stream: half plain, the rest cycling through the inter-pod kinds.
api::PodPtr streamPod(int i) {
  auto w = MakePod().name("p" + std::to_string(i)).uid("u" + std::to_string(i));
  switch (i % 10) {
    case 1:  // one per node, so the 51st and later find no node
      return w.label("app", "web")
          .req({{"cpu", "100m"}})
          .mutate([](api::Pod& p) {
            p.spec.affinity.emplace()
                .podAntiAffinity.emplace()
                .requiredDuringSchedulingIgnoredDuringExecution = {
                selecting("web", "kubernetes.io/hostname")};
          })
          .obj();
    case 3:  // in a zone that runs web
      return w.label("app", "db")
          .req({{"cpu", "300m"}})
          .mutate([](api::Pod& p) {
            p.spec.affinity.emplace()
                .podAffinity.emplace()
                .requiredDuringSchedulingIgnoredDuringExecution = {selecting("web", "zone")};
          })
          .obj();
    case 5:  // spread over zones (hard) and hosts (soft)
      return w.label("app", "spread")
          .req({{"cpu", "200m"}})
          .mutate([](api::Pod& p) {
            p.spec.topologySpreadConstraints = {
                spreadOf("spread", "zone", "DoNotSchedule"),
                spreadOf("spread", "kubernetes.io/hostname", "ScheduleAnyway")};
          })
          .obj();
    case 7:  // rather away from other caches, rather near a db
      return w.label("app", "cache")
          .req({{"cpu", "250m"}})
          .mutate([](api::Pod& p) {
            api::Affinity& a = p.spec.affinity.emplace();
            a.podAntiAffinity.emplace().preferredDuringSchedulingIgnoredDuringExecution = {
                {80, selecting("cache", "kubernetes.io/hostname")}};
            a.podAffinity.emplace().preferredDuringSchedulingIgnoredDuringExecution = {
                {20, selecting("db", "zone")}};
          })
          .obj();
    default:  // plain, all alike: the pods the cache serves
      return w.label("app", "plain").req({{"cpu", "500m"}}).obj();
  }
}

TEST(EquivalenceWithInterPodConstraints, ReusingResultsDecidesAsEvaluatingEveryNode) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 50; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes.push_back(MakeNode()
                        .name(name)
                        .label("kubernetes.io/hostname", name)
                        .label("zone", "z" + std::to_string(i % 5))
                        .allocatable({{"cpu", std::to_string(3 + i % 4)}, {"pods", "30"}})
                        .obj());
  }
  auto reusedSnap = test::makeSnapshot(nodes);
  auto freshSnap = test::makeSnapshot(nodes);
  const auto profile = config::defaultConfiguration().profiles[0];
  auto reusingFw = test::mustMakeFramework(profile);
  auto evaluatingFw = test::mustMakeFramework(profile);
  util::Parallelizer two(2);
  GenericScheduler reusing(two, 11, 100, /*reuseEquivalentResults=*/true);
  GenericScheduler evaluating(two, 11, 100, /*reuseEquivalentResults=*/false);

  int placed = 0;
  int rejected = 0;
  for (int i = 0; i < 700; ++i) {
    SCOPED_TRACE("pod " + std::to_string(i));
    const api::PodPtr pod = streamPod(i);
    framework::CycleState stateA;
    framework::CycleState stateB;
    framework::PodInfo info(pod);
    auto a = reusing.schedulePod(*reusingFw, stateA, info, reusedSnap);
    auto b = evaluating.schedulePod(*evaluatingFw, stateB, info, freshSnap);
    ASSERT_TRUE(a.status.isSuccess() || a.fitError) << a.status.message();
    ASSERT_EQ(a.status.code(), b.status.code()) << a.status.message();
    ASSERT_EQ(a.node, b.node);
    EXPECT_EQ(a.scores.totals, b.scores.totals);
    ASSERT_EQ(a.fitError.has_value(), b.fitError.has_value());
    if (a.fitError) {
      EXPECT_EQ(a.fitError->message(), b.fitError->message());
      ++rejected;
      continue;
    }
    ++placed;
    auto bound = std::make_shared<api::Pod>(*pod);
    bound->spec.nodeName = a.node;
    reusedSnap.addPod(a.node, framework::makePodInfo(bound));
    freshSnap.addPod(a.node, framework::makePodInfo(bound));
  }
  // Enough of both for the comparison to mean something: the web replicas beyond 50 and, once
  // the cluster fills up, plain pods too find no node.
  EXPECT_GT(placed, 300);
  EXPECT_GT(rejected, 20);
}

}  // namespace
}  // namespace berth::algorithm
