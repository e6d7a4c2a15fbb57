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
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/config/config.h"
#include "pkg/simulate/whatif.h"
#include "pkg/util/parallel.h"
#include "pkg/util/result.h"

namespace berth::simulate {

struct Options {
  std::string schedulerName = std::string(config::kDefaultSchedulerName);
  bool allPending = false;  // every pending pod, whatever its schedulerName
  bool explain = false;     // keep per-node reasons and scores
  bool allFilters = false;  // with explain: every filter plugin's verdict, not only the first
  uint64_t seed = 0;
  bool preemption =
      true;  // run the PostFilter plugins (DefaultPreemption) for a pod that fits nowhere
  // Pending pods (namespace/name) placed whatever their schedulerName: what a what-if created.
  std::set<std::string, std::less<>> alsoPlace = {};
};

// One filter plugin's verdict on one node (--explain-all-filters).
struct FilterVerdict {
  std::string plugin{};
  bool skipped = false;  // its PreFilter found nothing to check for this pod, so it did not run
  std::vector<std::string> reasons{};  // empty: it passed
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
  // With Options::allFilters, on the nodes the cycle filtered: every filter plugin of the profile,
  // in its order.
  std::vector<FilterVerdict> filters;
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

// --add-nodes: how many copies of the template were added, or the count a search found.
struct AddedNodes {
  std::string name{};  // the template's
  size_t count = 0;
  bool searched = false;  // no COUNT was given
  size_t bound = 0;       // the most the search tried
  bool helps = true;      // false: no count up to the bound placed one more pod
};

// --add-pods: how many copies of the template fit, placed one by one.
struct AddedPods {
  std::string name{};       // the template's
  size_t requested = 0;     // COUNT; 0 when searched
  size_t placed = 0;        // copies placed before the first that fit nowhere
  std::string stoppedBy{};  // that copy's FitError message; empty when every copy fit
};

// A node after every placement: what its pods request and what it has (cpu in millicores, memory
// in bytes).
struct NodeAllocation {
  std::string name{};
  int64_t cpuRequested = 0;
  int64_t cpuAllocatable = 0;
  int64_t memoryRequested = 0;
  int64_t memoryAllocatable = 0;
  int64_t pods = 0;
  int64_t podsAllocatable = 0;
};

struct Report {
  int numNodes = 0;
  std::vector<NodeAllocation> allocation;  // every node, in snapshot order
  std::vector<PodResult> results;
  std::vector<Eviction> evictions;    // in the order they happened
  std::vector<std::string> warnings;  // e.g. a pod bound to a node not in the file
  std::optional<DrainPlan> drain;
  std::optional<AddedNodes> addedNodes;
  std::optional<AddedPods> addedPods;
};

util::Result<Report> run(const api::ObjectSet& objects, const config::Configuration& config,
                         const Options& options, util::Parallelizer& parallelizer);

// The what-ifs of one simulate call, applied in this order: the drain, the nodes, the pods.
struct WhatIfs {
  std::optional<DrainRequest> drain{};
  std::optional<api::Node> nodeTemplate{};
  std::optional<size_t> nodeCount{};  // nullopt: the smallest count that places every pod it can
  std::optional<api::Pod> podTemplate{};
  std::optional<size_t> podCount{};  // nullopt: as many copies as fit
};

// Bounds of the searches: the most nodes --add-nodes tries, and the most pods --add-pods adds.
inline constexpr size_t kMaxAddedNodes = 1000;
inline constexpr size_t kMaxAddedPods = 10000;

// run() on the objects as the what-ifs change them; a search runs it several times and reports
// the run at the count it found.
util::Result<Report> runWhatIfs(const api::ObjectSet& objects, const WhatIfs& whatIfs,
                                const config::Configuration& config, const Options& options,
                                util::Parallelizer& parallelizer);

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
