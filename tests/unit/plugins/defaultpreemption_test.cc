// DefaultPreemption: the intent of upstream's default_preemption_test.go rows (victim selection,
// reprieve, PodDisruptionBudgets, the node-picking criteria, eligibility, candidate nodes, args),
// through the real runtime and GenericScheduler over a real Snapshot, with NodeResourcesFit and
// NodePorts as the filters that preemption can satisfy.

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/log/log.h"
#include "pkg/plugins/defaultpreemption/default_preemption.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/random.h"
#include "tests/support/builders.h"

namespace berth::plugins::defaultpreemption {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

api::NodePtr node(const std::string& name, const std::string& cpu = "3") {
  return MakeNode().name(name).allocatable({{"cpu", cpu}, {"pods", "110"}}).obj();
}

// A bound pod: priority, cpu, start time (seconds; 0 = not started).
test::PodWrapper bound(const std::string& name, const std::string& onNode, int32_t priority,
                       const std::string& cpu = "1", int64_t startSeconds = 0) {
  auto p = MakePod().name(name).uid(name).node(onNode).priority(priority).req({{"cpu", cpu}});
  if (startSeconds != 0) {
    p.mutate([&](api::Pod& pod) { pod.status.startTime = api::Timestamp{startSeconds * 1000000}; });
  }
  return p;
}

api::PodDisruptionBudgetPtr pdb(const std::string& name, api::StringMap matchLabels,
                                int32_t allowed, api::StringMap disrupted = {}) {
  auto b = std::make_shared<api::PodDisruptionBudget>();
  b->metadata.name = name;
  b->metadata.namespace_ = "default";
  b->selector = api::LabelSelector{.matchLabels = std::move(matchLabels), .matchExpressions = {}};
  b->disruptionsAllowed = allowed;
  b->disruptedPods = std::move(disrupted);
  return b;
}

struct Outcome {
  framework::Status status;
  framework::PostFilterResult result;
  std::vector<std::string> victims() const {
    std::vector<std::string> names;
    for (const auto& v : result.victims) names.push_back(v->pod->metadata.name);
    return names;
  }
};

// One scheduling attempt that fails, then PostFilter, as the scheduler runs them.
class Preemption {
 public:
  Preemption(std::vector<api::NodePtr> nodes, std::vector<api::PodPtr> pods,
             std::vector<api::PodDisruptionBudgetPtr> pdbs = {}, double draw = 0,
             nlohmann::ordered_json args = nullptr)
      : random_(draw), snapshot_(test::makeSnapshot(nodes, pods)) {
    for (auto& b : pdbs) objects_.upsert(std::move(b));
    config::Profile profile = test::profileWith(
        {test::plugin("TaintToleration"), test::plugin("NodeAffinity"), test::plugin("NodePorts"),
         test::plugin("NodeResourcesFit"), test::plugin("DefaultPreemption")});
    if (!args.is_null()) {
      profile.pluginConfig.push_back(
          {"DefaultPreemption", std::move(args), "profiles[0].pluginConfig[0].args"});
    }
    framework::Handle handle{.binder = nullptr, .objects = &objects_, .random = &random_};
    auto fw = framework::runtime::Framework::create(registry_, profile, handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    fw_ = std::move(*fw);
  }

  Outcome run(const api::PodPtr& pod) {
    util::Parallelizer parallelizer(1);
    algorithm::GenericScheduler scheduler(parallelizer, 1, 100);
    framework::CycleState state;
    auto info = framework::makePodInfo(pod);
    auto out = scheduler.schedulePod(*fw_, state, *info, snapshot_);
    EXPECT_FALSE(out.status.isSuccess()) << "the pod fits without preemption";
    Outcome o;
    o.status = fw_->runPostFilterPlugins(state, *info, out.diagnosis, o.result);
    return o;
  }

  // selectVictimsOnNode on a copy of one node, after PreFilter.
  Victims victimsOn(const api::PodPtr& pod, const std::string& nodeName, framework::Status& s) {
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    auto info = framework::makePodInfo(pod);
    framework::PreFilterResult pre;
    std::set<std::string> rejectedBy;
    EXPECT_TRUE(fw_->runPreFilterPlugins(state, *info, pre, rejectedBy).isSuccess());
    framework::NodeInfo copy = *snapshot_.get(nodeName);
    Victims v;
    s = selectVictimsOnNode(*fw_, &objects_, state, *info, copy, v);
    return v;
  }

 private:
  framework::runtime::Registry registry_ = makeInTreeRegistry();
  framework::ClusterObjectStore objects_;
  util::FakeRandom random_;
  framework::Snapshot snapshot_;
  framework::runtime::FrameworkPtr fw_;
};

api::PodPtr preemptor(int32_t priority, const std::string& cpu = "2") {
  return MakePod().name("preemptor").uid("preemptor").priority(priority).req({{"cpu", cpu}}).obj();
}

struct VictimCase {
  const char* name;
  std::vector<api::PodPtr> pods;  // all on n1 (cpu 3)
  api::PodPtr pod;
  std::vector<std::string> wantVictims;  // empty: no preemption
  std::string wantMessage;               // when no preemption
};

TEST(DefaultPreemption, SelectsAndReprievesVictimsByImportance) {
  const std::vector<VictimCase> cases = {
      {"the most important lower-priority pod is reprieved, the others are victims",
       {bound("p1", "n1", 1).obj(), bound("p2", "n1", 2).obj(), bound("p3", "n1", 3).obj()},
       preemptor(10),
       {"p2", "p1"},
       ""},
      {"equal and higher priority pods are never victims",
       {bound("same", "n1", 10, "2").obj(), bound("higher", "n1", 20).obj()},
       preemptor(10),
       {},
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
      {"a pod without priority counts as priority 0 and preempts no pod of priority 0",
       {MakePod().name("none").uid("none").node("n1").req({{"cpu", "3"}}).obj()},
       MakePod().name("preemptor").uid("preemptor").req({{"cpu", "2"}}).obj(),
       {},
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
      {"a node that does not fit even without its lower-priority pods is no candidate",
       {bound("big", "n1", 20, "2").obj(), bound("low", "n1", 1).obj()},
       preemptor(10),
       {},
       "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
      {"among equal priorities the pod that started first is reprieved first",
       {bound("late", "n1", 1, "1", 200).obj(), bound("early", "n1", 1, "1", 100).obj(),
        bound("unstarted", "n1", 1, "1").obj()},
       preemptor(10),
       {"late", "unstarted"},
       ""},
      {"only as many victims as the pod needs",
       {bound("a", "n1", 1).obj(), bound("b", "n1", 1).obj(), bound("c", "n1", 1).obj()},
       preemptor(10, "1"),
       {"c"},
       ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Preemption p({node("n1")}, c.pods);
    Outcome o = p.run(c.pod);
    if (c.wantVictims.empty()) {
      EXPECT_EQ(o.status.code(), Code::Unschedulable);
      EXPECT_EQ(o.status.message(), c.wantMessage);
      EXPECT_EQ(o.status.plugin(), "DefaultPreemption");
      EXPECT_TRUE(o.result.nominatedNode.empty());
    } else {
      ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
      EXPECT_EQ(o.result.nominatedNode, "n1");
      EXPECT_EQ(o.victims(), c.wantVictims);
    }
  }
}

TEST(DefaultPreemption, HostPortsAreFreedByVictims) {
  Preemption p({node("n1")}, {bound("holder", "n1", 1, "0").hostPort(8080).obj()});
  Outcome o = p.run(MakePod().name("preemptor").priority(5).hostPort(8080).obj());
  ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
  EXPECT_EQ(o.victims(), std::vector<std::string>{"holder"});
}

struct PdbCase {
  const char* name;
  std::vector<api::PodDisruptionBudgetPtr> pdbs;
  std::vector<std::string> wantVictims;
  int64_t wantViolations;
};

// n1 (cpu 2) runs a (priority 1, app=a) and b (priority 2, app=b); the preemptor needs one cpu.
TEST(DefaultPreemption, CountsPodDisruptionBudgetsAndReprievesViolatingVictimsFirst) {
  const std::vector<PdbCase> cases = {
      {"without budgets the more important pod is reprieved", {}, {"a"}, 0},
      {"a pod whose budget allows no disruption is reprieved first",
       {pdb("protect-a", {{"app", "a"}}, 0)},
       {"b"},
       0},
      {"a budget that allows a disruption does not protect",
       {pdb("allow-a", {{"app", "a"}}, 1)},
       {"a"},
       0},
      {"a pod already in disruptedPods is not counted again",
       {pdb("protect-a", {{"app", "a"}}, 0, {{"a", "2026-01-01T00:00:00Z"}})},
       {"a"},
       0},
      {"when both are protected the violating victim is counted",
       {pdb("protect-a", {{"app", "a"}}, 0), pdb("protect-b", {{"app", "b"}}, 0)},
       {"a"},
       1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Preemption p(
        {node("n1", "2")},
        {bound("a", "n1", 1).label("app", "a").obj(), bound("b", "n1", 2).label("app", "b").obj()},
        c.pdbs);
    framework::Status s;
    Victims v = p.victimsOn(preemptor(10, "1"), "n1", s);
    ASSERT_TRUE(s.isSuccess()) << s.message();
    std::vector<std::string> names;
    for (const auto& pod : v.pods) names.push_back(pod->pod->metadata.name);
    EXPECT_EQ(names, c.wantVictims);
    EXPECT_EQ(v.numPDBViolations, c.wantViolations);
  }
}

TEST(DefaultPreemption, BudgetWithInvalidSelectorProtectsNothing) {
  auto bad = std::make_shared<api::PodDisruptionBudget>(*pdb("bad", {}, 0));
  bad->selector = api::LabelSelector{
      .matchLabels = {}, .matchExpressions = {{.key = "app", .op = "Bogus", .values = {"a"}}}};
  Preemption p({node("n1", "1")}, {bound("a", "n1", 1).label("app", "a").obj()}, {bad});
  framework::Status s;
  Victims v = p.victimsOn(preemptor(10, "1"), "n1", s);
  ASSERT_TRUE(s.isSuccess()) << s.message();
  EXPECT_EQ(v.numPDBViolations, 0);
}

// Upstream skips a budget whose selector does not parse; berth also says so, once per budget.
TEST(DefaultPreemption, BudgetWithInvalidSelectorIsSkippedAndLoggedOnce) {
  // Fresh uids, so that a repeated run (--gtest_repeat) sees objects not logged yet.
  static int runs = 0;
  const std::string uid = std::to_string(++runs);
  auto badOperator = std::make_shared<api::PodDisruptionBudget>(*pdb("bad-operator", {}, 0));
  badOperator->metadata.uid = "bad-operator-" + uid;
  badOperator->selector =
      api::LabelSelector{.matchLabels = {{"app", "a"}},
                         .matchExpressions = {{.key = "tier", .op = "Exists", .values = {}},
                                              {.key = "app", .op = "Foo", .values = {"a"}}}};
  auto badValue =
      std::make_shared<api::PodDisruptionBudget>(*pdb("bad-value", {{"app", "not a value!"}}, 0));
  badValue->metadata.uid = "bad-value-" + uid;
  // A valid budget beside them still protects its pod.
  auto valid = pdb("protect-b", {{"app", "b"}}, 0);
  Preemption p({node("n1", "2"), node("n2", "2")},
               {bound("a", "n1", 1, "2").label("app", "a").label("tier", "web").obj(),
                bound("b", "n2", 1, "2").label("app", "b").obj()},
               {badOperator, badValue, valid});

  log::configure(log::Format::Text, 0);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    Outcome o = p.run(preemptor(10, "2"));
    ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
    EXPECT_EQ(o.result.nominatedNode, "n1");  // n2's pod is protected; n1's budgets are skipped
    EXPECT_EQ(o.victims(), std::vector<std::string>{"a"});
  }
  const std::string logged = testing::internal::GetCapturedStderr();

  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = logged.find(needle); at != std::string::npos;
         at = logged.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("PodDisruptionBudget has an invalid selector"), 2u) << logged;
  EXPECT_EQ(count(R"(podDisruptionBudget="default/bad-operator" )"
                  R"(field="spec.selector.matchExpressions[1]")"),
            1u)
      << logged;
  EXPECT_EQ(count(R"(is not a valid pod selector operator)"), 1u) << logged;
  EXPECT_EQ(count(R"(podDisruptionBudget="default/bad-value" field="spec.selector.matchLabels")"),
            1u)
      << logged;
  EXPECT_EQ(count("protect-b"), 0u) << logged;
}

TEST(DefaultPreemption, PodWithoutPriorityIsAVictimOfAnyHigherPriority) {
  Preemption p({node("n1", "2")},
               {MakePod().name("none").uid("none").node("n1").req({{"cpu", "2"}}).obj()});
  Outcome o = p.run(preemptor(1, "2"));
  ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
  EXPECT_EQ(o.result.nominatedNode, "n1");
  EXPECT_EQ(o.victims(), std::vector<std::string>{"none"});
}

TEST(DefaultPreemption, PrefersTheNodeWhereNoBudgetIsViolated) {
  Preemption p({node("n1", "1"), node("n2", "1")},
               {bound("protected", "n1", 1).label("app", "db").obj(),
                bound("free", "n2", 5).label("app", "web").obj()},
               {pdb("db", {{"app", "db"}}, 0)});
  Outcome o = p.run(preemptor(10, "1"));
  ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
  EXPECT_EQ(o.result.nominatedNode, "n2");
  EXPECT_EQ(o.victims(), std::vector<std::string>{"free"});
}

// --- pickOneNodeForPreemption ------------------------------------------------------------------

framework::PodInfoPtr victim(int32_t priority, int64_t startSeconds = 0) {
  return bound("v", "n", priority, "1", startSeconds).info();
}

struct PickCase {
  const char* name;
  std::vector<Victims> candidates;  // nodes n0, n1, ...
  size_t want;
};

TEST(DefaultPreemption, PicksTheNodeByUpstreamCriteriaInOrder) {
  const std::vector<PickCase> cases = {
      {"fewest PDB violations first",
       {{{victim(1)}, 2}, {{victim(9), victim(9), victim(9)}, 1}, {{victim(5)}, 3}},
       1},
      {"then the lowest most important victim",
       {{{victim(5), victim(1)}, 0}, {{victim(3), victim(3), victim(3)}, 0}},
       1},
      {"then the smallest sum of priorities",
       {{{victim(3), victim(2)}, 0}, {{victim(3), victim(1)}, 0}},
       1},
      {"each victim adds to the sum, whatever its priority",
       {{{victim(3), victim(-5)}, 0}, {{victim(3)}, 0}},
       1},
      {"negative priorities sum sanely", {{{victim(-1), victim(-1)}, 0}, {{victim(-1)}, 0}}, 1},
      {"then the fewest victims (sums tie only at the extremes of int32)",
       {{{victim(5), victim(std::numeric_limits<int32_t>::min())}, 0}, {{victim(5)}, 0}},
       1},
      {"then the latest start among the most important victims",
       {{{victim(3, 100), victim(1, 900)}, 0}, {{victim(3, 200), victim(1, 50)}, 0}},
       1},
      {"a victim not started yet counts as the latest start",
       {{{victim(3, 500)}, 0}, {{victim(3)}, 0}},
       1},
      {"still tied: the first candidate", {{{victim(3, 100)}, 0}, {{victim(3, 100)}, 0}}, 0},
  };
  const std::vector<std::string> names = {"n0", "n1", "n2"};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < c.candidates.size(); ++i)
      candidates.push_back({names[i], c.candidates[i]});
    EXPECT_EQ(pickOneNodeForPreemption(candidates), c.want);
  }
}

// --- Eligibility and candidate nodes -----------------------------------------------------------

TEST(DefaultPreemption, PreemptionPolicyNeverIsNotEligible) {
  Preemption p({node("n1")}, {bound("low", "n1", 1, "3").obj()});
  auto pod = MakePod().name("never").priority(10).req({{"cpu", "2"}}).mutate([](api::Pod& p) {
    p.spec.preemptionPolicy = "Never";
  });
  Outcome o = p.run(pod.obj());
  EXPECT_EQ(o.status.code(), Code::Unschedulable);
  EXPECT_EQ(o.status.message(), "preemption: not eligible due to preemptionPolicy=Never.");
  EXPECT_TRUE(o.result.victims.empty());
}

api::PodPtr terminatingVictim(const std::string& reason) {
  return bound("terminating", "n1", 1, "3")
      .mutate([&](api::Pod& p) {
        p.metadata.deletionTimestamp = api::Timestamp{1};
        p.status.conditions.push_back({.type = "DisruptionTarget",
                                       .status = "True",
                                       .reason = reason,
                                       .message = "",
                                       .lastTransitionTime = std::nullopt});
      })
      .obj();
}

TEST(DefaultPreemption, WaitsForAVictimTerminatingOnTheNominatedNode) {
  auto pod = MakePod().name("preemptor").priority(10).req({{"cpu", "2"}}).nominatedNode("n1");
  {
    Preemption p({node("n1")}, {terminatingVictim("PreemptionByScheduler")});
    Outcome o = p.run(pod.obj());
    EXPECT_EQ(o.status.message(),
              "preemption: not eligible due to a terminating pod on the nominated node.");
  }
  {
    SCOPED_TRACE("a pod deleted for another reason does not hold preemption back");
    Preemption p({node("n1")}, {terminatingVictim("DeletionByTaintManager")});
    Outcome o = p.run(pod.obj());
    EXPECT_TRUE(o.status.isSuccess()) << o.status.message();
  }
  {
    SCOPED_TRACE("a nominated node the filters rule out is preempted for again");
    auto tainted = MakeNode()
                       .name("n1")
                       .taint("dedicated", "x", "NoSchedule")
                       .allocatable({{"cpu", "3"}, {"pods", "110"}})
                       .obj();
    Preemption p({tainted, node("n2")},
                 {terminatingVictim("PreemptionByScheduler"), bound("low", "n2", 1, "3").obj()});
    Outcome o = p.run(pod.obj());
    ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
    EXPECT_EQ(o.result.nominatedNode, "n2");
  }
}

TEST(DefaultPreemption, UnresolvableNodesAreNeverCandidates) {
  auto tainted = MakeNode()
                     .name("tainted")
                     .taint("dedicated", "x", "NoSchedule")
                     .allocatable({{"cpu", "3"}, {"pods", "110"}})
                     .obj();
  {
    Preemption p({tainted}, {bound("low", "tainted", 1, "3").obj()});
    Outcome o = p.run(preemptor(10));
    EXPECT_EQ(o.status.code(), Code::Unschedulable);
    EXPECT_EQ(o.status.message(),
              "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  }
  {
    SCOPED_TRACE("the resolvable node is the candidate");
    Preemption p({tainted, node("n2")},
                 {bound("low", "tainted", 1, "3").obj(), bound("low2", "n2", 1, "3").obj()});
    Outcome o = p.run(preemptor(10));
    ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
    EXPECT_EQ(o.result.nominatedNode, "n2");
    EXPECT_EQ(o.victims(), std::vector<std::string>{"low2"});
  }
}

TEST(DefaultPreemption, NodesPreFilterLeftOutTakeTheAbsentNodesStatus) {
  // NodeAffinity's matchFields narrows the cycle to n2: n1 is never evaluated, and its absent
  // status (UnschedulableAndUnresolvable) keeps it out of the dry runs.
  auto pod = MakePod().name("preemptor").priority(10).req({{"cpu", "2"}}).matchFieldsName({"n2"});
  {
    Preemption p({node("n1"), node("n2")},
                 {bound("low1", "n1", 1, "3").obj(), bound("low2", "n2", 1, "3").obj()});
    Outcome o = p.run(pod.obj());
    ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
    EXPECT_EQ(o.result.nominatedNode, "n2");
    EXPECT_EQ(o.victims(), std::vector<std::string>{"low2"});
  }
  {
    Preemption p({node("n1"), node("n2")},
                 {bound("low1", "n1", 1, "3").obj(), bound("high", "n2", 20, "3").obj()});
    Outcome o = p.run(pod.obj());
    EXPECT_EQ(o.status.message(),
              "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming "
              "pod, 1 Preemption is not helpful for scheduling.");
  }
}

// Upstream clears a preemptor's nomination when no node is a candidate, and keeps it when the pod
// is merely not eligible to preempt (or preempts).
TEST(DefaultPreemption, ClearsTheNominationOnlyWhenNoNodeIsACandidate) {
  struct Row {
    const char* name;
    std::vector<api::NodePtr> nodes;
    std::vector<api::PodPtr> pods;
    test::PodWrapper pod;
    Code wantCode;
    bool wantClear;
  };
  auto tainted = MakeNode()
                     .name("n1")
                     .taint("dedicated", "x", "NoSchedule")
                     .allocatable({{"cpu", "3"}, {"pods", "110"}})
                     .obj();
  auto nominated = [](int32_t priority) {
    return MakePod().name("preemptor").priority(priority).req({{"cpu", "2"}}).nominatedNode("n1");
  };
  const std::vector<Row> rows = {
      {"no node preemption could help",
       {tainted},
       {bound("low", "n1", 1, "3").obj()},
       nominated(10),
       Code::Unschedulable,
       true},
      {"no victims on any node",
       {node("n1")},
       {bound("high", "n1", 20, "3").obj()},
       nominated(10),
       Code::Unschedulable,
       true},
      {"not eligible: a victim is still terminating on the nominated node",
       {node("n1")},
       {terminatingVictim("PreemptionByScheduler")},
       nominated(10),
       Code::Unschedulable,
       false},
      {"not eligible: preemptionPolicy Never",
       {node("n1")},
       {bound("low", "n1", 1, "3").obj()},
       nominated(10).mutate([](api::Pod& p) { p.spec.preemptionPolicy = "Never"; }),
       Code::Unschedulable,
       false},
      {"a candidate is found",
       {node("n1")},
       {bound("low", "n1", 1, "3").obj()},
       nominated(10),
       Code::Success,
       false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    Preemption p(row.nodes, row.pods);
    Outcome o = p.run(row.pod.obj());
    EXPECT_EQ(o.status.code(), row.wantCode) << o.status.message();
    EXPECT_EQ(o.result.clearNomination, row.wantClear);
  }
}

TEST(DefaultPreemption, NestedFitErrorCountsEachNodesReason) {
  Preemption p({node("n1"), node("n2"), node("n3")},
               {bound("high", "n1", 20, "3").obj(), bound("same", "n2", 10, "3").obj(),
                bound("big", "n3", 20, "2").obj(), bound("low", "n3", 1).obj()});
  Outcome o = p.run(preemptor(10));
  EXPECT_EQ(o.status.message(),
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims "
            "found for incoming pod.");
}

TEST(DefaultPreemption, DryRunsStartAtARandomNodeAndStopAfterEnoughCandidates) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "n1"}, {0.4, "n2"}, {0.99, "n3"}};
  for (const auto& [draw, want] : cases) {
    SCOPED_TRACE(want);
    Preemption p({node("n1"), node("n2"), node("n3")},
                 {bound("a", "n1", 1, "3").obj(), bound("b", "n2", 1, "3").obj(),
                  bound("c", "n3", 1, "3").obj()},
                 {}, draw,
                 nlohmann::ordered_json{{"minCandidateNodesPercentage", 0},
                                        {"minCandidateNodesAbsolute", 1}});
    Outcome o = p.run(preemptor(10));
    ASSERT_TRUE(o.status.isSuccess()) << o.status.message();
    EXPECT_EQ(o.result.nominatedNode, want);
  }
}

TEST(DefaultPreemption, NumberOfCandidates) {
  struct Row {
    int32_t percentage, absolute, nodes, want;
  };
  for (const Row& r : std::vector<Row>{{10, 100, 50, 50},
                                       {10, 100, 5000, 500},
                                       {10, 100, 500, 100},
                                       {0, 1, 30, 1},
                                       {100, 0, 7, 7},
                                       {50, 0, 7, 3}}) {
    EXPECT_EQ(numCandidates({r.percentage, r.absolute}, r.nodes), r.want)
        << r.percentage << "% " << r.absolute << " of " << r.nodes;
  }
}

// --- Args ----------------------------------------------------------------------------------------

TEST(DefaultPreemptionArgs, DefaultsAndValidation) {
  struct Row {
    const char* name;
    const char* json;
    std::string wantError;  // empty: valid
    int32_t wantPercentage = 10;
    int32_t wantAbsolute = 100;
  };
  const std::vector<Row> rows = {
      {"defaults", "{}", "", 10, 100},
      {"both set", R"({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 5})", "", 20,
       5},
      {"percentage above 100", R"({"minCandidateNodesPercentage": 101})",
       "args.minCandidateNodesPercentage: not in valid range [0, 100], got 101"},
      {"negative percentage", R"({"minCandidateNodesPercentage": -1})",
       "args.minCandidateNodesPercentage: not in valid range [0, 100], got -1"},
      {"negative absolute", R"({"minCandidateNodesAbsolute": -1})",
       "args.minCandidateNodesAbsolute: not in valid range [0, inf), got -1"},
      {"both zero", R"({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})",
       "args.minCandidateNodesPercentage: cannot be zero at the same time as "
       "minCandidateNodesAbsolute, got 0"},
      {"unknown field", R"({"minCandidates": 1})", "args.minCandidates: unknown field"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    config::Decoder d;
    DefaultPreemptionArgs args;
    decodeDefaultPreemptionArgs(d, config::Json::parse(r.json), "args", args);
    if (r.wantError.empty()) {
      ASSERT_FALSE(d.failed()) << d.error();
      EXPECT_EQ(args.minCandidateNodesPercentage, r.wantPercentage);
      EXPECT_EQ(args.minCandidateNodesAbsolute, r.wantAbsolute);
    } else {
      ASSERT_TRUE(d.failed());
      EXPECT_EQ(d.error(), r.wantError);
    }
  }
}

}  // namespace
}  // namespace berth::plugins::defaultpreemption
