#include "pkg/apiserver/object_meta.h"

#include <charconv>
#include <string>

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// etcd key prefixes (nodes are still stored as "minions"); they appear in precondition errors.
std::string_view storagePrefix(Resource resource) {
  switch (resource) {
    case Resource::Nodes:
      return "/registry/minions/";
    case Resource::Pods:
      return "/registry/pods/";
    case Resource::Events:
    case Resource::EventsV1:
      return "/registry/events/";
    case Resource::Leases:
      return "/registry/leases/";
    case Resource::Namespaces:
      return "/registry/namespaces/";
    case Resource::Services:
      return "/registry/services/specs/";
    case Resource::ReplicationControllers:
      return "/registry/controllers/";
    case Resource::ReplicaSets:
      return "/registry/replicasets/";
    case Resource::StatefulSets:
      return "/registry/statefulsets/";
    case Resource::PodDisruptionBudgets:
      return "/registry/poddisruptionbudgets/";
    case Resource::PersistentVolumeClaims:
      return "/registry/persistentvolumeclaims/";
    case Resource::PersistentVolumes:
      return "/registry/persistentvolumes/";
    case Resource::StorageClasses:
      return "/registry/storageclasses/";
    case Resource::CSINodes:
      return "/registry/csinodes/";
    case Resource::CSIDrivers:
      return "/registry/csidrivers/";
    case Resource::CSIStorageCapacities:
      return "/registry/csistoragecapacities/";
    case Resource::ConfigMaps:
      return "/registry/configmaps/";
  }
  return "/registry/";
}

}  // namespace

ApiError notFound(const ResourceInfo& info, std::string_view name) {
  return objectError(ObjectError::NotFound, info.group, info.name, name);
}

std::optional<ApiError> checkPreconditions(Resource resource, const api::Preconditions& pre,
                                           const json& object, std::string_view ns,
                                           std::string_view name) {
  const ResourceInfo& info = resourceInfo(resource);
  const json& meta = object["metadata"];
  std::string detail;
  const std::string uid = meta.value("uid", "");
  const std::string rv = meta.value("resourceVersion", "");
  if (!pre.uid.empty() && pre.uid != uid) {
    detail =
        "Precondition failed: UID in precondition: " + pre.uid + ", UID in object meta: " + uid;
  } else if (!pre.resourceVersion.empty() && pre.resourceVersion != rv) {
    detail = "Precondition failed: ResourceVersion in precondition: " + pre.resourceVersion +
             ", ResourceVersion in object meta: " + rv;
  } else {
    return std::nullopt;
  }
  std::string key(storagePrefix(resource));
  if (info.namespaced) {
    key += std::string(ns) + "/";
  }
  key += name;
  return objectError(ObjectError::Conflict, info.group, info.name, name,
                     "StorageError: invalid object, Code: 4, Key: " + key +
                         ", ResourceVersion: 0, AdditionalErrorMsg: " + detail);
}

std::optional<uint64_t> parseVersion(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return v;
}

api::StringMap labelsOf(const json& object) {
  api::StringMap out;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return out;
  }
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) {
    return out;
  }
  for (const auto& [k, v] : labels->items()) {
    if (v.is_string()) {
      out[k] = v.get<std::string>();
    }
  }
  return out;
}

json& metadataOf(json& object) {
  json& meta = object["metadata"];
  if (!meta.is_object()) {
    meta = json::object();
  }
  return meta;
}

void setVersion(json& object, uint64_t rv) {
  metadataOf(object)["resourceVersion"] = std::to_string(rv);
}

ApiError tooLargeResourceVersion(uint64_t requested, uint64_t current) {
  ApiError error = apiError(504, "Timeout",
                            "Timeout: Too large resource version: " + std::to_string(requested) +
                                ", current: " + std::to_string(current));
  error.status.details.causes = {
      {.reason = "ResourceVersionTooLarge", .message = "Too large resource version"}};
  error.status.details.retryAfterSeconds = 1;
  return error;
}

}  // namespace berth::apiserver
