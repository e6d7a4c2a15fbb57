#pragma once
// The offline what-if: given the nodes and pods of a cluster file (and the namespaces, services,
// controllers, PodDisruptionBudgets and storage objects plugins read, through the Handle's
// ClusterObjects), place the pending pods one by one in queue order with the same framework and
// plugins the daemon uses, each placement assumed before the next, and report where each pod went
// or why it fits nowhere. A pod that fits nowhere
// preempts as the daemon would (the profile's PostFilter plugins): its victims leave the simulated
// cluster and it is placed on the node they made room on.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/config/config.h"
#include "pkg/util/parallel.h"
#include "pkg/util/result.h"

namespace berth::simulate {

struct Options {
  std::string schedulerName = std::string(config::kDefaultSchedulerName);
  bool allPending = false;  // every pending pod, whatever its schedulerName
  bool explain = false;     // keep per-node reasons and scores
  uint64_t seed = 0;
  bool preemption =
      true;  // run the PostFilter plugins (DefaultPreemption) for a pod that fits nowhere
};

struct NodeExplanation {
  std::string name;
  bool evaluated = true;  // false when percentageOfNodesToScore stopped the search earlier
  bool feasible = false;
  std::vector<std::string> reasons;
  std::string plugin;  // the plugin that rejected the node; empty when feasible or not one plugin
  std::vector<std::pair<std::string, int64_t>>
      scores;         // plugin -> normalized score, before weights
  int64_t total = 0;  // sum of score * weight
  // For a pod that fits nowhere (with Options::explain and preemption): what evicting pods from
  // this node would take, or why it cannot help.
  std::string preemption;
};

struct PodResult {
  std::string pod;  // namespace/name
  std::string profile;
  std::optional<std::string> node;
  std::string message;  // why it was not placed, or why it had to preempt
  // Set when the pod was placed by preempting: the node, and the pods evicted from it
  // (namespace/name), most important first.
  std::string nominatedNode;
  std::vector<std::string> victims;
  std::vector<NodeExplanation> nodes;  // with Options::explain
};

// A pod evicted from the simulated cluster to make room for a preemptor.
struct Eviction {
  std::string pod;  // namespace/name
  std::string node;
  std::string by;  // the preemptor, namespace/name
};

struct Report {
  int numNodes = 0;
  std::vector<PodResult> results;
  std::vector<Eviction> evictions;    // in the order they happened
  std::vector<std::string> warnings;  // e.g. a pod bound to a node not in the file
};

util::Result<Report> run(const api::ObjectSet& objects, const config::Configuration& config,
                         const Options& options, util::Parallelizer& parallelizer);

// One line naming the kinds of the cluster file's objects simulate does not read, with how many of
// each (api::ObjectSet::skipped), kinds in name order; nullopt when there are none:
// "ignored 3 items of kinds simulate does not use: ConfigMap (2), Secret (1)".
std::optional<std::string> ignoredKinds(const std::vector<std::string>& skipped);

// When pending pods use PersistentVolumeClaims (or generic ephemeral volumes) and the file holds
// no claims at all, one line saying so and how to export them; nullopt otherwise. The volume
// plugins then report the claims not found, as they would be in a cluster without them.
std::optional<std::string> missingClaimsNote(const api::ObjectSet& objects);

nlohmann::json toJson(const Report& report, bool explain);
std::string toTable(const Report& report, bool explain);

}  // namespace berth::simulate
