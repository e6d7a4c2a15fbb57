#pragma once
// Resource: the integer view of a ResourceList that scheduling arithmetic uses (upstream's
// framework.Resource): CPU in milli-cores, memory and ephemeral storage in bytes, the pod count,
// and scalar resources (extended resources such as nvidia.com/gpu, hugepages-*,
// attachable-volumes-*).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"

namespace berth::framework {

inline constexpr std::string_view kCPU = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kPods = "pods";

// Requests that scoring assumes for a container that sets none (never used by Filter).
inline constexpr int64_t kDefaultMilliCPURequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// Upstream's IsScalarResourceName: extended, prefixed-native, hugepages and attachable-volumes
// names.
bool isScalarResourceName(std::string_view name);

struct Resource {
  int64_t milliCPU = 0;
  int64_t memory = 0;
  int64_t ephemeralStorage = 0;
  int64_t allowedPodNumber = 0;
  // Sorted by name; few entries, so a vector beats a map.
  std::vector<std::pair<std::string, int64_t>> scalar;

  static Resource fromList(const api::ResourceList& list);

  int64_t scalarValue(std::string_view name) const;
  void setScalar(std::string_view name, int64_t value);
  // The amount of a resource by its name (cpu in milli-cores), 0 when absent.
  int64_t get(std::string_view name) const;

  void add(const Resource& other);
  void subtract(const Resource& other);
  bool isZero() const;
};

// What a pod asks for (upstream's PodRequests): the sum of its containers and sidecars, or the
// largest init container step if larger, plus overhead. With nonZero, containers that do not set
// cpu or memory count as kDefaultMilliCPURequest / kDefaultMemoryRequest (for scoring only).
Resource computePodRequests(const api::Pod& pod, bool nonZero);

}  // namespace berth::framework
