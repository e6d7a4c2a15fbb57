#pragma once
// NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs: upstream's v1 types, their
// defaults (defaults.go) and validation (validation_pluginargs.go), decoded from a profile's
// pluginConfig. A default-constructed value holds the defaults.

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/config/decoder.h"

namespace berth::plugins::noderesources {

// The RequestedToCapacityRatio shape's score scale in the config file (0..10).
inline constexpr int32_t kMaxCustomPriorityScore = 10;

struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

// Upstream's defaults for a resource list not given: cpu and memory with weight 1.
std::vector<ResourceSpec> defaultResources();

struct UtilizationShapePoint {
  int32_t utilization = 0;  // 0..100
  int32_t score = 0;        // 0..kMaxCustomPriorityScore
};

struct ScoringStrategy {
  enum class Type { LeastAllocated, MostAllocated, RequestedToCapacityRatio };
  Type type = Type::LeastAllocated;
  std::vector<ResourceSpec> resources = defaultResources();
  std::vector<UtilizationShapePoint> shape;  // RequestedToCapacityRatio only
};

struct NodeResourcesFitArgs {
  std::vector<std::string> ignoredResources;
  std::vector<std::string> ignoredResourceGroups;
  ScoringStrategy scoringStrategy;
};

struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources = defaultResources();
};

// Decode `j` (pluginConfig[i].args at `path`) over the defaults in `out`, then validate.
void decodeNodeResourcesFitArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                NodeResourcesFitArgs& out);
void decodeNodeResourcesBalancedAllocationArgs(config::Decoder& d, const config::Json& j,
                                               const std::string& path,
                                               NodeResourcesBalancedAllocationArgs& out);

}  // namespace berth::plugins::noderesources
