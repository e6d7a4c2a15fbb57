#include "pkg/apiserver/resource_info.h"

#include <array>

namespace berth::apiserver {
namespace {

// By Resource value.
constexpr std::array<const ResourceInfo*, kResourceCount> kResources = {
    &api::kNodes,
    &api::kPods,
    &api::kEvents,
    &api::kEventsV1,
    &api::kLeases,
    &api::kNamespaces,
    &api::kServices,
    &api::kReplicationControllers,
    &api::kReplicaSets,
    &api::kStatefulSets,
    &api::kPodDisruptionBudgets,
    &api::kPersistentVolumeClaims,
    &api::kPersistentVolumes,
    &api::kStorageClasses,
    &api::kCSINodes,
    &api::kCSIDrivers,
    &api::kCSIStorageCapacities,
    &api::kConfigMaps};

}  // namespace

const ResourceInfo& resourceInfo(Resource resource) {
  return *kResources[static_cast<size_t>(resource)];
}

std::optional<Resource> findResource(std::string_view group, std::string_view name) {
  for (size_t i = 0; i < kResources.size(); ++i) {
    if (kResources[i]->group == group && kResources[i]->name == name) {
      return static_cast<Resource>(i);
    }
  }
  return std::nullopt;
}

std::string goTypeName(const ResourceInfo& info) {
  return std::string(info.version) + "." + std::string(info.kind);
}

}  // namespace berth::apiserver
