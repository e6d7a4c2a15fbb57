// nodeUpdateEvents: the cluster events a node update amounts to.

#include "pkg/framework/events.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/builders.h"

namespace berth::framework {
namespace {

using test::MakeNode;

TEST(NodeUpdateEvents, ClassifiesWhatChanged) {
  const api::NodePtr base = MakeNode()
                                .name("n1")
                                .label("zone", "a")
                                .taint("dedicated", "gpu", "NoSchedule")
                                .allocatable({{"cpu", "4"}, {"memory", "8Gi"}})
                                .obj();
  auto with = [&](const std::function<void(api::Node&)>& edit) {
    auto node = std::make_shared<api::Node>(*base);
    edit(*node);
    return node;
  };
  struct Case {
    const char* name;
    api::NodePtr oldNode, newNode;
    std::vector<std::string_view> want;
  };
  const auto cordoned = with([](api::Node& n) { n.spec.unschedulable = true; });
  const Case cases[] = {
      {"nothing scheduling reads changed (resourceVersion only)",
       base,
       with([](api::Node& n) { n.metadata.resourceVersion = "42"; }),
       {}},
      {"label added",
       base,
       with([](api::Node& n) { n.metadata.labels["disk"] = "ssd"; }),
       {"NodeLabelChange"}},
      {"taint removed",
       base,
       with([](api::Node& n) { n.spec.taints.clear(); }),
       {"NodeTaintChange"}},
      {"taint effect changed",
       base,
       with([](api::Node& n) { n.spec.taints[0].effect = "PreferNoSchedule"; }),
       {"NodeTaintChange"}},
      {"allocatable grew",
       base,
       with([](api::Node& n) { n.status.allocatable["cpu"] = test::quantity("8"); }),
       {"NodeAllocatableChange"}},
      {"allocatable written differently but equal",
       base,
       with([](api::Node& n) { n.status.allocatable["cpu"] = test::quantity("4000m"); }),
       {}},
      {"uncordoned", cordoned, base, {"NodeSpecUnschedulableChange"}},
      {"cordoned: cannot help any pod", base, cordoned, {}},
      {"condition status changed",
       base,
       with([](api::Node& n) {
         n.status.conditions.push_back({"Ready", "True", "", ""});
       }),
       {"NodeConditionChange"}},
      {"annotation changed",
       base,
       with([](api::Node& n) { n.metadata.annotations["note"] = "x"; }),
       {"NodeAnnotationChange"}},
      {"several at once, in upstream's order",
       cordoned,
       with([](api::Node& n) {
         n.metadata.labels["disk"] = "ssd";
         n.status.allocatable["pods"] = test::quantity("110");
       }),
       {"NodeSpecUnschedulableChange", "NodeAllocatableChange", "NodeLabelChange"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string_view> got;
    for (const auto& e : nodeUpdateEvents(*c.oldNode, *c.newNode)) got.push_back(e.label);
    EXPECT_EQ(got, c.want);
  }
}

}  // namespace
TEST(ClusterEvent, NamespaceUpdateMatchesOnlyNamespaceAndWildcardRegistrations) {
  struct Case {
    std::string name;
    ClusterEvent registration;
    bool matches;
  };
  const Case cases[] = {
      {"namespace label", {EventResource::Namespace, ActionType::UpdateNamespaceLabel}, true},
      {"every namespace action", {EventResource::Namespace, ActionType::All}, true},
      {"wildcard", {EventResource::WildCard, ActionType::All}, true},
      {"namespace add only", {EventResource::Namespace, ActionType::Add}, false},
      {"node label", {EventResource::Node, ActionType::UpdateNodeLabel}, false},
      {"every node action", {EventResource::Node, ActionType::All}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.registration.matches(events::kNamespaceUpdate), c.matches) << c.name;
  }
  // Without a hint for namespaces, a matching registration queues the pod.
  const ClusterEventWithHint registered{{EventResource::Namespace, ActionType::All}};
  EXPECT_EQ(registered.hint(events::kNamespaceUpdate, api::Pod{}, {}), QueueingHint::Queue);
}

}  // namespace berth::framework
