// runtime::Framework: profile validation and multiPoint expansion (upstream's NewFramework,
// updatePluginList, expandMultiPointPlugins, getScoreWeights) and the extension-point runners.

#include "pkg/framework/runtime/framework.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/plugins/registry.h"
#include "pkg/util/clock.h"
#include "pkg/util/parallel.h"
#include "tests/support/builders.h"

namespace berth::framework::runtime {
namespace {

using test::MakeNode;
using test::MakePod;
using test::plugin;
using test::profileWith;
using ::testing::HasSubstr;

// --- Fakes ---------------------------------------------------------------------------------------

class FakeSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "FakeSort"; }
  // Reverse priority order, to tell it apart from PrioritySort.
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.podInfo->pod->spec.priority.value_or(0) < b.podInfo->pod->spec.priority.value_or(0);
  }
};

// Filters by node name: nodes listed in `verdicts` get that status.
class FakeFilter final : public PreFilterPlugin, public FilterPlugin {
 public:
  FakeFilter(std::string_view name, std::map<std::string, Status> verdicts, Status preFilter,
             std::optional<std::set<std::string>> narrow)
      : name_(name),
        verdicts_(std::move(verdicts)),
        pre_(std::move(preFilter)),
        narrow_(std::move(narrow)) {}
  std::string_view name() const override { return name_; }
  Status preFilter(CycleState&, const PodInfo&, PreFilterResult& r) const override {
    r.nodeNames = narrow_;
    return pre_;
  }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    ++calls;
    auto it = verdicts_.find(node.name());
    return it == verdicts_.end() ? Status() : it->second;
  }
  mutable int calls = 0;

 private:
  std::string_view name_;
  std::map<std::string, Status> verdicts_;
  Status pre_;
  std::optional<std::set<std::string>> narrow_;
};

// Scores by node name; normalize adds `shift` (to push scores out of range).
class FakeScore final : public ScorePlugin {
 public:
  FakeScore(std::string_view name, std::map<std::string, int64_t> scores, int64_t shift)
      : name_(name), scores_(std::move(scores)), shift_(shift) {}
  std::string_view name() const override { return name_; }
  Status score(const CycleState&, const PodInfo&, const NodeInfo& node,
               int64_t& out) const override {
    auto it = scores_.find(node.name());
    out = it == scores_.end() ? 0 : it->second;
    return Status();
  }
  Status normalizeScores(const CycleState&, const PodInfo&,
                         std::vector<int64_t>& scores) const override {
    for (auto& s : scores) s += shift_;
    return Status();
  }

 private:
  std::string_view name_;
  std::map<std::string, int64_t> scores_;
  int64_t shift_;
};

class FakeBind final : public BindPlugin {
 public:
  FakeBind(std::string_view name, Status answer) : name_(name), answer_(std::move(answer)) {}
  std::string_view name() const override { return name_; }
  Status bind(CycleState&, const PodInfo&, const std::string&) const override { return answer_; }

 private:
  std::string_view name_;
  Status answer_;
};

template <typename T, typename... Args>
PluginFactory factoryOf(Args... args) {
  return [=](const Handle&) -> util::Result<PluginPtr> {
    return PluginPtr(std::make_unique<T>(args...));
  };
}

Registry registryWithFakes() {
  Registry r = plugins::makeInTreeRegistry();
  r.add("FakeSort", factoryOf<FakeSort>()).ignore();
  r.add("FailFilter",
        factoryOf<FakeFilter>(std::string_view("FailFilter"),
                              std::map<std::string, Status>{{"n1", Status::error("boom")}},
                              Status(), std::optional<std::set<std::string>>()))
      .ignore();
  r.add("RejectN2", factoryOf<FakeFilter>(std::string_view("RejectN2"),
                                          std::map<std::string, Status>{
                                              {"n2", Status(Code::Unschedulable, "fake says no")}},
                                          Status(), std::optional<std::set<std::string>>()))
      .ignore();
  r.add("SkipFilter",
        factoryOf<FakeFilter>(
            std::string_view("SkipFilter"),
            std::map<std::string, Status>{{"n1", Status(Code::Unschedulable, "should be skipped")}},
            Status::skip(), std::optional<std::set<std::string>>()))
      .ignore();
  r.add("NarrowA",
        factoryOf<FakeFilter>(std::string_view("NarrowA"), std::map<std::string, Status>{},
                              Status(), std::optional<std::set<std::string>>({"n1", "n2"})))
      .ignore();
  r.add("NarrowB",
        factoryOf<FakeFilter>(std::string_view("NarrowB"), std::map<std::string, Status>{},
                              Status(), std::optional<std::set<std::string>>({"n2", "n3"})))
      .ignore();
  r.add("NarrowC",
        factoryOf<FakeFilter>(std::string_view("NarrowC"), std::map<std::string, Status>{},
                              Status(), std::optional<std::set<std::string>>({"n3"})))
      .ignore();
  r.add("PreReject",
        factoryOf<FakeFilter>(std::string_view("PreReject"), std::map<std::string, Status>{},
                              Status(Code::Unschedulable, "pre says no"),
                              std::optional<std::set<std::string>>()))
      .ignore();
  r.add("PreError",
        factoryOf<FakeFilter>(std::string_view("PreError"), std::map<std::string, Status>{},
                              Status::error("kaput"), std::optional<std::set<std::string>>()))
      .ignore();
  r.add("ScoreA",
        factoryOf<FakeScore>(std::string_view("ScoreA"),
                             std::map<std::string, int64_t>{{"n1", 10}, {"n2", 20}}, int64_t{0}))
      .ignore();
  r.add("ScoreB",
        factoryOf<FakeScore>(std::string_view("ScoreB"),
                             std::map<std::string, int64_t>{{"n1", 100}, {"n2", 0}}, int64_t{0}))
      .ignore();
  r.add("ScoreTooHigh",
        factoryOf<FakeScore>(std::string_view("ScoreTooHigh"),
                             std::map<std::string, int64_t>{{"n1", 100}}, int64_t{1}))
      .ignore();
  r.add("SkipBind", factoryOf<FakeBind>(std::string_view("SkipBind"), Status::skip())).ignore();
  r.add("OkBind", factoryOf<FakeBind>(std::string_view("OkBind"), Status())).ignore();
  return r;
}

const Registry& fakes() {
  static const Registry r = registryWithFakes();
  return r;
}

util::Result<FrameworkPtr> build(const config::Profile& p) {
  return Framework::create(fakes(), p, Handle{});
}

FrameworkPtr mustBuild(const config::Profile& p) {
  auto fw = build(p);
  EXPECT_TRUE(fw.ok()) << fw.error().message;
  if (!fw.ok()) throw std::invalid_argument(fw.error().message);
  return std::move(*fw);
}

std::vector<std::string> pointOf(const Framework& fw, const std::string& point) {
  return fw.pluginsByExtensionPoint().at(point);
}

// --- Registry ------------------------------------------------------------------------------------

TEST(Registry, RejectsDuplicateNames) {
  Registry r;
  EXPECT_TRUE(r.add("X", factoryOf<FakeSort>()).ok());
  auto again = r.add("X", factoryOf<FakeSort>());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, util::ErrorCode::AlreadyExists);
  EXPECT_THAT(again.error().message, HasSubstr("\"X\""));
  EXPECT_NE(r.find("X"), nullptr);
  EXPECT_EQ(r.find("Y"), nullptr);
}

TEST(Registry, InTreeRegistryListsEveryPlugin) {
  EXPECT_EQ(
      plugins::makeInTreeRegistry().names(),
      (std::vector<std::string>{
          "DefaultBinder", "DefaultPreemption", "ImageLocality", "InterPodAffinity", "NodeAffinity",
          "NodeName", "NodePorts", "NodeResourcesBalancedAllocation", "NodeResourcesFit",
          "NodeUnschedulable", "NodeVolumeLimits", "PodTopologySpread", "PrioritySort",
          "TaintToleration", "VolumeBinding", "VolumeRestrictions", "VolumeZone"}));
}

// --- Validation ----------------------------------------------------------------------------------

TEST(FrameworkCreate, RejectsUnknownPlugin) {
  auto fw = build(profileWith({plugin("NoSuchPlugin")}));
  ASSERT_FALSE(fw.ok());
  EXPECT_EQ(fw.error().code, util::ErrorCode::InvalidArgument);
  EXPECT_THAT(fw.error().message, HasSubstr("profile \"test\""));
  EXPECT_THAT(fw.error().message, HasSubstr("test.NoSuchPlugin"));  // the field it came from
  EXPECT_THAT(fw.error().message, HasSubstr("unknown plugin \"NoSuchPlugin\""));
}

TEST(FrameworkCreate, RejectsPluginAtAPointItDoesNotImplement) {
  struct Case {
    const char* name;
    config::PluginSet config::Plugins::*point;
    const char* plugin;
    const char* want;
  };
  const Case cases[] = {
      {"NodeName in score", &config::Plugins::score, "NodeName", "does not extend Score plugin"},
      {"PrioritySort in filter", &config::Plugins::filter, "PrioritySort",
       "does not extend Filter plugin"},
      {"NodePorts in preScore", &config::Plugins::preScore, "NodePorts",
       "does not extend PreScore plugin"},
      {"TaintToleration in bind", &config::Plugins::bind, "TaintToleration",
       "does not extend Bind plugin"},
      {"NodeName in permit", &config::Plugins::permit, "NodeName", "does not extend Permit plugin"},
      {"NodeName in preBind", &config::Plugins::preBind, "NodeName",
       "does not extend PreBind plugin"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = profileWith({});
    (p.plugins.*c.point).enabled.push_back(plugin(c.plugin));
    auto fw = build(p);
    ASSERT_FALSE(fw.ok());
    EXPECT_THAT(fw.error().message,
                HasSubstr("plugin \"" + std::string(c.plugin) + "\" " + c.want));
    EXPECT_THAT(fw.error().message, HasSubstr("profile \"test\""));
  }
}

TEST(FrameworkCreate, RequiresExactlyOneQueueSort) {
  {
    SCOPED_TRACE("none");
    auto p = profileWith({});
    p.plugins.multiPoint.enabled.erase(p.plugins.multiPoint.enabled.begin());  // PrioritySort
    auto fw = build(p);
    ASSERT_FALSE(fw.ok());
    EXPECT_THAT(fw.error().message, HasSubstr("only one queue sort plugin required, but got 0"));
  }
  {
    SCOPED_TRACE("two: explicit one plus the multiPoint default");
    auto p = profileWith({});
    p.plugins.queueSort.enabled.push_back(plugin("FakeSort"));
    auto fw = build(p);
    ASSERT_FALSE(fw.ok());
    EXPECT_THAT(fw.error().message, HasSubstr("only one queue sort plugin required, but got 2"));
  }
  {
    SCOPED_TRACE("the default disabled, the other enabled");
    auto p = profileWith({});
    p.plugins.queueSort.enabled.push_back(plugin("FakeSort"));
    p.plugins.queueSort.disabled.push_back(plugin("*"));
    auto fw = mustBuild(p);
    EXPECT_EQ(pointOf(*fw, "QueueSort"), std::vector<std::string>{"FakeSort"});
    QueuedPodInfo hi{makePodInfo(MakePod().priority(10).obj()), {}, 0};
    QueuedPodInfo lo{makePodInfo(MakePod().priority(1).obj()), {}, 0};
    EXPECT_TRUE(fw->less(lo, hi));  // FakeSort's order, not PrioritySort's
  }
}

TEST(FrameworkCreate, RequiresABindPlugin) {
  auto p = profileWith({});
  p.plugins.multiPoint.enabled.pop_back();  // DefaultBinder
  auto fw = build(p);
  ASSERT_FALSE(fw.ok());
  EXPECT_THAT(fw.error().message, HasSubstr("at least one bind plugin is needed"));
  EXPECT_THAT(fw.error().message, HasSubstr("profile \"test\""));

  p.plugins.bind.disabled.push_back(plugin("*"));
  p.plugins.multiPoint.enabled.push_back(plugin("DefaultBinder"));
  EXPECT_FALSE(build(p).ok()) << "DefaultBinder is disabled at Bind";
}

TEST(FrameworkCreate, RejectsDuplicateRegistrations) {
  {
    SCOPED_TRACE("twice in multiPoint");
    auto p = profileWith({plugin("NodeName"), plugin("NodeName")});
    auto fw = build(p);
    ASSERT_FALSE(fw.ok());
    EXPECT_THAT(fw.error().message, HasSubstr("already registered"));
  }
  {
    SCOPED_TRACE("twice at one point");
    auto p = profileWith({});
    p.plugins.filter.enabled = {plugin("NodeName"), plugin("NodeName")};
    EXPECT_FALSE(build(p).ok());
  }
}

TEST(FrameworkCreate, ExpandsMultiPointInOrderToImplementedPoints) {
  auto fw = mustBuild(
      profileWith({plugin("NodeUnschedulable"), plugin("NodeName"), plugin("TaintToleration", 3),
                   plugin("NodeAffinity", 2), plugin("NodePorts")}));
  using V = std::vector<std::string>;
  EXPECT_EQ(pointOf(*fw, "QueueSort"), V{"PrioritySort"});
  EXPECT_EQ(pointOf(*fw, "PreFilter"), (V{"NodeAffinity", "NodePorts"}));
  EXPECT_EQ(pointOf(*fw, "Filter"),
            (V{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts"}));
  EXPECT_EQ(pointOf(*fw, "PostFilter"), V{});
  EXPECT_EQ(pointOf(*fw, "PreScore"), (V{"TaintToleration", "NodeAffinity"}));
  EXPECT_EQ(pointOf(*fw, "Score"), (V{"TaintToleration", "NodeAffinity"}));
  EXPECT_EQ(pointOf(*fw, "Bind"), V{"DefaultBinder"});
  EXPECT_TRUE(fw->hasScorePlugins());
  EXPECT_FALSE(fw->hasPostFilterPlugins());
}

TEST(FrameworkCreate, DefaultConfigurationBuilds) {
  auto config = config::defaultConfiguration();
  ASSERT_EQ(config.profiles.size(), 1u);
  auto fw = test::makeFramework(config.profiles[0]);
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  using V = std::vector<std::string>;
  EXPECT_EQ(pointOf(**fw, "Filter"),
            (V{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
               "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
               "VolumeZone", "PodTopologySpread", "InterPodAffinity"}));
  EXPECT_EQ(
      pointOf(**fw, "PreFilter"),
      (V{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
         "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"}));
  EXPECT_EQ(pointOf(**fw, "PreBind"), V{"VolumeBinding"});
  EXPECT_EQ((*fw)->scoreWeight("TaintToleration"), 3);
  EXPECT_EQ((*fw)->scoreWeight("NodeAffinity"), 2);
  EXPECT_EQ((*fw)->scoreWeight("NodeResourcesFit"), 1);
  EXPECT_EQ((*fw)->scoreWeight("PodTopologySpread"), 2);
  EXPECT_EQ((*fw)->scoreWeight("InterPodAffinity"), 2);
  EXPECT_EQ((*fw)->scoreWeight("NodeResourcesBalancedAllocation"), 1);
}

TEST(FrameworkCreate, ExplicitPointOverridesMultiPointAndGoesFirst) {
  // Upstream's order: overrides (in the explicit list's order), then the rest of multiPoint, then
  // the other explicitly enabled plugins.
  auto p = profileWith({plugin("NodeUnschedulable"), plugin("NodeName"), plugin("TaintToleration"),
                        plugin("NodePorts")});
  p.plugins.filter.enabled = {plugin("RejectN2"), plugin("NodePorts"), plugin("TaintToleration")};
  auto fw = mustBuild(p);
  EXPECT_EQ(pointOf(*fw, "Filter"),
            (std::vector<std::string>{"NodePorts", "TaintToleration", "NodeUnschedulable",
                                      "NodeName", "RejectN2"}));
  // Other points are untouched by the Filter override.
  EXPECT_EQ(pointOf(*fw, "PreFilter"), std::vector<std::string>{"NodePorts"});
}

TEST(FrameworkCreate, DisabledAtOnePointStaysAtOthers) {
  auto p = profileWith({plugin("TaintToleration"), plugin("NodeAffinity")});
  p.plugins.filter.disabled = {plugin("TaintToleration")};
  p.plugins.score.disabled = {plugin("NodeAffinity")};
  auto fw = mustBuild(p);
  using V = std::vector<std::string>;
  EXPECT_EQ(pointOf(*fw, "Filter"), V{"NodeAffinity"});
  EXPECT_EQ(pointOf(*fw, "Score"), V{"TaintToleration"});
  EXPECT_EQ(pointOf(*fw, "PreScore"), (V{"TaintToleration", "NodeAffinity"}));
}

TEST(FrameworkCreate, DisabledStarDropsEveryMultiPointPluginAtThatPoint) {
  auto p = profileWith({plugin("NodeUnschedulable"), plugin("NodeName"), plugin("NodeAffinity")});
  p.plugins.filter.disabled = {plugin("*")};
  p.plugins.filter.enabled = {plugin("NodeName")};
  auto fw = mustBuild(p);
  using V = std::vector<std::string>;
  EXPECT_EQ(pointOf(*fw, "Filter"), V{"NodeName"});
  EXPECT_EQ(pointOf(*fw, "PreFilter"), V{"NodeAffinity"});
}

TEST(FrameworkCreate, ScoreWeightsDefaultToOneAndExplicitWins) {
  struct Case {
    const char* name;
    int32_t multiPointWeight;
    std::optional<int32_t> scoreWeight;  // also enabled at score with this weight
    int64_t want;
  };
  const Case cases[] = {
      {"unset means 1", 0, std::nullopt, 1},
      {"multiPoint weight", 3, std::nullopt, 3},
      {"score.enabled weight overrides multiPoint", 3, 5, 5},
      {"score.enabled without weight means 1, not the multiPoint weight", 3, 0, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = profileWith({plugin("TaintToleration", c.multiPointWeight)});
    if (c.scoreWeight) p.plugins.score.enabled = {plugin("TaintToleration", *c.scoreWeight)};
    auto fw = mustBuild(p);
    EXPECT_EQ(fw->scoreWeight("TaintToleration"), c.want);
    EXPECT_EQ(pointOf(*fw, "Score"), std::vector<std::string>{"TaintToleration"});
  }
  auto fw = mustBuild(profileWith({plugin("NodeName")}));
  EXPECT_EQ(fw->scoreWeight("NodeName"), 0);  // not a score plugin
}

TEST(FrameworkCreate, PercentageOfNodesToScoreFallsBackToGlobal) {
  auto p = profileWith({});
  EXPECT_EQ(mustBuild(p)->percentageOfNodesToScore(42), 42);
  p.percentageOfNodesToScore = 7;
  EXPECT_EQ(mustBuild(p)->percentageOfNodesToScore(42), 7);
  EXPECT_EQ(mustBuild(p)->profileName(), "test");
}

// --- Runners -------------------------------------------------------------------------------------

class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest()
      : snapshot_(test::makeSnapshot({MakeNode().name("n1").obj(), MakeNode().name("n2").obj(),
                                      MakeNode().name("n3").obj()})),
        pod_(MakePod().name("p").obj()) {}

  std::vector<const NodeInfo*> nodes() const {
    std::vector<const NodeInfo*> out;
    for (const auto& n : snapshot_.nodeInfos()) out.push_back(n.get());
    return out;
  }

  Snapshot snapshot_;
  PodInfo pod_;
  CycleState state_;
};

TEST_F(RunnerTest, FilterAttributesRejectionsAndWrapsErrors) {
  auto p = profileWith({});
  p.plugins.filter.enabled = {plugin("RejectN2"), plugin("FailFilter")};
  auto fw = mustBuild(p);

  Status onN1 = fw->runFilterPlugins(state_, pod_, *snapshot_.get("n1"));
  EXPECT_EQ(onN1.code(), Code::Error);
  EXPECT_EQ(onN1.message(), "running \"FailFilter\" filter plugin: boom");
  EXPECT_EQ(onN1.plugin(), "FailFilter");

  Status onN2 = fw->runFilterPlugins(state_, pod_, *snapshot_.get("n2"));
  EXPECT_EQ(onN2.code(), Code::Unschedulable);
  EXPECT_EQ(onN2.message(), "fake says no");
  EXPECT_EQ(onN2.plugin(), "RejectN2");

  EXPECT_TRUE(fw->runFilterPlugins(state_, pod_, *snapshot_.get("n3")).isSuccess());
}

// Counts the AddPod/RemovePod calls it gets; `answer` is what it returns.
class CountingExtensions final : public PreFilterPlugin, public PreFilterExtensions {
 public:
  CountingExtensions(std::string_view name, Status preFilter, Status answer)
      : name_(name), pre_(std::move(preFilter)), answer_(std::move(answer)) {}
  std::string_view name() const override { return name_; }
  Status preFilter(CycleState&, const PodInfo&, PreFilterResult&) const override { return pre_; }
  Status addPod(CycleState&, const PodInfo&, const PodInfo&, const NodeInfo&) const override {
    ++added;
    return answer_;
  }
  Status removePod(CycleState&, const PodInfo&, const PodInfo&, const NodeInfo&) const override {
    ++removed;
    return answer_;
  }
  mutable int added = 0;
  mutable int removed = 0;

 private:
  std::string_view name_;
  Status pre_;
  Status answer_;
};

TEST_F(RunnerTest, PreFilterExtensionsRunForEveryPluginPreFilterDidNotSkip) {
  CountingExtensions* live = nullptr;
  CountingExtensions* skipped = nullptr;
  Registry r = plugins::makeInTreeRegistry();
  r.add("Live", [&live](const Handle&) -> util::Result<PluginPtr> {
     auto p = std::make_unique<CountingExtensions>("Live", Status(), Status());
     live = p.get();
     return PluginPtr(std::move(p));
   }).ignore();
  r.add("Skipped", [&skipped](const Handle&) -> util::Result<PluginPtr> {
     auto p = std::make_unique<CountingExtensions>("Skipped", Status::skip(), Status());
     skipped = p.get();
     return PluginPtr(std::move(p));
   }).ignore();
  auto p = profileWith({});
  p.plugins.preFilter.enabled = {plugin("Live"), plugin("Skipped"), plugin("NodePorts")};
  auto fw = Framework::create(r, p, Handle{});
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  PreFilterResult result;
  std::set<std::string> rejectedBy;
  ASSERT_TRUE((*fw)->runPreFilterPlugins(state_, pod_, result, rejectedBy).isSuccess());

  PodInfo other(MakePod().name("other").obj());
  EXPECT_TRUE(
      (*fw)->runPreFilterExtensionAddPod(state_, pod_, other, *snapshot_.get("n1")).isSuccess());
  EXPECT_TRUE(
      (*fw)->runPreFilterExtensionRemovePod(state_, pod_, other, *snapshot_.get("n1")).isSuccess());
  EXPECT_EQ(live->added, 1);
  EXPECT_EQ(live->removed, 1);
  EXPECT_EQ(skipped->added + skipped->removed, 0);
}

TEST_F(RunnerTest, PreFilterExtensionErrorsNameThePlugin) {
  auto p = profileWith({});
  Registry r = plugins::makeInTreeRegistry();
  r.add("Broken", factoryOf<CountingExtensions>(std::string_view("Broken"), Status(),
                                                Status::error("no state")))
      .ignore();
  p.plugins.preFilter.enabled = {plugin("Broken")};
  auto fw = Framework::create(r, p, Handle{});
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  PodInfo other(MakePod().name("other").obj());
  Status added = (*fw)->runPreFilterExtensionAddPod(state_, pod_, other, *snapshot_.get("n1"));
  EXPECT_EQ(added.code(), Code::Error);
  EXPECT_EQ(added.message(), "running AddPod on PreFilter plugin \"Broken\": no state");
  Status removed = (*fw)->runPreFilterExtensionRemovePod(state_, pod_, other, *snapshot_.get("n1"));
  EXPECT_EQ(removed.message(), "running RemovePod on PreFilter plugin \"Broken\": no state");
}

// Rejects a node by how many pods it holds: fewer than `min` or more than `max`.
class PodCountFilter final : public FilterPlugin {
 public:
  PodCountFilter(size_t min, size_t max) : min_(min), max_(max) {}
  std::string_view name() const override { return "PodCountFilter"; }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    const size_t n = node.pods().size();
    if (n < min_ || n > max_) return Status(Code::Unschedulable, "pod count");
    return Status();
  }

 private:
  size_t min_, max_;
};

class FixedNominator final : public PodNominator {
 public:
  std::vector<PodInfoPtr> nominatedPodsForNode(std::string_view node) const override {
    auto it = pods.find(std::string(node));
    return it == pods.end() ? std::vector<PodInfoPtr>{} : it->second;
  }
  std::map<std::string, std::vector<PodInfoPtr>> pods;
};

PodInfoPtr nominatedPod(const std::string& name, int32_t priority) {
  return makePodInfo(MakePod().name(name).uid(name).priority(priority).obj());
}

FrameworkPtr withPodCountFilter(const FixedNominator& nominator, size_t min, size_t max) {
  Registry r = plugins::makeInTreeRegistry();
  r.add("PodCountFilter", factoryOf<PodCountFilter>(min, max)).ignore();
  auto p = profileWith({});
  p.plugins.filter.enabled = {plugin("PodCountFilter")};
  Handle handle;
  handle.nominator = &nominator;
  auto fw = Framework::create(r, p, handle);
  EXPECT_TRUE(fw.ok()) << fw.error().message;
  return std::move(*fw);
}

TEST_F(RunnerTest, NominatedPodsOfEqualOrHigherPriorityTakeRoomFirst) {
  FixedNominator nominator;
  nominator.pods["n1"] = {nominatedPod("high", 10)};
  nominator.pods["n2"] = {nominatedPod("low", 1)};
  nominator.pods["n3"] = {nominatedPod("same", 5)};
  auto fw = withPodCountFilter(nominator, 0, 0);  // fits only an empty node
  PodInfo pod(MakePod().name("p").uid("p").priority(5).obj());
  EXPECT_EQ(fw->runFilterPluginsWithNominatedPods(state_, pod, *snapshot_.get("n1")).code(),
            Code::Unschedulable);
  EXPECT_TRUE(fw->runFilterPluginsWithNominatedPods(state_, pod, *snapshot_.get("n2")).isSuccess());
  EXPECT_EQ(fw->runFilterPluginsWithNominatedPods(state_, pod, *snapshot_.get("n3")).code(),
            Code::Unschedulable);
  // The node itself is untouched.
  EXPECT_TRUE(snapshot_.get("n1")->pods().empty());
}

TEST_F(RunnerTest, APodIsNotCountedAgainstItsOwnNomination) {
  FixedNominator nominator;
  nominator.pods["n1"] = {nominatedPod("p", 5)};
  auto fw = withPodCountFilter(nominator, 0, 0);
  PodInfo pod(MakePod().name("p").uid("p").priority(5).obj());
  EXPECT_TRUE(fw->runFilterPluginsWithNominatedPods(state_, pod, *snapshot_.get("n1")).isSuccess());
}

TEST_F(RunnerTest, ANodeMustFitAlsoWithoutItsNominatedPods) {
  FixedNominator nominator;
  nominator.pods["n1"] = {nominatedPod("high", 10)};
  auto fw = withPodCountFilter(nominator, 1, 5);  // needs a pod there, as pod affinity may
  PodInfo pod(MakePod().name("p").uid("p").priority(5).obj());
  EXPECT_EQ(fw->runFilterPluginsWithNominatedPods(state_, pod, *snapshot_.get("n1")).code(),
            Code::Unschedulable);
}

TEST_F(RunnerTest, OnlySampledCyclesTimeEachPluginCall) {
  auto p = profileWith({});
  p.plugins.filter.enabled = {plugin("RejectN2")};
  auto fw = mustBuild(p);
  for (const char* n : {"n1", "n2", "n3"})
    (void)fw->runFilterPlugins(state_, pod_, *snapshot_.get(n));
  EXPECT_TRUE(fw->pluginDurations().snapshot().empty());

  state_.setRecordPluginMetrics(true);
  for (const char* n : {"n1", "n2", "n3"})
    (void)fw->runFilterPlugins(state_, pod_, *snapshot_.get(n));
  std::map<std::string, uint64_t> counts;  // status -> calls, per node as upstream
  for (const auto& series : fw->pluginDurations().snapshot()) {
    EXPECT_EQ(series.plugin, "RejectN2");
    EXPECT_EQ(series.extensionPoint, "Filter");
    counts[std::string(series.status)] = series.count;
    EXPECT_EQ(series.cumulative.back(), series.count);
  }
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"Success", 2}, {"Unschedulable", 1}}));
}

// Filters after advancing a fake clock, as if each call took `took`.
class SlowFilter final : public FilterPlugin {
 public:
  SlowFilter(util::FakeClock& clock, util::Duration took) : clock_(clock), took_(took) {}
  std::string_view name() const override { return "SlowFilter"; }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    clock_.advance(took_);
    return Status();
  }

 private:
  util::FakeClock& clock_;
  util::Duration took_;
};

TEST_F(RunnerTest, PluginCallsAreTimedOnTheFrameworksClock) {
  util::FakeClock clock;
  Registry r = plugins::makeInTreeRegistry();
  r.add("SlowFilter", [&clock](const Handle&) -> util::Result<PluginPtr> {
     return PluginPtr(std::make_unique<SlowFilter>(clock, std::chrono::milliseconds(3)));
   }).ignore();
  auto p = profileWith({});
  p.plugins.filter.enabled = {plugin("SlowFilter")};
  auto fw = Framework::create(r, p, Handle{}, clock);
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  state_.setRecordPluginMetrics(true);
  for (const char* n : {"n1", "n2"}) {
    EXPECT_TRUE((*fw)->runFilterPlugins(state_, pod_, *snapshot_.get(n)).isSuccess());
  }
  auto series = (*fw)->pluginDurations().snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].count, 2u);
  EXPECT_DOUBLE_EQ(series[0].sumSeconds, 0.006);
}

TEST(PluginDurations, BucketsAreUpstreamsAndCumulative) {
  const auto& bounds = PluginDurations::bucketBounds();
  EXPECT_DOUBLE_EQ(bounds.front(), 0.00001);
  EXPECT_DOUBLE_EQ(bounds[1], 0.000015);
  EXPECT_NEAR(bounds.back(), 0.00001 * std::pow(1.5, 19), 1e-12);
  PluginDurations d({"A"});
  d.observe("A", Point::Score, Code::Success, std::chrono::microseconds(5));   // le 1e-05
  d.observe("A", Point::Score, Code::Success, std::chrono::microseconds(12));  // le 1.5e-05
  d.observe("A", Point::Score, Code::Success, std::chrono::seconds(1));        // +Inf only
  d.observe("Unknown", Point::Score, Code::Success, std::chrono::microseconds(5));
  auto series = d.snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].cumulative[0], 1u);
  EXPECT_EQ(series[0].cumulative[1], 2u);
  EXPECT_EQ(series[0].cumulative.back(), 2u);
  EXPECT_EQ(series[0].count, 3u);
  EXPECT_NEAR(series[0].sumSeconds, 1.000017, 1e-9);
}

TEST(PluginDurations, ConcurrentObservationsAreAllCounted) {
  PluginDurations d({"A", "B"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&d] {
      for (int i = 0; i < 10000; ++i) {
        d.observe(i % 2 ? "A" : "B", Point::Filter, Code::Success,
                  std::chrono::microseconds(i % 50));
      }
    });
  }
  for (auto& t : threads) t.join();
  uint64_t total = 0;
  for (const auto& s : d.snapshot()) total += s.count;
  EXPECT_EQ(total, 40000u);
}

TEST_F(RunnerTest, PreFilterSkipSkipsThatFilter) {
  auto p = profileWith({});
  p.plugins.preFilter.enabled = {plugin("SkipFilter")};
  p.plugins.filter.enabled = {plugin("SkipFilter")};
  auto fw = mustBuild(p);
  PreFilterResult r;
  std::set<std::string> rejectedBy;
  EXPECT_TRUE(fw->runPreFilterPlugins(state_, pod_, r, rejectedBy).isSuccess());
  EXPECT_TRUE(state_.filterSkipped("SkipFilter"));
  EXPECT_TRUE(fw->runFilterPlugins(state_, pod_, *snapshot_.get("n1")).isSuccess());
  // Without the PreFilter pass, the same Filter rejects n1.
  CycleState fresh;
  EXPECT_FALSE(fw->runFilterPlugins(fresh, pod_, *snapshot_.get("n1")).isSuccess());
}

TEST_F(RunnerTest, PreFilterIntersectsNarrowingAndNamesPlugins) {
  struct Case {
    const char* name;
    std::vector<const char*> plugins;
    Code code;
    std::optional<std::set<std::string>> nodes;
    std::string message;
  };
  const Case cases[] = {
      {"one narrowing", {"NarrowA"}, Code::Success, std::set<std::string>{"n1", "n2"}, ""},
      {"two intersect", {"NarrowA", "NarrowB"}, Code::Success, std::set<std::string>{"n2"}, ""},
      {"three, empty",
       {"NarrowB", "NarrowA", "NarrowC"},
       Code::UnschedulableAndUnresolvable,
       std::set<std::string>{},
       "node(s) didn't satisfy plugin(s) [NarrowA NarrowB NarrowC] simultaneously"},
      {"two, empty",
       {"NarrowC", "NarrowA"},
       Code::UnschedulableAndUnresolvable,
       std::set<std::string>{},
       "node(s) didn't satisfy plugin(s) [NarrowA NarrowC] simultaneously"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = profileWith({});
    for (const char* name : c.plugins) p.plugins.preFilter.enabled.push_back(plugin(name));
    auto fw = mustBuild(p);
    CycleState state;
    PreFilterResult r;
    std::set<std::string> rejectedBy;
    Status s = fw->runPreFilterPlugins(state, pod_, r, rejectedBy);
    EXPECT_EQ(s.code(), c.code);
    EXPECT_EQ(s.message(), c.message);
    if (c.code == Code::Success) {
      EXPECT_EQ(r.nodeNames, c.nodes);
    }
    for (const char* name : c.plugins) EXPECT_TRUE(rejectedBy.contains(name)) << name;
  }
}

TEST_F(RunnerTest, PreFilterRejectionAndErrors) {
  {
    SCOPED_TRACE("Unschedulable keeps running the others and is returned with its plugin");
    auto p = profileWith({});
    p.plugins.preFilter.enabled = {plugin("PreReject"), plugin("SkipFilter")};
    auto fw = mustBuild(p);
    PreFilterResult r;
    std::set<std::string> rejectedBy;
    Status s = fw->runPreFilterPlugins(state_, pod_, r, rejectedBy);
    EXPECT_EQ(s.code(), Code::Unschedulable);
    EXPECT_EQ(s.message(), "pre says no");
    EXPECT_EQ(s.plugin(), "PreReject");
    EXPECT_TRUE(state_.filterSkipped("SkipFilter"));  // ran after the rejection
    EXPECT_EQ(rejectedBy, std::set<std::string>{"PreReject"});
  }
  {
    SCOPED_TRACE("Error is wrapped");
    auto p = profileWith({});
    p.plugins.preFilter.enabled = {plugin("PreError")};
    auto fw = mustBuild(p);
    CycleState state;
    PreFilterResult r;
    std::set<std::string> rejectedBy;
    Status s = fw->runPreFilterPlugins(state, pod_, r, rejectedBy);
    EXPECT_EQ(s.code(), Code::Error);
    EXPECT_EQ(s.message(), "running PreFilter plugin \"PreError\": kaput");
    EXPECT_EQ(s.plugin(), "PreError");
  }
}

TEST_F(RunnerTest, ScoreAppliesWeightsAfterNormalizing) {
  auto p = profileWith({plugin("ScoreA", 2), plugin("ScoreB")});
  auto fw = mustBuild(p);
  util::Parallelizer par(1);
  ScoreTable table;
  ASSERT_TRUE(fw->runPreScorePlugins(state_, pod_, nodes()).isSuccess());
  Status s = fw->runScorePlugins(state_, pod_, nodes(), par, table);
  ASSERT_TRUE(s.isSuccess()) << s.message();
  EXPECT_EQ(table.plugins, (std::vector<std::string_view>{"ScoreA", "ScoreB"}));
  EXPECT_EQ(table.weights, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(table.scores[0], (std::vector<int64_t>{10, 20, 0}));
  EXPECT_EQ(table.scores[1], (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(table.totals, (std::vector<int64_t>{120, 40, 0}));
}

TEST_F(RunnerTest, ScoreOutOfRangeAfterNormalizingIsAnError) {
  auto fw = mustBuild(profileWith({plugin("ScoreTooHigh")}));
  util::Parallelizer par(1);
  ScoreTable table;
  Status s = fw->runScorePlugins(state_, pod_, nodes(), par, table);
  EXPECT_EQ(s.code(), Code::Error);
  EXPECT_EQ(s.message(),
            "plugin \"ScoreTooHigh\" returns an invalid score 101, it should in the range of "
            "[0, 100] after normalizing");
  EXPECT_EQ(s.plugin(), "ScoreTooHigh");
}

TEST_F(RunnerTest, PreScoreSkipDropsThePluginFromTheTable) {
  // NodeAffinity's PreScore skips a pod without preferred terms.
  auto fw = mustBuild(profileWith({plugin("NodeAffinity", 2), plugin("ScoreB")}));
  util::Parallelizer par(1);
  ScoreTable table;
  ASSERT_TRUE(fw->runPreScorePlugins(state_, pod_, nodes()).isSuccess());
  EXPECT_TRUE(state_.scoreSkipped("NodeAffinity"));
  ASSERT_TRUE(fw->runScorePlugins(state_, pod_, nodes(), par, table).isSuccess());
  EXPECT_EQ(table.plugins, std::vector<std::string_view>{"ScoreB"});
  EXPECT_EQ(table.totals, (std::vector<int64_t>{100, 0, 0}));
}

TEST_F(RunnerTest, BindTriesPluginsUntilOneDoesNotSkip) {
  test::FakeBinder binder;
  {
    auto p = profileWith({});
    p.plugins.bind.disabled = {plugin("*")};
    p.plugins.bind.enabled = {plugin("SkipBind"), plugin("DefaultBinder")};
    auto fw = Framework::create(fakes(), p, Handle{&binder});
    ASSERT_TRUE(fw.ok()) << fw.error().message;
    EXPECT_EQ(pointOf(**fw, "Bind"), (std::vector<std::string>{"SkipBind", "DefaultBinder"}));
    Status s = (*fw)->runBindPlugins(state_, pod_, "n1");
    EXPECT_TRUE(s.isSuccess()) << s.message();
    EXPECT_EQ(s.plugin(), "DefaultBinder");
    EXPECT_EQ(binder.bound,
              (std::vector<std::pair<std::string, std::string>>{{"default/p", "n1"}}));
  }
  {
    auto p = profileWith({});
    p.plugins.bind.disabled = {plugin("*")};
    p.plugins.bind.enabled = {plugin("SkipBind")};
    auto fw = mustBuild(p);
    Status s = fw->runBindPlugins(state_, pod_, "n1");
    EXPECT_EQ(s.code(), Code::Error);
  }
  {
    SCOPED_TRACE("DefaultBinder without a binder is an error, not a crash");
    auto fw = mustBuild(profileWith({}));
    Status s = fw->runBindPlugins(state_, pod_, "n1");
    EXPECT_EQ(s.code(), Code::Error);
    EXPECT_THAT(s.message(), HasSubstr("DefaultBinder"));
  }
  {
    SCOPED_TRACE("a binder's rejection comes back as it is");
    test::FakeBinder refusing;
    refusing.answer = Code::Unschedulable;
    auto fw = test::mustMakeFramework(profileWith({}), &refusing);
    Status s = fw->runBindPlugins(state_, pod_, "n2");
    EXPECT_EQ(s.code(), Code::Unschedulable);
    EXPECT_EQ(s.plugin(), "DefaultBinder");
  }
}

}  // namespace
}  // namespace berth::framework::runtime
