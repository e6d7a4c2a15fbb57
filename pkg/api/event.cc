#include "pkg/api/event.h"

#include "pkg/api/decode.h"

namespace berth::api {

using json = nlohmann::json;

json encodeObjectReference(const ObjectReference& ref) {
  json out = json::object();
  auto put = [&](const char* field, const std::string& value) {
    if (!value.empty()) out[field] = value;
  };
  put("kind", ref.kind);
  put("namespace", ref.namespace_);
  put("name", ref.name);
  put("uid", ref.uid);
  put("apiVersion", ref.apiVersion);
  put("resourceVersion", ref.resourceVersion);
  return out;
}

json encodeEvent(const Event& event) {
  json out = {{"apiVersion", "events.k8s.io/v1"},
              {"kind", "Event"},
              {"metadata", {{"name", event.name}, {"namespace", event.namespace_}}},
              {"eventTime", formatMicroTimestamp(event.time)},
              {"reportingController", event.reportingController},
              {"reportingInstance", event.reportingInstance},
              {"action", event.action},
              {"reason", event.reason},
              {"regarding", encodeObjectReference(event.regarding)},
              {"note", event.note},
              {"type", event.type}};
  if (event.related) out["related"] = encodeObjectReference(*event.related);
  return out;
}

json encodeCoreV1Event(const Event& event) {
  const std::string time = formatTimestamp(event.time);
  json out = {{"apiVersion", "v1"},
              {"kind", "Event"},
              {"metadata", {{"name", event.name}, {"namespace", event.namespace_}}},
              {"involvedObject", encodeObjectReference(event.regarding)},
              {"reason", event.reason},
              {"message", event.note},
              {"source", {{"component", event.reportingController}}},
              {"firstTimestamp", time},
              {"lastTimestamp", time},
              {"count", 1},
              {"type", event.type},
              {"action", event.action},
              {"reportingComponent", event.reportingController},
              {"reportingInstance", event.reportingInstance}};
  if (event.related) out["related"] = encodeObjectReference(*event.related);
  return out;
}

}  // namespace berth::api
