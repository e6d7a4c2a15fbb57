#include "pkg/apiserver/resource_info.h"

#include <array>

namespace berth::apiserver {
namespace {

constexpr std::array<ResourceInfo, 5> kResources = {{
    {Resource::Nodes, "", "v1", "nodes", "Node", "NodeList", false},
    {Resource::Pods, "", "v1", "pods", "Pod", "PodList", true},
    {Resource::Events, "", "v1", "events", "Event", "EventList", true},
    {Resource::EventsV1, "events.k8s.io", "v1", "events", "Event", "EventList", true},
    {Resource::Leases, "coordination.k8s.io", "v1", "leases", "Lease", "LeaseList", true},
}};

}  // namespace

std::string ResourceInfo::apiVersion() const {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

const ResourceInfo& resourceInfo(Resource resource) {
  return kResources[static_cast<size_t>(resource)];
}

std::optional<Resource> findResource(std::string_view group, std::string_view name) {
  for (const ResourceInfo& info : kResources) {
    if (info.group == group && info.name == name) {
      return info.resource;
    }
  }
  return std::nullopt;
}

std::string goTypeName(const ResourceInfo& info) {
  return std::string(info.version) + "." + std::string(info.kind);
}

}  // namespace berth::apiserver
