#pragma once
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): the subset berth implements, read
// from YAML or JSON, defaulted as upstream's v1 defaults, and validated. Anything berth does not
// implement (an unknown field, plugin or plugin argument) is an error naming the field, never
// silently ignored. Plugin sets are returned merged with the defaults but not yet expanded from
// multiPoint: which extension points a plugin implements is the framework runtime's knowledge.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/config/extension_points.h"
#include "pkg/util/result.h"

namespace berth::config {

inline constexpr std::string_view kDefaultSchedulerName = "berth";

// NodeResourcesFit arguments (NodeResourcesFitArgs).
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};
struct UtilizationShapePoint {
  int32_t utilization = 0;  // 0..100
  int32_t score = 0;        // 0..10
};
struct ScoringStrategy {
  enum class Type { LeastAllocated, MostAllocated, RequestedToCapacityRatio };
  Type type = Type::LeastAllocated;
  std::vector<ResourceSpec> resources;       // default cpu:1, memory:1
  std::vector<UtilizationShapePoint> shape;  // RequestedToCapacityRatio only
};
struct NodeResourcesFitArgs {
  std::vector<std::string> ignoredResources;
  std::vector<std::string> ignoredResourceGroups;
  ScoringStrategy scoringStrategy;
};
struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources;  // default cpu:1, memory:1
};
struct NodeAffinityArgs {
  std::optional<api::NodeAffinity> addedAffinity;
};

struct Profile {
  std::string schedulerName;
  std::optional<int32_t> percentageOfNodesToScore;
  Plugins plugins;  // defaults merged in (upstream's mergePlugins), multiPoint not expanded
  NodeResourcesFitArgs nodeResourcesFit;
  NodeResourcesBalancedAllocationArgs nodeResourcesBalancedAllocation;
  NodeAffinityArgs nodeAffinity;
  std::string field;  // "profiles[0]"
};

struct LeaderElection {
  bool leaderElect = true;
  int64_t leaseDurationMillis = 15000;
  int64_t renewDeadlineMillis = 10000;
  int64_t retryPeriodMillis = 2000;
  std::string resourceLock = "leases";
  std::string resourceName;  // default: the first profile's scheduler name
  std::string resourceNamespace = "kube-system";
};

struct ClientConnection {
  std::string kubeconfig;
  float qps = 50;
  int32_t burst = 100;
};

struct Configuration {
  std::vector<Profile> profiles;
  // berth evaluates every node by default (100); upstream's 0 means adaptive.
  int32_t percentageOfNodesToScore = 100;
  int32_t parallelism = 16;
  int64_t podInitialBackoffSeconds = 1;
  int64_t podMaxBackoffSeconds = 10;
  LeaderElection leaderElection;
  ClientConnection clientConnection;
};

// The configuration with no file: one profile named kDefaultSchedulerName with the default plugins.
Configuration defaultConfiguration();

// Parses, defaults and validates a configuration file's text (YAML or JSON). `source` names the
// file in errors: "config.yaml: profiles[0].plugins.score.enabled[0].weight: must be positive".
util::Result<Configuration> parseConfiguration(std::string_view text, std::string_view source);

// Upstream's v1 default plugins (MultiPoint, in order) restricted to those berth implements, with
// their default score weights.
const std::vector<PluginRef>& defaultMultiPointPlugins();

}  // namespace berth::config
