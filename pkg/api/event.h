#pragma once
// The Event berth records about a pod, in the fields it writes: one value encoded either as an
// events.k8s.io/v1 Event or as the older core/v1 Event that clusters without the events API take.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pkg/api/types.h"

namespace berth::api {

nlohmann::json encodeObjectReference(const ObjectReference& ref);

struct Event {
  std::string name{};
  std::string namespace_{};
  Timestamp time{};  // eventTime (v1: firstTimestamp and lastTimestamp, in seconds)
  std::string reportingController{};
  std::string reportingInstance{};
  std::string action{};
  std::string reason{};
  ObjectReference regarding{};
  std::string note{};
  std::string type{};                        // "Normal" or "Warning"
  std::optional<ObjectReference> related{};  // e.g. the preemptor of a Preempted victim
};

// events.k8s.io/v1: eventTime, reportingController/Instance, action, reason, regarding, note, type.
nlohmann::json encodeEvent(const Event& event);
// core/v1: involvedObject, message, source.component and count 1, with the same reporting fields.
nlohmann::json encodeCoreV1Event(const Event& event);

}  // namespace berth::api
