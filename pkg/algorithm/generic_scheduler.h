#pragma once
// GenericScheduler: one pod's scheduling algorithm over a snapshot (upstream's schedulePod):
// PreFilter, Filter over the nodes (in parallel, from a rotating start, stopping after enough
// feasible nodes), PreScore and Score, then the highest weighted total with ties broken at random.
// It does no I/O and changes nothing: assuming the pod onto the chosen node is the caller's step.

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pkg/algorithm/equivalence_cache.h"
#include "pkg/framework/fit_error.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/snapshot.h"
#include "pkg/util/parallel.h"

namespace berth::algorithm {

inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// How long one extension point's plugins ran
// (scheduler_framework_extension_point_duration_seconds).
struct ExtensionPointDuration {
  std::string_view point;  // "PreFilter", "PreScore", "Score"
  framework::Code code;
  std::chrono::steady_clock::duration took;
};

struct ScheduleOutcome {
  // Success: `node` is chosen. Unschedulable*: `fitError` says why. Error: status.message().
  framework::Status status;
  std::string node;
  std::optional<framework::FitError> fitError;
  int evaluatedNodes = 0;
  // What the decision saw, for explanation: nodes rejected (diagnosis), feasible nodes and their
  // scores (empty when only one node was feasible: upstream then skips scoring).
  framework::Diagnosis diagnosis;
  std::vector<const framework::NodeInfo*> feasible;
  framework::runtime::ScoreTable scores;
  std::vector<ExtensionPointDuration> extensionPoints;
};

class GenericScheduler {
 public:
  // percentageOfNodesToScore: the configuration's global value (100 = all nodes, 0 = adaptive).
  // reuseEquivalentResults: when every node is evaluated, keep each node's results for a class of
  // equivalent pods (EquivalenceCache); the outcome is the same either way.
  GenericScheduler(util::Parallelizer& parallelizer, uint64_t seed,
                   int32_t percentageOfNodesToScore, bool reuseEquivalentResults = true);

  ScheduleOutcome schedulePod(const framework::runtime::Framework& fw, framework::CycleState& state,
                              const framework::PodInfo& pod, const framework::Snapshot& snapshot);

  // Upstream's numFeasibleNodesToFind: how many feasible nodes are enough before scoring.
  static size_t numFeasibleNodesToFind(int32_t percentage, size_t numAllNodes);

 private:
  std::vector<const framework::NodeInfo*> findNodesThatPassFilters(
      const framework::runtime::Framework& fw, const framework::CycleState& state,
      const framework::PodInfo& pod, const std::vector<const framework::NodeInfo*>& nodes,
      size_t numAllNodes, const std::vector<const framework::NodeInfo*>& withNominated,
      framework::Diagnosis& diagnosis, framework::Status& error);
  // The same two steps from the class's results: only nodes changed since are evaluated again.
  // `nodes` and `generations` are the snapshot's, in its order; `positions` receives each feasible
  // node's index in them. `withNominated` (sorted) are the nodes Filter evaluates with nominated
  // pods, uncached.
  std::vector<const framework::NodeInfo*> findNodesThatPassFiltersReusing(
      EquivalenceCache::Class& results, const framework::runtime::Framework& fw,
      const framework::CycleState& state, const framework::PodInfo& pod,
      const std::vector<const framework::NodeInfo*>& nodes, const std::vector<int64_t>& generations,
      const std::vector<const framework::NodeInfo*>& withNominated, std::vector<size_t>& positions,
      framework::Diagnosis& diagnosis, framework::Status& error);
  // The Filter statuses of the plugins that are not node-local (`others`, at `othersAt` in
  // `filters`) where they decide a node's status, by node position, sorted.
  std::vector<std::pair<uint32_t, framework::Status>> runUncachedFilters(
      const EquivalenceCache::Class& results, const framework::runtime::Framework& fw,
      const framework::runtime::Framework::FilterList& filters,
      const framework::runtime::Framework::FilterList& others, const std::vector<size_t>& othersAt,
      const framework::CycleState& state, const framework::PodInfo& pod,
      const std::vector<const framework::NodeInfo*>& nodes);
  framework::Status scoreReusing(EquivalenceCache::Class& results,
                                 const framework::runtime::Framework& fw,
                                 const framework::CycleState& state, const framework::PodInfo& pod,
                                 const std::vector<const framework::NodeInfo*>& feasible,
                                 const std::vector<size_t>& positions,
                                 framework::runtime::ScoreTable& table);
  size_t selectHost(const std::vector<int64_t>& totals);

  util::Parallelizer& parallelizer_;
  std::mt19937_64 rng_;
  int32_t percentage_of_nodes_to_score_;
  size_t next_start_node_index_ = 0;
  bool reuse_equivalent_results_;
  EquivalenceCache equivalence_cache_;
};

}  // namespace berth::algorithm
