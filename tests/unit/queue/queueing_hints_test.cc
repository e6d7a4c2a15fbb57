// Which cluster events move an unschedulable pod: those the plugins that rejected it registered
// (EnqueueExtensions), when their hint says Queue (upstream's isPodWorthRequeuing), with the
// default profile's in-tree plugins.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/queue/scheduling_queue.h"
#include "tests/support/builders.h"

namespace berth::queue {
namespace {

using namespace std::chrono_literals;
using framework::ClusterEvent;
using framework::EventObjects;
using test::MakeNode;
using test::MakePod;
namespace events = framework::events;

// A queue of the default profile whose pods fail with the given rejecting plugins.
struct HintEnv {
  HintEnv()
      : fw(test::mustMakeFramework(config::defaultConfiguration().profiles.front())),
        queue([this](const auto& a, const auto& b) { return fw->less(a, b); }, clock,
              QueueOptions{.pluginEvents = {{fw->profileName(), fw->pluginEvents()}}}) {}

  // Adds the pod, pops it and parks it as rejected by `plugins`, its backoff over.
  void reject(const api::PodPtr& pod, std::set<std::string> plugins) {
    queue.add(pod);
    std::optional<QueuedPod> popped = queue.tryPop();
    ASSERT_TRUE(popped);
    popped->unschedulablePlugins = std::move(plugins);
    ASSERT_TRUE(queue.addUnschedulableIfNotPresent(*popped, framework::Code::Unschedulable).ok());
    clock.advance(2s);
  }
  bool moved(const api::PodPtr& pod) const { return queue.locate(*pod) != Location::Unschedulable; }

  util::FakeClock clock;
  framework::runtime::FrameworkPtr fw;
  SchedulingQueue queue;
};

api::PodPtr pending(const std::string& name) {
  return MakePod().name(name).uid(name + "-uid").req({{"cpu", "2"}}).obj();
}

const api::NodePtr kNode =
    MakeNode().name("n1").label("zone", "a").allocatable({{"cpu", "1"}, {"pods", "110"}}).obj();

api::NodePtr nodeWith(const std::function<void(api::Node&)>& edit) {
  auto node = std::make_shared<api::Node>(*kNode);
  edit(*node);
  return node;
}

TEST(QueueingHints, NodeUpdateMovesOnlyPodsItsRegisteredPluginsMayAdmit) {
  struct Case {
    const char* name;
    api::PodPtr pod;
    std::set<std::string> rejectedBy;
    api::NodePtr after;  // kNode updated
    bool wantMoved;
  };
  const auto ssd = MakePod().name("p").uid("p-uid").nodeSelector({{"disk", "ssd"}}).obj();
  const auto labelledSsd = nodeWith([](api::Node& n) { n.metadata.labels["disk"] = "ssd"; });
  const auto labelledHdd = nodeWith([](api::Node& n) { n.metadata.labels["disk"] = "hdd"; });
  const auto bigger =
      nodeWith([](api::Node& n) { n.status.allocatable["cpu"] = test::quantity("4"); });
  const Case cases[] = {
      {"rejected only by NodeResourcesFit: a label change cannot help",
       pending("p"),
       {"NodeResourcesFit"},
       labelledSsd,
       false},
      {"rejected by NodeAffinity: a label change that makes the node match",
       ssd,
       {"NodeAffinity"},
       labelledSsd,
       true},
      {"rejected by NodeAffinity: a label change after which the node still does not match",
       ssd,
       {"NodeAffinity"},
       labelledHdd,
       false},
      {"rejected by NodeResourcesFit and NodeAffinity: the label change NodeAffinity registered",
       ssd,
       {"NodeResourcesFit", "NodeAffinity"},
       labelledSsd,
       true},
      {"rejected by NodeResourcesFit and NodeAffinity: the allocatable change Fit registered",
       pending("p"),
       {"NodeResourcesFit", "NodeAffinity"},
       bigger,
       true},
      {"rejected by NodeResourcesFit: allocatable grew enough",
       pending("p"),
       {"NodeResourcesFit"},
       bigger,
       true},
      {"rejected by NodeResourcesFit: allocatable grew, still too small",
       pending("p"),
       {"NodeResourcesFit"},
       nodeWith([](api::Node& n) { n.status.allocatable["cpu"] = test::quantity("1500m"); }),
       false},
      {"rejected by TaintToleration: the untolerated taint removed",
       MakePod().name("p").uid("p-uid").obj(),
       {"TaintToleration"},
       kNode,
       true},
      {"rejected by TaintToleration: another untolerated taint instead",
       MakePod().name("p").uid("p-uid").obj(),
       {"TaintToleration"},
       nodeWith([](api::Node& n) {
         n.spec.taints = {{"other", "x", "NoExecute"}};
       }),
       false},
      {"rejected by NodeUnschedulable: uncordoned",
       MakePod().name("p").uid("p-uid").obj(),
       {"NodeUnschedulable"},
       kNode,
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HintEnv env;
    env.reject(c.pod, c.rejectedBy);
    // The node before: tainted for TaintToleration, cordoned for NodeUnschedulable.
    auto before = nodeWith([&](api::Node& n) {
      if (c.rejectedBy.contains("TaintToleration"))
        n.spec.taints = {{"dedicated", "gpu", "NoSchedule"}};
      if (c.rejectedBy.contains("NodeUnschedulable")) n.spec.unschedulable = true;
    });
    for (const ClusterEvent& e : framework::nodeUpdateEvents(*before, *c.after)) {
      env.queue.movePodsOnEvent(e, EventObjects{.oldNode = before.get(), .newNode = c.after.get()});
    }
    EXPECT_EQ(env.moved(c.pod), c.wantMoved);
  }
}

TEST(QueueingHints, CordonedNodeTaintChangeKeepsNodeUnschedulableRejectionsParked) {
  HintEnv env;
  auto p = MakePod().name("p").uid("p-uid").obj();
  env.reject(p, {"NodeUnschedulable"});
  auto before = nodeWith([](api::Node& n) { n.spec.unschedulable = true; });
  auto after = nodeWith([](api::Node& n) {
    n.spec.unschedulable = true;
    n.spec.taints = {{"k", "v", "PreferNoSchedule"}};
  });
  env.queue.movePodsOnEvent(events::kNodeTaintChange,
                            {.oldNode = before.get(), .newNode = after.get()});
  EXPECT_FALSE(env.moved(p));
}

TEST(QueueingHints, AssignedPodDeleteMovesPodsWaitingForWhatItFreed) {
  struct Case {
    const char* name;
    api::PodPtr pod;
    std::set<std::string> rejectedBy;
    api::PodPtr deleted;
    bool wantMoved;
  };
  const auto wantsPort = MakePod().name("p").uid("p-uid").hostPort(8080).obj();
  const Case cases[] = {
      {"NodePorts: the deleted pod held the port",
       wantsPort,
       {"NodePorts"},
       MakePod().name("old").node("n1").hostPort(8080).obj(),
       true},
      {"NodePorts: the deleted pod held another port",
       wantsPort,
       {"NodePorts"},
       MakePod().name("old").node("n1").hostPort(9090).obj(),
       false},
      {"NodeResourcesFit: the deleted pod's requests are free",
       pending("p"),
       {"NodeResourcesFit"},
       MakePod().name("old").node("n1").req({{"cpu", "1"}}).obj(),
       true},
      {"NodeAffinity did not register pod deletes",
       MakePod().name("p").uid("p-uid").obj(),
       {"NodeAffinity"},
       MakePod().name("old").node("n1").obj(),
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HintEnv env;
    env.reject(c.pod, c.rejectedBy);
    env.queue.movePodsOnEvent(events::kAssignedPodDelete, {.oldPod = c.deleted.get()});
    EXPECT_EQ(env.moved(c.pod), c.wantMoved);
  }
}

TEST(QueueingHints, EventNoPluginRegisteredMovesNothing) {
  struct Case {
    const char* name;
    std::set<std::string> rejectedBy;
  };
  const Case cases[] = {
      {"rejected by a plugin", {"NodeResourcesFit"}},
      {"failed without a rejecting plugin", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HintEnv env;
    auto p = pending("p");
    env.reject(p, c.rejectedBy);
    for (const ClusterEvent& e : {events::kNodeConditionChange, events::kNodeAnnotationChange}) {
      env.queue.movePodsOnEvent(e);
    }
    EXPECT_FALSE(env.moved(p));
  }
}

TEST(QueueingHints, PodWithoutRejectingPluginsMovesOnAnyRegisteredEvent) {
  HintEnv env;
  auto p = pending("p");
  env.reject(p, {});
  auto after = nodeWith([](api::Node& n) { n.metadata.labels["zone"] = "b"; });
  env.queue.movePodsOnEvent(events::kNodeLabelChange,
                            {.oldNode = kNode.get(), .newNode = after.get()});
  EXPECT_TRUE(env.moved(p));
}

TEST(QueueingHints, UnschedulableTimeoutMovesEveryPod) {
  struct Case {
    const char* name;
    std::function<void(HintEnv&)> flush;
  };
  const Case cases[] = {
      {"parked longer than podMaxInUnschedulablePodsDuration",
       [](HintEnv& env) {
         env.clock.advance(5min);
         env.queue.flushUnschedulablePodsLeftover();
       }},
      {"the wildcard event",
       [](HintEnv& env) { env.queue.movePodsOnEvent(events::kUnschedulableTimeout); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HintEnv env;
    std::vector<api::PodPtr> pods;
    for (const char* plugin : {"NodeResourcesFit", "NodeAffinity", "TaintToleration", "NodePorts",
                               "NodeUnschedulable"}) {
      pods.push_back(pending(std::string("rejected-by-") + plugin));
      env.reject(pods.back(), {plugin});
    }
    c.flush(env);
    for (const auto& p : pods) EXPECT_TRUE(env.moved(p)) << p->metadata.name;
  }
}

}  // namespace
}  // namespace berth::queue
