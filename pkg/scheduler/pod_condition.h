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
std::optional<nlohmann::json> podScheduledConditionPatch(const api::Pod& pod,
                                                         const std::string& reason,
                                                         const std::string& message,
                                                         api::Timestamp now);

}  // namespace berth::scheduler
