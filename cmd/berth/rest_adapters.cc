#include "pkg/scheduler/api_writes.h"

#include "pkg/api/decode.h"

namespace berth::scheduler {

using json = nlohmann::json;

json bindingFor(const api::Pod& pod, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata",
           {{"name", pod.metadata.name},
            {"namespace", pod.metadata.namespace_},
            {"uid", pod.metadata.uid}}},
          {"target", {{"kind", "Node"}, {"name", node}}}};
}

framework::Status RestBinder::bind(const api::Pod& pod, const std::string& node) {
  auto answer = client_.post(client::kPods, pod.metadata.namespace_, pod.metadata.name, "binding",
                             bindingFor(pod, node));
  if (answer.ok()) return framework::Status();
  return framework::Status::error(answer.error().toString());
}

namespace {

events::Sink::Outcome outcomeOf(const client::ApiResult<json>& answer) {
  if (answer.ok()) return events::Sink::Outcome::Ok;
  const client::ApiFailure& failure = answer.error();
  if (failure.isNotFound()) return events::Sink::Outcome::NotFound;
  if (failure.isStatus(409)) return events::Sink::Outcome::AlreadyExists;
  if (failure.isTransient()) return events::Sink::Outcome::Unavailable;
  return events::Sink::Outcome::Rejected;
}

const client::Resource& eventsResource(events::Api api) {
  return api == events::Api::EventsV1 ? client::kEventsV1 : client::kEvents;
}

}  // namespace

events::Sink::Outcome RestEventSink::create(events::Api api, const std::string& ns,
                                            const json& event) {
  return outcomeOf(client_.create(eventsResource(api), ns, event));
}

events::Sink::Outcome RestEventSink::patch(events::Api api, const std::string& ns,
                                           const std::string& name, const json& patch) {
  return outcomeOf(
      client_.patch(eventsResource(api), ns, name, client::PatchType::StrategicMerge, patch));
}

events::Api discoverEventsApi(client::RestClient& client) {
  // Discovery needs no RBAC rule (system:discovery); only a 404 means the group is not served.
  auto answer = client.getPath("/apis/events.k8s.io/v1");
  if (!answer.ok() && answer.error().isNotFound()) return events::Api::CoreV1;
  return events::Api::EventsV1;
}

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
