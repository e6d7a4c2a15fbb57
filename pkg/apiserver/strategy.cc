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

}  // namespace

void defaultNamespaceLabel(json& object) {
  json& meta = childObject(object, "metadata");
  childObject(meta, "labels")["kubernetes.io/metadata.name"] = meta.value("name", "");
}

void prepareForCreate(Resource resource, json& object) {
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
    default:
      return;
  }
}

void prepareForUpdate(Resource resource, const json& old, json& next) {
  if (resource == Resource::Events || resource == Resource::EventsV1 ||
      resource == Resource::Leases) {
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
  if (isWorkload(resource)) {
    const json& oldMeta = old["metadata"];
    const int64_t generation = oldMeta.value("generation", int64_t{0});
    const bool specChanged = old.value("spec", json()) != next.value("spec", json());
    childObject(next, "metadata")["generation"] = specChanged ? generation + 1 : generation;
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
    default:
      return std::nullopt;
  }
}

bool isImmortalNamespace(std::string_view name) {
  return name == "default" || name == "kube-system" || name == "kube-public";
}

}  // namespace berth::apiserver
