// InterPodAffinity's and PodTopologySpread's PreFilterExtensions: PreFilter over a cluster, then
// AddPod of X on node N, must give the Filter verdicts PreFilter gives over the cluster with X on
// N; and PreFilter with X, then RemovePod of X, those of the cluster without X (what preemption's
// dry runs and the nominated-pods pass rely on).

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/registry.h"
#include "tests/support/builders.h"

namespace berth::plugins {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr const char* kHost = "kubernetes.io/hostname";
constexpr const char* kZone = "topology.kubernetes.io/zone";

api::PodAffinityTerm term(std::string key, std::string value, std::string topologyKey) {
  api::PodAffinityTerm t;
  t.labelSelector.emplace().matchLabels = {{std::move(key), std::move(value)}};
  t.topologyKey = std::move(topologyKey);
  return t;
}

test::PodWrapper withTerm(test::PodWrapper w, bool anti, api::PodAffinityTerm t) {
  return w.mutate([&](api::Pod& p) {
    auto& a = p.spec.affinity ? *p.spec.affinity : p.spec.affinity.emplace();
    auto& side = anti ? a.podAntiAffinity : a.podAffinity;
    (side ? *side : side.emplace()).requiredDuringSchedulingIgnoredDuringExecution.push_back(t);
  });
}

test::PodWrapper spread(test::PodWrapper w, int32_t maxSkew, std::string key, std::string value) {
  return w.mutate([&](api::Pod& p) {
    api::TopologySpreadConstraint c;
    c.maxSkew = maxSkew;
    c.topologyKey = kZone;
    c.whenUnsatisfiable = "DoNotSchedule";
    c.labelSelector.emplace().matchLabels = {{key, value}};
    p.spec.topologySpreadConstraints.push_back(c);
  });
}

test::PodWrapper pod(std::string name, std::string node) {
  return MakePod().name(name).uid(name).ns("default").node(std::move(node));
}

std::vector<api::NodePtr> nodes() {
  std::vector<api::NodePtr> out;
  for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
           {"n1", "z1"}, {"n2", "z1"}, {"n3", "z2"}, {"n4", "z2"}}) {
    out.push_back(MakeNode().name(name).label(kHost, name).label(kZone, zone).obj());
  }
  return out;
}

struct Row {
  std::string name;
  std::vector<api::PodPtr> existing;
  api::PodPtr incoming;
  api::PodPtr x;  // bound to its node
};

class Extensions : public ::testing::TestWithParam<Row> {
 protected:
  Extensions()
      : fw_(test::mustMakeFramework(test::profileWith(
            {test::plugin("InterPodAffinity"), test::plugin("PodTopologySpread")}))) {}

  // Each node's Filter verdict ("" fits, else plugin: reason), after PreFilter over `snapshot` and
  // then `update` of the state.
  template <typename F>
  std::vector<std::string> verdicts(const framework::Snapshot& snapshot, const api::PodPtr& pod,
                                    F&& update) const {
    framework::PodInfo info(pod);
    framework::CycleState state;
    state.setSnapshot(&snapshot);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    framework::Status pre = fw_->runPreFilterPlugins(state, info, result, rejectedBy);
    EXPECT_TRUE(pre.isSuccess()) << pre.message();
    framework::Status s = update(state, info);
    EXPECT_TRUE(s.isSuccess()) << s.message();
    std::vector<std::string> out;
    for (const auto& n : snapshot.nodeInfos()) {
      framework::Status f = fw_->runFilterPlugins(state, info, *n);
      out.push_back(f.isSuccess() ? "" : std::string(f.plugin()) + ": " + f.message());
    }
    return out;
  }

  framework::runtime::FrameworkPtr fw_;
};

TEST_P(Extensions, AddPodAndRemovePodGiveTheVerdictsOfPreFilterWithAndWithoutThePod) {
  const Row& row = GetParam();
  std::vector<api::PodPtr> withX = row.existing;
  withX.push_back(row.x);
  const framework::Snapshot without = test::makeSnapshot(nodes(), row.existing);
  const framework::Snapshot with = test::makeSnapshot(nodes(), withX);
  const framework::PodInfo x(row.x);
  auto nothing = [](framework::CycleState&, const framework::PodInfo&) {
    return framework::Status::success();
  };
  const std::vector<std::string> wantWith = verdicts(with, row.incoming, nothing);
  const std::vector<std::string> wantWithout = verdicts(without, row.incoming, nothing);
  ASSERT_NE(wantWith, wantWithout) << "the row should make X matter";

  const framework::NodeInfo& nodeWithout = *without.get(row.x->spec.nodeName);
  EXPECT_EQ(verdicts(without, row.incoming,
                     [&](framework::CycleState& state, const framework::PodInfo& info) {
                       return fw_->runPreFilterExtensionAddPod(state, info, x, nodeWithout);
                     }),
            wantWith);
  const framework::NodeInfo& nodeWith = *with.get(row.x->spec.nodeName);
  EXPECT_EQ(verdicts(with, row.incoming,
                     [&](framework::CycleState& state, const framework::PodInfo& info) {
                       return fw_->runPreFilterExtensionRemovePod(state, info, x, nodeWith);
                     }),
            wantWithout);
}

std::vector<Row> rows() {
  const bool anti = true;
  const bool affinity = false;
  return {
      {"IncomingAntiAffinityOnHostname",
       {pod("web-0", "n2").label("app", "web").obj()},
       withTerm(MakePod().name("in").ns("default"), anti, term("app", "web", kHost)).obj(),
       pod("x", "n1").label("app", "web").obj()},
      {"IncomingAntiAffinityOnZone",
       {},
       withTerm(MakePod().name("in").ns("default"), anti, term("app", "web", kZone)).obj(),
       pod("x", "n3").label("app", "web").obj()},
      {"IncomingAffinityGainsADomain",
       {pod("db-0", "n1").label("app", "db").obj()},
       withTerm(MakePod().name("in").ns("default"), affinity, term("app", "db", kZone)).obj(),
       pod("x", "n4").label("app", "db").obj()},
      {"IncomingAffinityFirstPodException",
       {},
       withTerm(MakePod().name("in").ns("default").label("app", "db"), affinity,
                term("app", "db", kZone))
           .obj(),
       pod("x", "n2").label("app", "db").obj()},
      {"IncomingAffinityOfTwoTerms",
       {pod("db-0", "n1").label("app", "db").label("tier", "a").obj()},
       withTerm(withTerm(MakePod().name("in").ns("default"), affinity, term("app", "db", kZone)),
                affinity, term("tier", "a", kHost))
           .obj(),
       pod("x", "n3").label("app", "db").label("tier", "a").obj()},
      {"ExistingPodsAntiAffinity",
       {withTerm(pod("other", "n4"), anti, term("app", "nothing", kHost)).obj()},
       // Its own term keeps PreFilter from skipping the plugin, as no existing term matches it.
       withTerm(MakePod().name("in").ns("default").label("app", "web"), anti,
                term("app", "nothing", kHost))
           .obj(),
       withTerm(pod("x", "n1"), anti, term("app", "web", kZone)).obj()},
      {"SpreadSkewOnZones",
       {pod("web-0", "n1").label("app", "web").obj(), pod("web-1", "n3").label("app", "web").obj()},
       spread(MakePod().name("in").ns("default").label("app", "web"), 1, "app", "web").obj(),
       pod("x", "n4").label("app", "web").obj()},
  };
}

INSTANTIATE_TEST_SUITE_P(InterPod, Extensions, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& info) { return info.param.name; });

}  // namespace
}  // namespace berth::plugins
