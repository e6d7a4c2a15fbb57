// SchedulingQueue: ordering, backoff, moves on cluster events, gates and the in-flight bookkeeping
// (upstream's backend/queue/scheduling_queue_test.go), with time driven by a FakeClock.

#include "pkg/queue/scheduling_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace berth::queue {
namespace {

using namespace std::chrono_literals;
using framework::Code;
using test::MakeNode;
namespace events = framework::events;
using test::MakePod;

// The options with the profile's plugin registrations, as the scheduler builds them.
QueueOptions withPluginEvents(QueueOptions options, const framework::runtime::Framework& fw) {
  options.pluginEvents.emplace(fw.profileName(), fw.pluginEvents());
  return options;
}

// A queue of the default profile (its PrioritySort and its plugins' events), on a fake clock.
struct Env {
  explicit Env(QueueOptions options = {})
      : fw(test::mustMakeFramework(config::defaultConfiguration().profiles.front())),
        queue([this](const auto& a, const auto& b) { return fw->less(a, b); }, clock,
              withPluginEvents(std::move(options), *fw)) {}

  // Pops the next pod, which must be `name`. An empty activeQ throws, which GoogleTest reports as
  // a failure of the running test.
  QueuedPod popExpect(const std::string& name) {
    auto popped = queue.tryPop();
    if (!popped) throw std::runtime_error("activeQ is empty; want " + name);
    EXPECT_EQ(popped->pod().metadata.name, name);
    return *popped;
  }
  std::vector<std::string> drain() {
    std::vector<std::string> names;
    while (auto popped = queue.tryPop()) names.push_back(popped->pod().metadata.name);
    return names;
  }
  // Adds the pod, pops it and fails its attempt with `code`.
  QueuedPod addAndFail(const api::PodPtr& pod, Code code = Code::Unschedulable) {
    queue.add(pod);
    QueuedPod popped = popExpect(pod->metadata.name);
    EXPECT_TRUE(queue.addUnschedulableIfNotPresent(popped, code).ok());
    return popped;
  }
  std::optional<Location> where(const api::PodPtr& pod) const { return queue.locate(*pod); }

  util::FakeClock clock;
  framework::runtime::FrameworkPtr fw;
  SchedulingQueue queue;
};

api::PodPtr pod(const std::string& name, int32_t priority = 0) {
  return MakePod().name(name).uid(name + "-uid").priority(priority).obj();
}

api::PodPtr gatedPod(const std::string& name) {
  return MakePod()
      .name(name)
      .uid(name + "-uid")
      .mutate([](api::Pod& p) { p.spec.schedulingGates = {"example.com/gate"}; })
      .obj();
}

TEST(SchedulingQueue, PopsHigherPriorityFirst) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, int32_t>> pods;  // added in this order, 1 s apart
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"higher priority first, whatever the arrival order",
       {{"low", 1}, {"high", 100}, {"mid", 50}},
       {"high", "mid", "low"}},
      {"no priority counts as zero, below positive and above negative",
       {{"negative", -5}, {"none", 0}, {"positive", 5}},
       {"positive", "none", "negative"}},
      {"priority beats an hour of waiting", {{"old", 0}, {"new", 1}}, {"new", "old"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    for (const auto& [name, priority] : c.pods) {
      env.queue.add(pod(name, priority));
      env.clock.advance(1s);
    }
    EXPECT_EQ(env.drain(), c.want);
  }
}

TEST(SchedulingQueue, PopsOlderFirstAtEqualPriority) {
  Env env;
  for (const char* name : {"first", "second", "third"}) {
    env.queue.add(pod(name, 7));
    env.clock.advance(1ms);
  }
  // A requeued pod's queue timestamp is its failure time: it goes behind pods queued before.
  QueuedPod first = env.popExpect("first");
  env.clock.advance(1ms);
  ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(first, Code::Error).ok());
  env.clock.advance(10s);
  env.queue.flushBackoffQCompleted();
  EXPECT_EQ(env.drain(), (std::vector<std::string>{"second", "third", "first"}));
}

TEST(SchedulingQueue, BackoffDoublesUpToMax) {
  struct Case {
    const char* name;
    QueueOptions options;
    std::vector<util::Duration> want;  // backoff after the 1st, 2nd... failed attempt
  };
  const Case cases[] = {
      {"defaults: 1 s doubling to 10 s", {}, {1s, 2s, 4s, 8s, 10s, 10s}},
      {"configured initial 2 s and max 5 s",
       {.podInitialBackoff = 2s, .podMaxBackoff = 5s},
       {2s, 4s, 5s, 5s}},
      {"initial equal to max", {.podInitialBackoff = 3s, .podMaxBackoff = 3s}, {3s, 3s, 3s}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.options);
    auto p = pod("p");
    env.queue.add(p);
    for (size_t i = 0; i < c.want.size(); i++) {
      SCOPED_TRACE("attempt " + std::to_string(i + 1));
      QueuedPod popped = env.popExpect("p");
      EXPECT_EQ(popped.attempts(), static_cast<int>(i + 1));
      ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, Code::Error).ok());
      EXPECT_EQ(env.where(p), Location::Backoff);
      env.clock.advance(c.want[i] - 1ms);
      env.queue.flushBackoffQCompleted();
      EXPECT_EQ(env.where(p), Location::Backoff) << "backoff ended early";
      env.clock.advance(1ms);
      env.queue.flushBackoffQCompleted();
      EXPECT_EQ(env.where(p), Location::Active) << "backoff did not end on time";
    }
  }
}

TEST(SchedulingQueue, ErrorGoesToBackoffUnschedulableWaits) {
  Env env;
  auto unschedulable = pod("unschedulable");
  auto error = pod("error");
  env.addAndFail(unschedulable, Code::Unschedulable);
  env.addAndFail(error, Code::Error);
  auto unresolvable = pod("unresolvable");
  env.addAndFail(unresolvable, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(env.where(unschedulable), Location::Unschedulable);
  EXPECT_EQ(env.where(unresolvable), Location::Unschedulable);
  EXPECT_EQ(env.where(error), Location::Backoff);
  env.clock.advance(1s);
  env.queue.flushBackoffQCompleted();
  EXPECT_EQ(env.drain(), std::vector<std::string>{"error"});
}

TEST(SchedulingQueue, NodeAddMovesUnschedulablePods) {
  struct Case {
    const char* name;
    util::Duration sinceFailure;  // between the failure and the event
    Location want;
  };
  const Case cases[] = {
      {"still backing off: to backoffQ", 500ms, Location::Backoff},
      {"backoff over: straight to activeQ", 1s, Location::Active},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    auto p = pod("p");
    env.addAndFail(p);
    env.clock.advance(c.sinceFailure);
    env.queue.movePodsOnEvent(events::kNodeAdd);
    EXPECT_EQ(env.where(p), c.want);
  }
}

TEST(SchedulingQueue, AssignedPodDeleteMovesUnschedulablePods) {
  Env env;
  auto p = pod("p");
  env.addAndFail(p);
  env.clock.advance(5s);
  env.queue.movePodsOnEvent(events::kAssignedPodDelete);
  EXPECT_EQ(env.where(p), Location::Active);
}

TEST(SchedulingQueue, PreEnqueueCheckSelectsPodsToMove) {
  Env env;
  auto fits = pod("fits");
  auto other = pod("other");
  env.addAndFail(fits);
  env.addAndFail(other);
  env.clock.advance(5s);
  env.queue.movePodsOnEvent(events::kNodeAdd,
                            [](const api::Pod& p) { return p.metadata.name == "fits"; });
  EXPECT_EQ(env.where(fits), Location::Active);
  EXPECT_EQ(env.where(other), Location::Unschedulable);
}

TEST(SchedulingQueue, IrrelevantNodeUpdateKeepsPodsUnschedulable) {
  const api::NodePtr base = MakeNode().name("n1").label("zone", "a").obj();
  struct Case {
    const char* name;
    std::function<void(api::Node&)> edit;
    Location want;
  };
  const Case cases[] = {
      {"heartbeat only", [](api::Node& n) { n.metadata.resourceVersion = "7"; },
       Location::Unschedulable},
      {"condition change",
       [](api::Node& n) {
         n.status.conditions.push_back({"Ready", "False", "", ""});
       },
       Location::Unschedulable},
      {"annotation change", [](api::Node& n) { n.metadata.annotations["a"] = "b"; },
       Location::Unschedulable},
      {"cordon", [](api::Node& n) { n.spec.unschedulable = true; }, Location::Unschedulable},
      {"label change moves", [](api::Node& n) { n.metadata.labels["zone"] = "b"; },
       Location::Active},
      {"taint change moves",
       [](api::Node& n) {
         n.spec.taints.push_back({"k", "v", "NoSchedule"});
       },
       Location::Active},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    auto p = pod("p");
    env.addAndFail(p);
    env.clock.advance(2s);
    auto updated = std::make_shared<api::Node>(*base);
    c.edit(*updated);
    for (const auto& e : framework::nodeUpdateEvents(*base, *updated)) env.queue.movePodsOnEvent(e);
    EXPECT_EQ(env.where(p), c.want);
  }
}

TEST(SchedulingQueue, EventDuringSchedulingCycleRequeuesToBackoff) {
  struct Case {
    const char* name;
    std::function<void(Env&, const api::PodPtr&)> duringCycle;
    Location want;
  };
  const Case cases[] = {
      {"nothing happened: parked as unschedulable", [](Env&, const api::PodPtr&) {},
       Location::Unschedulable},
      {"a node was added",
       [](Env& env, const api::PodPtr&) { env.queue.movePodsOnEvent(events::kNodeAdd); },
       Location::Backoff},
      {"an assigned pod was deleted",
       [](Env& env, const api::PodPtr&) { env.queue.movePodsOnEvent(events::kAssignedPodDelete); },
       Location::Backoff},
      {"an irrelevant node update",
       [](Env& env, const api::PodPtr&) {
         env.queue.movePodsOnEvent(events::kNodeConditionChange);
       },
       Location::Unschedulable},
      {"the pod itself got a new toleration",
       [](Env& env, const api::PodPtr& p) {
         auto updated = std::make_shared<api::Pod>(*p);
         updated->spec.tolerations.push_back({"k", "Exists", "", "", std::nullopt});
         env.queue.update(updated);
       },
       Location::Backoff},
      {"the pod's status changed only",
       [](Env& env, const api::PodPtr& p) {
         auto updated = std::make_shared<api::Pod>(*p);
         updated->status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "", {}});
         env.queue.update(updated);
       },
       Location::Unschedulable},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    auto p = pod("p");
    env.queue.add(p);
    QueuedPod popped = env.popExpect("p");
    EXPECT_EQ(env.where(p), Location::InFlight);
    c.duringCycle(env, p);
    ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, Code::Unschedulable).ok());
    EXPECT_EQ(env.where(p), c.want);
  }
}

TEST(SchedulingQueue, EventBeforePopDoesNotRequeue) {
  Env env;
  auto early = pod("early", 1);
  auto late = pod("late");
  env.queue.add(early);
  env.queue.add(late);
  QueuedPod first = env.popExpect("early");
  env.queue.movePodsOnEvent(events::kNodeAdd);  // `late` is still queued: it will see the node
  QueuedPod second = env.popExpect("late");
  ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(first, Code::Unschedulable).ok());
  ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(second, Code::Unschedulable).ok());
  EXPECT_EQ(env.where(early), Location::Backoff);
  EXPECT_EQ(env.where(late), Location::Unschedulable);
}

TEST(SchedulingQueue, FailedPodIsRequeuedWithItsLatestVersion) {
  Env env;
  auto p = pod("p", 1);
  env.queue.add(p);
  QueuedPod popped = env.popExpect("p");
  env.queue.update(MakePod().name("p").uid("p-uid").priority(9).obj());
  ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, Code::Error).ok());
  auto queued = env.queue.get(*p);
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->pod().spec.priority, 9);
  EXPECT_EQ(queued->attempts(), 1);
}

TEST(SchedulingQueue, UpdateOfQueuedPodReplacesIt) {
  struct Case {
    const char* name;
    std::function<void(Env&)> place;  // puts pod "p" (priority 0) somewhere
    std::function<void(api::Pod&)> edit;
    Location want;
  };
  auto toUnschedulable = [](Env& env) { env.addAndFail(pod("p")); };
  const Case cases[] = {
      {"active stays active", [](Env& env) { env.queue.add(pod("p")); },
       [](api::Pod& p) { p.spec.priority = 5; }, Location::Active},
      {"backoff stays in backoff", [](Env& env) { env.addAndFail(pod("p"), Code::Error); },
       [](api::Pod& p) { p.metadata.labels["x"] = "y"; }, Location::Backoff},
      {"unschedulable with a spec change moves", toUnschedulable,
       [](api::Pod& p) { p.spec.nodeSelector["zone"] = "b"; }, Location::Backoff},
      {"unschedulable with a label change moves", toUnschedulable,
       [](api::Pod& p) { p.metadata.labels["app"] = "web"; }, Location::Backoff},
      {"unschedulable with a status-only change stays", toUnschedulable,
       [](api::Pod& p) { p.status.message = "0/3 nodes are available"; }, Location::Unschedulable},
      {"gated with a gate left stays gated", [](Env& env) { env.queue.add(gatedPod("p")); },
       [](api::Pod& p) { p.spec.schedulingGates.push_back("other"); }, Location::Gated},
      {"gated with no gates left becomes active", [](Env& env) { env.queue.add(gatedPod("p")); },
       [](api::Pod& p) { p.spec.schedulingGates.clear(); }, Location::Active},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    c.place(env);
    auto current = env.queue.get(*pod("p"));
    ASSERT_TRUE(current.has_value());
    auto updated = std::make_shared<api::Pod>(current->pod());
    c.edit(*updated);
    env.queue.update(updated);
    EXPECT_EQ(env.where(updated), c.want);
    auto after = env.queue.get(*updated);
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(after->info.podInfo->pod, updated) << "the queue kept the old version";
    const PendingPods counts = env.queue.pendingPods();
    EXPECT_EQ(counts.active + counts.backoff + counts.unschedulable + counts.gated, 1u);
  }
}

TEST(SchedulingQueue, UpdateReordersActiveQ) {
  Env env;
  env.queue.add(pod("a", 5));
  env.queue.add(pod("b", 1));
  env.queue.update(pod("b", 10));
  EXPECT_EQ(env.drain(), (std::vector<std::string>{"b", "a"}));
}

TEST(SchedulingQueue, DeleteRemovesFromEveryQueue) {
  struct Case {
    const char* name;
    std::function<void(Env&, const api::PodPtr&)> place;
  };
  const Case cases[] = {
      {"active", [](Env& env, const api::PodPtr& p) { env.queue.add(p); }},
      {"backoff", [](Env& env, const api::PodPtr& p) { env.addAndFail(p, Code::Error); }},
      {"unschedulable", [](Env& env, const api::PodPtr& p) { env.addAndFail(p); }},
      {"gated", [](Env& env, const api::PodPtr&) { env.queue.add(gatedPod("p")); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    auto p = pod("p");
    c.place(env, p);
    ASSERT_TRUE(env.where(p).has_value());
    env.queue.remove(*p);
    EXPECT_FALSE(env.where(p).has_value());
    const PendingPods counts = env.queue.pendingPods();
    EXPECT_EQ(counts.active + counts.backoff + counts.unschedulable + counts.gated, 0u);
    env.clock.advance(10min);
    env.queue.flushUnschedulablePodsLeftover();
    env.queue.flushBackoffQCompleted();
    EXPECT_FALSE(env.queue.tryPop().has_value());
  }
}

TEST(SchedulingQueue, DeletedWhileInFlightIsNotRequeued) {
  for (Code code : {Code::Unschedulable, Code::Error}) {
    SCOPED_TRACE(std::string(framework::codeName(code)));
    Env env;
    auto p = pod("p");
    env.queue.add(p);
    QueuedPod popped = env.popExpect("p");
    env.queue.remove(*p);
    EXPECT_FALSE(env.where(p).has_value());
    ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, code).ok());
    EXPECT_FALSE(env.where(p).has_value());
    EXPECT_EQ(env.queue.pendingPods().inFlight, 0u);
  }
}

TEST(SchedulingQueue, RecreatedPodIsQueuedWhileItsNamesakeIsInFlight) {
  struct Case {
    const char* name;
    bool popNewFirst;  // the new incarnation is being scheduled when the old attempt fails
  };
  for (const Case& c : {Case{"new one still queued", false}, Case{"new one in flight", true}}) {
    SCOPED_TRACE(c.name);
    Env env;
    env.queue.add(MakePod().name("p").uid("old").obj());
    QueuedPod old = env.popExpect("p");
    env.queue.remove(old.pod());
    auto recreated = MakePod().name("p").uid("new").obj();
    env.queue.add(recreated);
    EXPECT_EQ(env.where(recreated), Location::Active);
    std::optional<QueuedPod> fresh;
    if (c.popNewFirst) fresh = env.popExpect("p");
    // The old incarnation's failure must not disturb the new one.
    EXPECT_TRUE(env.queue.addUnschedulableIfNotPresent(old, Code::Unschedulable).ok());
    EXPECT_EQ(env.where(recreated), c.popNewFirst ? Location::InFlight : Location::Active);
    if (!fresh) fresh = env.popExpect("p");
    EXPECT_EQ(fresh->pod().metadata.uid, "new");
    EXPECT_EQ(fresh->attempts(), 1);
    ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(*fresh, Code::Unschedulable).ok());
    EXPECT_EQ(env.where(recreated), Location::Unschedulable);
    EXPECT_EQ(env.queue.pendingPods().inFlight, 0u);
  }
}

TEST(SchedulingQueue, NeverQueuesTwice) {
  Env env;
  auto p = pod("p");
  env.queue.add(p);
  env.queue.add(p);
  EXPECT_EQ(env.queue.pendingPods().active, 1u);

  auto err = env.queue.addUnschedulableIfNotPresent(*env.queue.get(*p), Code::Unschedulable);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().message, "Pod default/p is already present in the active queue");

  QueuedPod popped = env.popExpect("p");
  env.queue.add(p);  // e.g. an informer re-list while the pod is being scheduled
  env.queue.update(p);
  EXPECT_EQ(env.where(p), Location::InFlight);
  EXPECT_FALSE(env.queue.tryPop().has_value());

  ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, Code::Error).ok());
  err = env.queue.addUnschedulableIfNotPresent(popped, Code::Error);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().message, "Pod default/p is already present in the backoff queue");
  const PendingPods counts = env.queue.pendingPods();
  EXPECT_EQ(counts.backoff, 1u);
  EXPECT_EQ(counts.active + counts.unschedulable + counts.gated + counts.inFlight, 0u);
}

TEST(SchedulingQueue, DoneForgetsTheInFlightPod) {
  Env env;
  auto p = pod("p");
  env.queue.add(p);
  env.popExpect("p");
  EXPECT_EQ(env.queue.pendingPods().inFlight, 1u);
  env.queue.done(*p);
  EXPECT_EQ(env.queue.pendingPods().inFlight, 0u);
  EXPECT_FALSE(env.where(p).has_value());
}

TEST(SchedulingQueue, AssignedPodsAreNotPending) {
  Env env;
  auto bound = MakePod().name("bound").node("n1").obj();
  env.queue.add(bound);
  EXPECT_FALSE(env.where(bound).has_value());
  auto p = pod("p");
  env.queue.add(p);
  env.queue.update(MakePod().name("p").uid("p-uid").node("n1").obj());  // bound by someone else
  EXPECT_FALSE(env.where(p).has_value());
}

TEST(SchedulingQueue, GatedPodsWaitForUngate) {
  Env env;
  auto gated = gatedPod("gated");
  env.queue.add(gated);
  EXPECT_EQ(env.where(gated), Location::Gated);
  EXPECT_EQ(env.queue.pendingPods().gated, 1u);
  EXPECT_FALSE(env.queue.tryPop().has_value());

  env.queue.movePodsOnEvent(events::kNodeAdd);
  env.clock.advance(10min);
  env.queue.flushUnschedulablePodsLeftover();
  env.queue.flushBackoffQCompleted();
  EXPECT_EQ(env.where(gated), Location::Gated);

  auto ungated = std::make_shared<api::Pod>(*gated);
  ungated->spec.schedulingGates.clear();
  env.queue.update(ungated);
  EXPECT_EQ(env.queue.pendingPods().gated, 0u);
  QueuedPod popped = env.popExpect("gated");
  EXPECT_EQ(popped.attempts(), 1);
}

TEST(SchedulingQueue, LeftoverFlushAfterFiveMinutes) {
  struct Case {
    const char* name;
    QueueOptions options;
    util::Duration wait;
    Location want;
  };
  const Case cases[] = {
      {"exactly five minutes: not yet", {}, 5min, Location::Unschedulable},
      {"longer than five minutes: retried", {}, 5min + 1s, Location::Active},
      {"configured to one minute",
       {.podMaxInUnschedulablePodsDuration = 1min},
       61s,
       Location::Active},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.options);
    auto p = pod("p");
    env.addAndFail(p);
    env.clock.advance(c.wait);
    env.queue.flushUnschedulablePodsLeftover();
    EXPECT_EQ(env.where(p), c.want);
  }
}

TEST(SchedulingQueue, CountsAttemptsAndKeepsTheInitialEnqueueTime) {
  Env env;
  auto p = pod("p");
  const util::MonotonicTime added = env.clock.monotonicNow();
  env.queue.add(p);
  env.clock.advance(3s);
  for (int attempt = 1; attempt <= 3; attempt++) {
    QueuedPod popped = env.popExpect("p");
    EXPECT_EQ(popped.attempts(), attempt);
    EXPECT_EQ(popped.initialEnqueue, added);
    EXPECT_EQ(popped.cycle, env.queue.schedulingCycle());
    ASSERT_TRUE(env.queue.addUnschedulableIfNotPresent(popped, Code::Error).ok());
    env.clock.advance(10s);
    env.queue.flushBackoffQCompleted();
  }
}

TEST(SchedulingQueue, PendingPodsCountsEachQueue) {
  Env env;
  env.addAndFail(pod("unschedulable"));
  env.addAndFail(pod("backoff"), Code::Error);
  env.queue.add(pod("active"));
  env.queue.add(gatedPod("gated"));
  env.queue.add(pod("flying", 100));
  env.popExpect("flying");
  const PendingPods counts = env.queue.pendingPods();
  EXPECT_EQ(counts.active, 1u);
  EXPECT_EQ(counts.backoff, 1u);
  EXPECT_EQ(counts.unschedulable, 1u);
  EXPECT_EQ(counts.gated, 1u);
  EXPECT_EQ(counts.inFlight, 1u);
  EXPECT_EQ(locationName(Location::Unschedulable), "unschedulable");
}

TEST(SchedulingQueue, PopBlocksUntilAPodArrives) {
  Env env;
  auto popped = std::async(std::launch::async, [&] { return env.queue.pop(); });
  env.queue.add(pod("p"));
  // A generous deadline only guards against a hang.
  ASSERT_EQ(popped.wait_for(30s), std::future_status::ready);
  auto got = popped.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->pod().metadata.name, "p");
}

TEST(SchedulingQueue, CloseUnblocksPop) {
  Env env;
  auto popped = std::async(std::launch::async, [&] { return env.queue.pop(); });
  env.queue.close();
  ASSERT_EQ(popped.wait_for(30s), std::future_status::ready);
  EXPECT_FALSE(popped.get().has_value());
  env.queue.add(pod("p"));
  EXPECT_FALSE(env.queue.pop().has_value()) << "a closed queue hands out nothing";
}

}  // namespace
}  // namespace berth::queue
