// Store::bind: the pods/binding subresource.

#include <algorithm>

#include "pkg/apiserver/object_meta.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

}  // namespace

ApiResult<std::string> Store::bind(std::string_view ns, std::string_view name,
                                   const json& binding) {
  if (!binding.is_object()) {
    return badRequest("the body of the request was in an unknown format");
  }
  const std::string bindingName = stringAt(binding, {"metadata", "name"});
  if (bindingName != name) {
    return badRequest("name in URL does not match name in Binding object");
  }
  // ValidatePodBinding's errors reach the client as a plain error: 500, reason unknown.
  const std::string targetKind = stringAt(binding, {"target", "kind"});
  if (!targetKind.empty() && targetKind != "Node") {
    return apiError(500, "",
                    "target.kind: Unsupported value: " + util::quoteGo(targetKind) +
                        ": supported values: \"Node\", \"<empty>\"");
  }
  const std::string node = stringAt(binding, {"target", "name"});
  if (node.empty()) {
    return apiError(500, "", "target.name: Required value");
  }
  Preconditions pre{stringAt(binding, {"metadata", "uid"}),
                    stringAt(binding, {"metadata", "resourceVersion"})};

  std::lock_guard lock(mu_);
  Table& t = table(Resource::Pods);
  auto it = t.objects.find({std::string(ns), std::string(name)});
  if (it == t.objects.end()) {
    return notFound(resourceInfo(Resource::Pods), name);
  }
  if (auto error = checkPreconditions(Resource::Pods, pre, it->second, ns, name)) {
    return *error;
  }
  const json& pod = it->second;
  if (!stringAt(pod, {"metadata", "deletionTimestamp"}).empty()) {
    return objectError(
        ObjectError::Conflict, "", "pods/binding", name,
        "pod " + std::string(name) + " is being deleted, cannot be assigned to a host");
  }
  const std::string assigned = stringAt(pod, {"spec", "nodeName"});
  if (!assigned.empty()) {
    return objectError(
        ObjectError::Conflict, "", "pods/binding", name,
        "pod " + std::string(name) + " is already assigned to node " + util::quoteGo(assigned));
  }
  auto spec = pod.find("spec");
  if (spec != pod.end() && spec->is_object() && spec->contains("schedulingGates") &&
      (*spec)["schedulingGates"].is_array() && !(*spec)["schedulingGates"].empty()) {
    return objectError(ObjectError::Conflict, "", "pods/binding", name,
                       "pod " + std::string(name) + " has non-empty .spec.schedulingGates");
  }

  json next = pod;
  next["spec"]["nodeName"] = node;
  const json& bindingMeta = binding.contains("metadata") ? binding["metadata"] : json::object();
  if (bindingMeta.is_object() && bindingMeta.contains("annotations") &&
      bindingMeta["annotations"].is_object()) {
    for (const auto& [k, v] : bindingMeta["annotations"].items()) {
      next["metadata"]["annotations"][k] = v;
    }
  }
  // podutil.UpdatePodCondition: the condition is replaced; the transition time moves only when
  // the status changes.
  json condition = {{"type", "PodScheduled"},
                    {"status", "True"},
                    {"lastProbeTime", nullptr},
                    {"lastTransitionTime", now()}};
  json& status = next["status"];
  if (!status.is_object()) {
    status = json::object();
  }
  json& conditions = status["conditions"];
  if (!conditions.is_array()) {
    conditions = json::array();
  }
  auto existing = std::find_if(conditions.begin(), conditions.end(), [](const json& c) {
    return c.is_object() && c.value("type", "") == "PodScheduled";
  });
  if (existing == conditions.end()) {
    conditions.push_back(std::move(condition));
  } else {
    if (existing->value("status", "") == "True" && existing->contains("lastTransitionTime")) {
      condition["lastTransitionTime"] = (*existing)["lastTransitionTime"];
    }
    *existing = std::move(condition);
  }
  // The stored pod becomes the event's previous object: moved, not copied (a bind is the hot path
  // of every scheduler benchmark).
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Modified, std::move(next),
                     std::move(it->second)};
  setVersion(entry.object, entry.rv);
  it->second = entry.object;
  std::string version = std::to_string(entry.rv);
  publish(Resource::Pods, std::move(entry));
  return version;
}

}  // namespace berth::apiserver
