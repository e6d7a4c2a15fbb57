#include "pkg/scheduler/pod_condition.h"

#include "pkg/api/decode.h"

namespace berth::scheduler {

using json = nlohmann::json;

std::optional<json> podScheduledConditionPatch(const api::Pod& pod, const std::string& reason,
                                               const std::string& message, api::Timestamp now) {
  api::Timestamp transition = now;
  for (const api::PodCondition& c : pod.status.conditions) {
    if (c.type != "PodScheduled") continue;
    if (c.status == "False" && c.reason == reason && c.message == message) return std::nullopt;
    if (c.status == "False" && c.lastTransitionTime) transition = *c.lastTransitionTime;
  }
  json condition = {
      {"type", "PodScheduled"},   {"status", "False"},
      {"reason", reason},         {"message", message},
      {"lastProbeTime", nullptr}, {"lastTransitionTime", api::formatTimestamp(transition)}};
  return json{{"status", {{"conditions", json::array({condition})}}}};
}

}  // namespace berth::scheduler
