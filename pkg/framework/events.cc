#include "pkg/framework/events.h"

#include <algorithm>
#include <map>
#include <string>

namespace berth::framework {
namespace {

bool sameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const api::Taint& x, const api::Taint& y) {
                      return x.key == y.key && x.value == y.value && x.effect == y.effect;
                    });
}

// Conditions compared as upstream does: type -> status, ignoring heartbeat times and messages.
std::map<std::string, std::string> conditionStatuses(const api::Node& node) {
  std::map<std::string, std::string> out;
  for (const auto& c : node.status.conditions) out[c.type] = c.status;
  return out;
}

}  // namespace

std::vector<ClusterEvent> nodeUpdateEvents(const api::Node& oldNode, const api::Node& newNode) {
  std::vector<ClusterEvent> out;
  if (oldNode.spec.unschedulable && !newNode.spec.unschedulable) {
    out.push_back(events::kNodeSpecUnschedulableChange);
  }
  // Quantity equality is semantic: "1" and "1000m" are the same allocatable cpu.
  if (oldNode.status.allocatable != newNode.status.allocatable) {
    out.push_back(events::kNodeAllocatableChange);
  }
  if (oldNode.metadata.labels != newNode.metadata.labels) out.push_back(events::kNodeLabelChange);
  if (!sameTaints(oldNode.spec.taints, newNode.spec.taints)) {
    out.push_back(events::kNodeTaintChange);
  }
  if (conditionStatuses(oldNode) != conditionStatuses(newNode)) {
    out.push_back(events::kNodeConditionChange);
  }
  if (oldNode.metadata.annotations != newNode.metadata.annotations) {
    out.push_back(events::kNodeAnnotationChange);
  }
  return out;
}

QueueingHint ClusterEventWithHint::hint(const ClusterEvent& incoming, const api::Pod& pod,
                                        const EventObjects& objects) const {
  if (!event.matches(incoming)) return QueueingHint::Skip;
  if (incoming.resource == EventResource::Node && nodeHint &&
      (objects.oldNode != nullptr || objects.newNode != nullptr)) {
    return nodeHint(pod, objects.oldNode, objects.newNode);
  }
  if (incoming.resource == EventResource::AssignedPod && podHint &&
      (objects.oldPod != nullptr || objects.newPod != nullptr)) {
    return podHint(pod, objects.oldPod, objects.newPod);
  }
  if (incoming.resource == EventResource::PersistentVolumeClaim && claimHint &&
      (objects.oldClaim != nullptr || objects.newClaim != nullptr)) {
    return claimHint(pod, objects.oldClaim, objects.newClaim);
  }
  return QueueingHint::Queue;
}

}  // namespace berth::framework
