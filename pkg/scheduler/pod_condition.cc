#include "pkg/scheduler/pod_condition.h"

#include "pkg/api/decode.h"

namespace berth::scheduler {

using json = nlohmann::json;

std::optional<json> podScheduledConditionPatch(const api::Pod& pod, const std::string& reason,
                                               const std::string& message, api::Timestamp now,
                                               const std::optional<std::string>& nominatedNode) {
  api::Timestamp transition = now;
  bool unchanged = false;
  for (const api::PodCondition& c : pod.status.conditions) {
    if (c.type != "PodScheduled") continue;
    if (c.status == "False" && c.reason == reason && c.message == message) unchanged = true;
    if (c.status == "False" && c.lastTransitionTime) transition = *c.lastTransitionTime;
  }
  const bool nominationChanged = nominatedNode && *nominatedNode != pod.status.nominatedNodeName;
  if (unchanged && !nominationChanged) return std::nullopt;
  json condition = {
      {"type", "PodScheduled"},   {"status", "False"},
      {"reason", reason},         {"message", message},
      {"lastProbeTime", nullptr}, {"lastTransitionTime", api::formatTimestamp(transition)}};
  json patch{{"status", {{"conditions", json::array({condition})}}}};
  if (nominationChanged) {
    patch["status"]["nominatedNodeName"] =
        nominatedNode->empty() ? json(nullptr) : json(*nominatedNode);
  }
  return patch;
}

std::optional<json> disruptionTargetPatch(const api::Pod& victim, const std::string& schedulerName,
                                          api::Timestamp now) {
  const std::string message = schedulerName + ": preempting to accommodate a higher priority pod";
  for (const api::PodCondition& c : victim.status.conditions) {
    if (c.type == kDisruptionTarget && c.status == "True" && c.reason == kPreemptionByScheduler &&
        c.message == message) {
      return std::nullopt;
    }
  }
  json condition = {{"type", kDisruptionTarget},
                    {"status", "True"},
                    {"reason", kPreemptionByScheduler},
                    {"message", message},
                    {"lastTransitionTime", api::formatTimestamp(now)}};
  return json{{"status", {{"conditions", json::array({condition})}}}};
}

}  // namespace berth::scheduler
