#pragma once
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): the subset berth implements, read
// from YAML or JSON, defaulted as upstream's v1 defaults, and validated. Anything berth does not
// implement (an unknown field, plugin or plugin argument) is an error naming the field, never
// silently ignored. Plugin sets are returned merged with the defaults but not yet expanded from
// multiPoint: which extension points a plugin implements is the framework runtime's knowledge.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/config/extension_points.h"
#include "pkg/config/plugin_args.h"
#include "pkg/util/result.h"

namespace berth::config {

inline constexpr std::string_view kDefaultSchedulerName = "berth";

struct Profile {
  std::string schedulerName;
  std::optional<int32_t> percentageOfNodesToScore;
  Plugins plugins;  // defaults merged in (upstream's mergePlugins), multiPoint not expanded
  // Checked by the PluginCatalog when parsed; a plugin without an entry uses its defaults.
  std::vector<PluginConfig> pluginConfig;
  std::string field;  // "profiles[0]"

  // The entry for plugin `name`, or nullptr.
  const PluginConfig* pluginConfigFor(std::string_view name) const;
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
// Plugin args are checked by `args`.
util::Result<Configuration> parseConfiguration(std::string_view text, std::string_view source,
                                               const PluginCatalog& args);

// `cfg` as a kubescheduler.config.k8s.io/v1 document that parseConfiguration reads back to the
// same configuration (kube-scheduler's --write-config-to): every field with its value, defaults
// included; the plugin sets merged with the defaults; pluginConfig args as they were given.
Json encodeConfiguration(const Configuration& cfg);

// Upstream's v1 default plugins (MultiPoint, in order) restricted to those berth implements, with
// their default score weights.
const std::vector<PluginRef>& defaultMultiPointPlugins();

}  // namespace berth::config
