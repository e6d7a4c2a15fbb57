#include "pkg/apiserver/strategy.h"

#include <algorithm>
#include <cstdint>

#include "pkg/api/decode.h"
#include "pkg/api/types.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

json& childObject(json& parent, const char* key) {
  json& child = parent[key];
  if (!child.is_object()) {
    child = json::object();
  }
  return child;
}

// The kinds whose metadata.generation counts spec changes (the workloads and PDBs).
bool isWorkload(Resource resource) {
  return resource == Resource::ReplicaSets || resource == Resource::StatefulSets ||
         resource == Resource::ReplicationControllers || resource == Resource::PodDisruptionBudgets;
}

// The status each strategy's PrepareForCreate resets to, as its v1 type encodes when empty (the
// replica counts are not omitempty).
json emptyStatus(Resource resource) {
  switch (resource) {
    case Resource::Namespaces:
      return {{"phase", "Active"}};
    case Resource::Services:
      return {{"loadBalancer", json::object()}};
    case Resource::ReplicaSets:
    case Resource::ReplicationControllers:
      return {{"replicas", 0}};
    case Resource::StatefulSets:
      return {{"replicas", 0}, {"availableReplicas", 0}};
    case Resource::PodDisruptionBudgets:
      // The disruption controller fills it in; these four are not omitempty.
      return {{"disruptionsAllowed", 0},
              {"currentHealthy", 0},
              {"desiredHealthy", 0},
              {"expectedPods", 0}};
    default:
      return json::object();
  }
}

// Sets object[key] to `value` when absent (or null, as Go decodes a JSON null to the zero value).
void defaultField(json& object, const char* key, const json& value) {
  if (!object.contains(key) || object[key].is_null()) {
    object[key] = value;
  }
}

// A string field defaults when absent or empty (Go's zero value).
void defaultString(json& object, const char* key, std::string_view value) {
  if (!object.contains(key) || !object[key].is_string() || object[key].get<std::string>().empty()) {
    object[key] = value;
  }
}

}  // namespace

void applyDefaults(Resource resource, json& object) {
  switch (resource) {
    case Resource::PersistentVolumeClaims:
      defaultField(childObject(object, "spec"), "volumeMode", "Filesystem");
      defaultString(childObject(object, "status"), "phase", "Pending");
      return;
    case Resource::PersistentVolumes: {
      json& spec = childObject(object, "spec");
      defaultString(spec, "persistentVolumeReclaimPolicy", "Retain");
      defaultField(spec, "volumeMode", "Filesystem");
      defaultString(childObject(object, "status"), "phase", "Pending");
      return;
    }
    case Resource::StorageClasses:
      defaultField(object, "reclaimPolicy", "Delete");
      defaultField(object, "volumeBindingMode", "Immediate");
      return;
    case Resource::CSIDrivers: {
      json& spec = childObject(object, "spec");
      defaultField(spec, "attachRequired", true);
      defaultField(spec, "podInfoOnMount", false);
      defaultField(spec, "storageCapacity", false);
      defaultField(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
      if (!spec.contains("volumeLifecycleModes") || !spec["volumeLifecycleModes"].is_array() ||
          spec["volumeLifecycleModes"].empty()) {
        spec["volumeLifecycleModes"] = json::array({"Persistent"});
      }
      defaultField(spec, "requiresRepublish", false);
      defaultField(spec, "seLinuxMount", false);
      return;
    }
    default:
      return;
  }
}

void defaultNamespaceLabel(json& object) {
  json& meta = childObject(object, "metadata");
  childObject(meta, "labels")["kubernetes.io/metadata.name"] = meta.value("name", "");
}

void prepareForCreate(Resource resource, json& object, std::string_view now) {
  switch (resource) {
    case Resource::Pods: {
      object["status"] = {{"phase", api::kPodPending}};
      json& spec = childObject(object, "spec");
      if (spec.value("schedulerName", "").empty()) {
        spec["schedulerName"] = "default-scheduler";
      }
      return;
    }
    case Resource::Namespaces: {
      // The namespace controller finalizes a namespace by emptying it; the finalizer says so.
      json& finalizers = childObject(object, "spec")["finalizers"];
      if (!finalizers.is_array()) {
        finalizers = json::array();
      }
      if (std::find(finalizers.begin(), finalizers.end(), "kubernetes") == finalizers.end()) {
        finalizers.push_back("kubernetes");
      }
      object["status"] = emptyStatus(resource);
      defaultNamespaceLabel(object);
      return;
    }
    case Resource::Services:
    case Resource::ReplicaSets:
    case Resource::StatefulSets:
    case Resource::ReplicationControllers:
    case Resource::PodDisruptionBudgets:
      object["status"] = emptyStatus(resource);
      if (isWorkload(resource)) {
        childObject(object, "metadata")["generation"] = 1;
      }
      return;
    case Resource::PersistentVolumeClaims:
      object["status"] = {{"phase", "Pending"}};
      return;
    case Resource::PersistentVolumes:
      // The phase's transition time is stamped on every phase change, the first one included.
      object["status"] = {{"phase", "Pending"}, {"lastPhaseTransitionTime", std::string(now)}};
      return;
    default:
      return;
  }
}

void prepareForUpdate(Resource resource, const json& old, json& next) {
  if (resource == Resource::Events || resource == Resource::EventsV1 ||
      resource == Resource::Leases || resource == Resource::ConfigMaps) {
    return;  // no status subresource: an update writes the whole object
  }
  if (old.contains("status")) {
    next["status"] = old["status"];
  } else {
    next.erase("status");
  }
  if (resource == Resource::Namespaces) {
    // Finalizers change only through the finalize subresource.
    const json oldFinalizers = old.contains("spec") && old["spec"].is_object()
                                   ? old["spec"].value("finalizers", json())
                                   : json();
    json& spec = childObject(next, "spec");
    if (oldFinalizers.is_null()) {
      spec.erase("finalizers");
    } else {
      spec["finalizers"] = oldFinalizers;
    }
    defaultNamespaceLabel(next);
  }
  if (resource == Resource::Pods) {
    // SetDefaults_PodSpec runs on every decode: a body without a scheduler names the default one.
    json& spec = childObject(next, "spec");
    if (spec.value("schedulerName", "").empty()) {
      spec["schedulerName"] = "default-scheduler";
    }
  }
  if (isWorkload(resource)) {
    const json& oldMeta = old["metadata"];
    const int64_t generation = oldMeta.value("generation", int64_t{0});
    const bool specChanged = old.value("spec", json()) != next.value("spec", json());
    childObject(next, "metadata")["generation"] = specChanged ? generation + 1 : generation;
  }
}

void prepareForStatusUpdate(Resource resource, const json& old, json& next, std::string_view now) {
  if (resource != Resource::PersistentVolumes) {
    return;
  }
  const json oldStatus = old.value("status", json::object());
  json& status = childObject(next, "status");
  const json oldTime = oldStatus.value("lastPhaseTransitionTime", json());
  const json newTime = status.value("lastPhaseTransitionTime", json());
  // A phase change the writer did not stamp itself gets the server's time.
  if (oldStatus.value("phase", json()) != status.value("phase", json()) &&
      (newTime.is_null() || newTime == oldTime)) {
    status["lastPhaseTransitionTime"] = std::string(now);
  }
}

bool validatesOnWrite(Resource resource) {
  switch (resource) {
    case Resource::PersistentVolumeClaims:
    case Resource::PersistentVolumes:
    case Resource::StorageClasses:
    case Resource::CSINodes:
    case Resource::CSIDrivers:
    case Resource::CSIStorageCapacities:
      return true;
    default:
      return false;
  }
}

std::optional<std::string> decodeFailure(Resource resource, const json& object) {
  auto failure = [](const auto& decoded) -> std::optional<std::string> {
    if (decoded.ok()) {
      return std::nullopt;
    }
    return decoded.error().message;
  };
  switch (resource) {
    case Resource::Pods:
      return failure(api::decodePod(object));
    case Resource::Nodes:
      return failure(api::decodeNode(object));
    case Resource::Namespaces:
      return failure(api::decodeNamespace(object));
    case Resource::Services:
      return failure(api::decodeService(object));
    case Resource::ReplicaSets:
      return failure(api::decodeReplicaSet(object));
    case Resource::StatefulSets:
      return failure(api::decodeStatefulSet(object));
    case Resource::ReplicationControllers:
      return failure(api::decodeReplicationController(object));
    case Resource::PodDisruptionBudgets:
      return failure(api::decodePodDisruptionBudget(object));
    case Resource::PersistentVolumeClaims:
      return failure(api::decodePersistentVolumeClaim(object));
    case Resource::PersistentVolumes:
      return failure(api::decodePersistentVolume(object));
    case Resource::StorageClasses:
      return failure(api::decodeStorageClass(object));
    case Resource::CSINodes:
      return failure(api::decodeCSINode(object));
    case Resource::CSIDrivers:
      return failure(api::decodeCSIDriver(object));
    case Resource::CSIStorageCapacities:
      return failure(api::decodeCSIStorageCapacity(object));
    default:
      return std::nullopt;
  }
}

bool isImmortalNamespace(std::string_view name) {
  return name == "default" || name == "kube-system" || name == "kube-public";
}

}  // namespace berth::apiserver
