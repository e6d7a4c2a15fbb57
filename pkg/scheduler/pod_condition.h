#pragma once
// The PodScheduled=False condition kube-scheduler writes on a pod it cannot place.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pkg/api/types.h"

namespace berth::scheduler {

// The strategic-merge patch of pods/NAME/status that records a scheduling failure: condition
// PodScheduled=False with `reason` (Unschedulable or SchedulerError) and `message`. nullopt when
// the pod already carries that exact condition (upstream's UpdatePodCondition "changed" check), so
// repeated failures for the same reason write nothing. lastTransitionTime moves only when the
// condition's status changes.
// With `nominatedNode`, the patch also sets status.nominatedNodeName to it (a preemptor's one
// status patch), and is nullopt only when neither the condition nor the nomination changed.
std::optional<nlohmann::json> podScheduledConditionPatch(
    const api::Pod& pod, const std::string& reason, const std::string& message, api::Timestamp now,
    const std::optional<std::string>& nominatedNode = std::nullopt);

// Preemption's condition on a victim: DisruptionTarget=True, reason PreemptionByScheduler, message
// "<schedulerName>: preempting to accommodate a higher priority pod". nullopt when the victim
// already carries exactly that condition.
inline constexpr std::string_view kDisruptionTarget = "DisruptionTarget";
inline constexpr std::string_view kPreemptionByScheduler = "PreemptionByScheduler";
std::optional<nlohmann::json> disruptionTargetPatch(const api::Pod& victim,
                                                    const std::string& schedulerName,
                                                    api::Timestamp now);

}  // namespace berth::scheduler
