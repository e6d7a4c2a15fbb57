// The equivalence cache with PodTopologySpread (not node-local) in the default profile: pods with
// spread constraints, mixed with plain ones, are placed exactly as when every node is evaluated
// from scratch, and the zone skew of the spread pods never exceeds their maxSkew.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "tests/support/builders.h"

namespace berth::algorithm {
namespace {

using test::MakeNode;
using test::MakePod;

api::TopologySpreadConstraint spreadOver(std::string key, int32_t maxSkew, std::string action) {
  api::TopologySpreadConstraint c;
  c.maxSkew = maxSkew;
  c.topologyKey = std::move(key);
  c.whenUnsatisfiable = std::move(action);
  c.labelSelector.emplace().matchLabels = {{"app", "spread"}};
  return c;
}

TEST(EquivalenceWithTopologySpread, ReusingResultsDecidesAsEvaluatingEveryNode) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < 30; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes.push_back(MakeNode()
                        .name(name)
                        .label("kubernetes.io/hostname", name)
                        .label("zone", "z" + std::to_string(i % 3))
                        .allocatable({{"cpu", std::to_string(2 + i % 4)}, {"pods", "20"}})
                        .obj());
  }
  auto reusedSnap = test::makeSnapshot(nodes);
  auto freshSnap = test::makeSnapshot(nodes);
  const auto profile = config::defaultConfiguration().profiles[0];
  auto reusingFw = test::mustMakeFramework(profile);
  auto evaluatingFw = test::mustMakeFramework(profile);
  util::Parallelizer two(2);
  GenericScheduler reusing(two, 5, 100, /*reuseEquivalentResults=*/true);
  GenericScheduler evaluating(two, 5, 100, /*reuseEquivalentResults=*/false);

  std::map<std::string, int> spreadPerZone;
  int placed = 0;
  for (int i = 0; i < 150; ++i) {
    SCOPED_TRACE("pod " + std::to_string(i));
    auto w = MakePod().name("p" + std::to_string(i)).uid("u" + std::to_string(i));
    const bool spread = i % 3 != 2;
    if (spread) {
      w.label("app", "spread").req({{"cpu", "200m"}}).mutate([](api::Pod& p) {
        p.spec.topologySpreadConstraints = {
            spreadOver("zone", 1, "DoNotSchedule"),
            spreadOver("kubernetes.io/hostname", 1, "ScheduleAnyway")};
      });
    } else {
      w.label("app", "plain").req({{"cpu", "500m"}});
    }
    auto pod = w.obj();
    framework::CycleState stateA;
    framework::CycleState stateB;
    framework::PodInfo info(pod);
    auto a = reusing.schedulePod(*reusingFw, stateA, info, reusedSnap);
    auto b = evaluating.schedulePod(*evaluatingFw, stateB, info, freshSnap);
    ASSERT_EQ(a.status.code(), b.status.code()) << a.status.message();
    ASSERT_EQ(a.node, b.node);
    EXPECT_EQ(a.scores.totals, b.scores.totals);
    if (a.node.empty()) continue;
    ++placed;
    if (spread) {
      ++spreadPerZone[std::string(reusedSnap.get(a.node)->labels().find("zone").value_or(""))];
      const auto [lo, hi] =
          std::minmax_element(spreadPerZone.begin(), spreadPerZone.end(),
                              [](const auto& x, const auto& y) { return x.second < y.second; });
      // A zone without spread pods yet counts 0.
      const int least = spreadPerZone.size() < 3 ? 0 : lo->second;
      EXPECT_LE(hi->second - least, 1);
    }
    auto bound = std::make_shared<api::Pod>(*pod);
    bound->spec.nodeName = a.node;
    reusedSnap.addPod(a.node, framework::makePodInfo(bound));
    freshSnap.addPod(a.node, framework::makePodInfo(bound));
  }
  EXPECT_GT(placed, 100);
  EXPECT_EQ(spreadPerZone.size(), 3u);
}

}  // namespace
}  // namespace berth::algorithm
