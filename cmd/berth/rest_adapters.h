#pragma once
// The daemon's writes to the API server, as kube-scheduler makes them: the Binding of a scheduling
// decision, the PodScheduled=False condition of a pod that cannot be placed, and Events. Each is a
// small adapter from a core interface (framework::PodBinder, events::Sink) or decision onto
// client::RestClient.

#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/client/rest.h"
#include "pkg/events/recorder.h"
#include "pkg/framework/handle.h"

namespace berth::scheduler {

// POSTs exactly one v1 Binding per call (the client never retries a POST). A failure comes back as
// an Error status carrying the server's message; the caller then reads the pod to learn what
// happened, since a lost answer may hide a binding that landed.
class RestBinder : public framework::PodBinder {
 public:
  explicit RestBinder(client::RestClient& client) : client_(client) {}

  // framework::PodBinder
  framework::Status bind(const api::Pod& pod, const std::string& node) override;

 private:
  client::RestClient& client_;
};

// The v1 Binding kube-scheduler's DefaultBinder sends: the pod's name and uid, target the node.
nlohmann::json bindingFor(const api::Pod& pod, const std::string& node);

// Writes events through the client; events::Recorder decides what to write.
class RestEventSink : public events::Sink {
 public:
  explicit RestEventSink(client::RestClient& client) : client_(client) {}

  // events::Sink
  Outcome create(events::Api api, const std::string& ns, const nlohmann::json& event) override;
  Outcome patch(events::Api api, const std::string& ns, const std::string& name,
                const nlohmann::json& patch) override;

 private:
  client::RestClient& client_;
};

// events.k8s.io/v1 when the server serves it, else core/v1 (client-go's EventBroadcasterAdapter
// asks discovery the same question).
events::Api discoverEventsApi(client::RestClient& client);

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
