#pragma once
// ClusterEvent: a change in the cluster that may make pending pods schedulable (upstream's
// fwk.ClusterEvent and pkg/scheduler/framework/events.go). The event handlers turn informer
// notifications into these and hand them to SchedulingQueue::movePodsOnEvent. Labels are upstream's
// event names, the `event` label of scheduler_queue_incoming_pods_total.

#include <cstdint>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"

namespace berth::queue {

enum class EventResource : uint8_t { Node, AssignedPod, WildCard };

// What happened to the resource. Node updates are split by the fields scheduling reads.
enum class ActionType : uint8_t {
  Add,
  Delete,
  UpdateNodeAllocatable,
  UpdateNodeLabel,
  UpdateNodeTaint,  // also a node uncordoned (spec.unschedulable set to false), as upstream
  UpdateNodeCondition,
  UpdateNodeAnnotation,
  All,  // a special event that concerns every pod (e.g. UnschedulableTimeout)
};

struct ClusterEvent {
  EventResource resource = EventResource::WildCard;
  ActionType action = ActionType::All;
  std::string_view label;  // a string literal
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
// An assigned pod was deleted or reached Succeeded/Failed (the informer filters terminal pods out,
// so their end arrives as a delete): its resources and ports are free again.
inline constexpr ClusterEvent kAssignedPodDelete{EventResource::AssignedPod, ActionType::Delete,
                                                 "AssignedPodDelete"};
inline constexpr ClusterEvent kUnschedulableTimeout{EventResource::WildCard, ActionType::All,
                                                    "UnschedulableTimeout"};
}  // namespace events

// The events a node update amounts to, in upstream's order (NodeSchedulingPropertiesChange):
// uncordon, allocatable, labels, taints, conditions (type -> status only), annotations. Cordoning
// yields nothing: it cannot make a pod schedulable.
std::vector<ClusterEvent> nodeUpdateEvents(const api::Node& oldNode, const api::Node& newNode);

// Whether the event can make an unschedulable pod schedulable for berth's plugins: the union of
// what the in-tree plugins register for (node add, label/taint/allocatable updates, assigned pod
// delete) plus the wildcard events. Node condition and annotation changes concern none of them.
bool canMovePods(const ClusterEvent& event);

}  // namespace berth::queue
