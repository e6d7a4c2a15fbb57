#pragma once
// The resources the embedded API server serves, with the names the wire uses for them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/meta.h"

namespace berth::apiserver {

// The resources the store serves. Upstream, core/v1 and events.k8s.io/v1 events are two views of
// one storage; here they are two separate tables (an event written through one is not seen
// through the other).
enum class Resource {
  Nodes,
  Pods,
  Events,
  EventsV1,
  Leases,
  Namespaces,
  Services,
  ReplicationControllers,
  ReplicaSets,
  StatefulSets,
  PodDisruptionBudgets,
  PersistentVolumeClaims,
  PersistentVolumes,
  StorageClasses,
  CSINodes,
  CSIDrivers,
  CSIStorageCapacities,
  ConfigMaps,
};
inline constexpr size_t kResourceCount = 18;

using ResourceInfo = api::ResourceInfo;

const ResourceInfo& resourceInfo(Resource resource);
// The resource at /api/v1/NAME (group "") or /apis/GROUP/v1/NAME; nullopt when not served.
std::optional<Resource> findResource(std::string_view group, std::string_view name);

// The Go type a resource decodes into, in decode errors: "v1.Pod", "v1.Lease".
std::string goTypeName(const ResourceInfo& info);

}  // namespace berth::apiserver
