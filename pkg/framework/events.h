#pragma once
// ClusterEvent: a change in the cluster that may make pending pods schedulable (upstream's
// fwk.ClusterEvent and pkg/scheduler/framework/events.go). The event handlers turn informer
// notifications into these and hand them to SchedulingQueue::movePodsOnEvent; plugins register the
// events that may undo their rejections (EnqueueExtensions), with an optional QueueingHint function
// that looks at the changed object. Labels are upstream's event names, the `event` label of
// scheduler_queue_incoming_pods_total.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"

namespace berth::framework {

enum class EventResource : uint8_t {
  Node,
  AssignedPod,
  Namespace,
  PersistentVolumeClaim,
  PersistentVolume,
  StorageClass,
  CSINode,
  CSIDriver,
  CSIStorageCapacity,
  WildCard
};

// What happened to the resource, as bits so that a registration can name several (upstream's
// ActionType). Node updates are split by the fields scheduling reads.
enum class ActionType : uint16_t {
  Add = 1 << 0,
  Delete = 1 << 1,
  UpdateNodeAllocatable = 1 << 2,
  UpdateNodeLabel = 1 << 3,
  UpdateNodeTaint =
      1 << 4,  // also a node uncordoned (spec.unschedulable set to false), as upstream
  UpdateNodeCondition = 1 << 5,
  UpdateNodeAnnotation = 1 << 6,
  UpdatePodLabel = 1 << 7,
  UpdateNamespaceLabel = 1 << 8,
  Update = 1 << 9,      // any change of the storage kinds (upstream registers them as Update)
  All = (1 << 10) - 1,  // every action; with WildCard, an event that concerns every pod
};

constexpr ActionType operator|(ActionType a, ActionType b) {
  return static_cast<ActionType>(static_cast<uint16_t>(a) | static_cast<uint16_t>(b));
}

struct ClusterEvent {
  constexpr ClusterEvent() = default;
  constexpr ClusterEvent(EventResource r, ActionType a, std::string_view l = {})
      : resource(r), action(a), label(l) {}

  EventResource resource = EventResource::WildCard;
  ActionType action = ActionType::All;
  std::string_view label;  // a string literal; registrations may leave it empty

  // Upstream's IsWildCard: the event (e.g. UnschedulableTimeout) may help any pod.
  constexpr bool isWildCard() const {
    return resource == EventResource::WildCard && action == ActionType::All;
  }
  // Upstream's Match, with this as the registration: same resource (or a wildcard one) and a
  // common action.
  constexpr bool matches(const ClusterEvent& incoming) const {
    return isWildCard() ||
           ((resource == EventResource::WildCard || resource == incoming.resource) &&
            (static_cast<uint16_t>(action) & static_cast<uint16_t>(incoming.action)) != 0);
  }
};

namespace events {
inline constexpr ClusterEvent kNodeAdd{EventResource::Node, ActionType::Add, "NodeAdd"};
inline constexpr ClusterEvent kNodeSpecUnschedulableChange{
    EventResource::Node, ActionType::UpdateNodeTaint, "NodeSpecUnschedulableChange"};
inline constexpr ClusterEvent kNodeAllocatableChange{
    EventResource::Node, ActionType::UpdateNodeAllocatable, "NodeAllocatableChange"};
inline constexpr ClusterEvent kNodeLabelChange{EventResource::Node, ActionType::UpdateNodeLabel,
                                               "NodeLabelChange"};
inline constexpr ClusterEvent kNodeTaintChange{EventResource::Node, ActionType::UpdateNodeTaint,
                                               "NodeTaintChange"};
inline constexpr ClusterEvent kNodeConditionChange{
    EventResource::Node, ActionType::UpdateNodeCondition, "NodeConditionChange"};
inline constexpr ClusterEvent kNodeAnnotationChange{
    EventResource::Node, ActionType::UpdateNodeAnnotation, "NodeAnnotationChange"};
// A pod became assigned (bound, by berth or anyone) or appeared already bound.
inline constexpr ClusterEvent kAssignedPodAdd{EventResource::AssignedPod, ActionType::Add,
                                              "AssignedPodAdd"};
// An assigned pod's labels changed (what inter-pod constraints select on).
inline constexpr ClusterEvent kAssignedPodUpdate{EventResource::AssignedPod,
                                                 ActionType::UpdatePodLabel, "AssignedPodUpdate"};
// An assigned pod was deleted or reached Succeeded/Failed (the informer filters terminal pods out,
// so their end arrives as a delete): its resources and ports are free again.
inline constexpr ClusterEvent kAssignedPodDelete{EventResource::AssignedPod, ActionType::Delete,
                                                 "AssignedPodDelete"};
// A namespace's labels changed (what a pod affinity term's namespaceSelector selects on).
inline constexpr ClusterEvent kNamespaceUpdate{EventResource::Namespace,
                                               ActionType::UpdateNamespaceLabel, "NamespaceUpdate"};
// The storage kinds the volume plugins read, with upstream's labels.
inline constexpr ClusterEvent kPersistentVolumeClaimAdd{
    EventResource::PersistentVolumeClaim, ActionType::Add, "PersistentVolumeClaimAdd"};
inline constexpr ClusterEvent kPersistentVolumeClaimUpdate{
    EventResource::PersistentVolumeClaim, ActionType::Update, "PersistentVolumeClaimUpdate"};
inline constexpr ClusterEvent kPersistentVolumeAdd{EventResource::PersistentVolume, ActionType::Add,
                                                   "PersistentVolumeAdd"};
inline constexpr ClusterEvent kPersistentVolumeUpdate{EventResource::PersistentVolume,
                                                      ActionType::Update, "PersistentVolumeUpdate"};
inline constexpr ClusterEvent kStorageClassAdd{EventResource::StorageClass, ActionType::Add,
                                               "StorageClassAdd"};
inline constexpr ClusterEvent kStorageClassUpdate{EventResource::StorageClass, ActionType::Update,
                                                  "StorageClassUpdate"};
inline constexpr ClusterEvent kCSINodeAdd{EventResource::CSINode, ActionType::Add, "CSINodeAdd"};
inline constexpr ClusterEvent kCSINodeUpdate{EventResource::CSINode, ActionType::Update,
                                             "CSINodeUpdate"};
inline constexpr ClusterEvent kCSIDriverAdd{EventResource::CSIDriver, ActionType::Add,
                                            "CSIDriverAdd"};
inline constexpr ClusterEvent kCSIDriverUpdate{EventResource::CSIDriver, ActionType::Update,
                                               "CSIDriverUpdate"};
inline constexpr ClusterEvent kCSIStorageCapacityAdd{EventResource::CSIStorageCapacity,
                                                     ActionType::Add, "CSIStorageCapacityAdd"};
inline constexpr ClusterEvent kCSIStorageCapacityUpdate{
    EventResource::CSIStorageCapacity, ActionType::Update, "CSIStorageCapacityUpdate"};
inline constexpr ClusterEvent kUnschedulableTimeout{EventResource::WildCard, ActionType::All,
                                                    "UnschedulableTimeout"};
}  // namespace events

// The events a node update amounts to, in upstream's order (NodeSchedulingPropertiesChange):
// uncordon, allocatable, labels, taints, conditions (type -> status only), annotations. Cordoning
// yields nothing: it cannot make a pod schedulable.
std::vector<ClusterEvent> nodeUpdateEvents(const api::Node& oldNode, const api::Node& newNode);

// Whether an event makes a pod a plugin rejected worth another attempt (upstream's QueueingHint).
enum class QueueingHint : uint8_t { Skip, Queue };

// The objects an event is about: the node before and after a Node event (no before on an add), the
// pod before and after an AssignedPod event (no after on a delete), the claim before and after a
// PersistentVolumeClaim event. Null where there is none.
struct EventObjects {
  const api::Node* oldNode = nullptr;
  const api::Node* newNode = nullptr;
  const api::Pod* oldPod = nullptr;
  const api::Pod* newPod = nullptr;
  const api::PersistentVolumeClaim* oldClaim = nullptr;
  const api::PersistentVolumeClaim* newClaim = nullptr;
};

// Hints for the rejected `pod`, one signature per resource. Called under the queue's lock on the
// event handler's thread: they must only read the pod, the objects and the plugin.
using NodeQueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const api::Node* oldNode,
                                                      const api::Node* newNode)>;
using PodQueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const api::Pod* oldPod,
                                                     const api::Pod* newPod)>;
using ClaimQueueingHintFn =
    std::function<QueueingHint(const api::Pod& pod, const api::PersistentVolumeClaim* oldClaim,
                               const api::PersistentVolumeClaim* newClaim)>;

// The hint of a plugin that rejects a pod on a node: queue the pod when `passes(pod, node)` turned
// true, that is the node is there after the event and did not pass before it (or was not there).
template <typename Passes>
NodeQueueingHintFn queueWhenNodeNowPasses(Passes passes) {
  return [passes = std::move(passes)](const api::Pod& pod, const api::Node* before,
                                      const api::Node* after) {
    const bool passed = before != nullptr && passes(pod, *before);
    return !passed && after != nullptr && passes(pod, *after) ? QueueingHint::Queue
                                                              : QueueingHint::Skip;
  };
}

// One registration of EnqueueExtensions::eventsToRegister (upstream's ClusterEventWithHint). A
// registration without a hint for the event's resource queues the pod on every matching event.
struct ClusterEventWithHint {
  ClusterEvent event;
  NodeQueueingHintFn nodeHint{};    // Node events
  PodQueueingHintFn podHint{};      // AssignedPod events
  ClaimQueueingHintFn claimHint{};  // PersistentVolumeClaim events

  // Queue when the event matches and the hint (if any) says so. An event without its objects
  // (nothing to judge) queues.
  QueueingHint hint(const ClusterEvent& incoming, const api::Pod& pod,
                    const EventObjects& objects) const;
};

// What each plugin of a profile registered, by plugin name (upstream's queueingHintMap, per
// plugin), gathered by the runtime when the profile is built.
using PluginEvents = std::map<std::string, std::vector<ClusterEventWithHint>, std::less<>>;

}  // namespace berth::framework
