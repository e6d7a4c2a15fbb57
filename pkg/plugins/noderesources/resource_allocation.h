#pragma once
// The scoring shared by NodeResourcesFit (its scoring strategy) and NodeResourcesBalancedAllocation
// (upstream's resourceAllocationScorer): for each configured resource, the node's allocatable and
// what would be requested with the pod placed, fed to one of four scoring functions.
//
// Resource names resolve to a fixed field (cpu, memory, ephemeral-storage) or a scalar name once,
// at construction; score() runs once per node and allocates nothing.

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/framework/cycle_state.h"
#include "pkg/framework/node_info.h"
#include "pkg/framework/pod_info.h"
#include "pkg/plugins/noderesources/args.h"

namespace berth::plugins::noderesources {

enum class ScoringFunction {
  LeastAllocated,            // favours nodes with more room left
  MostAllocated,             // favours fuller nodes (bin packing)
  RequestedToCapacityRatio,  // a user shape over utilization
  Balanced,                  // favours nodes whose resource fractions are close to each other
};

struct ScoredResource {
  enum class Kind { CPU, Memory, EphemeralStorage, Scalar };
  Kind kind = Kind::Scalar;
  std::string name;  // looked up among scalar resources when kind is Scalar
  int64_t weight = 1;
};

// A point of the RequestedToCapacityRatio shape, with the score already on the 0..100 scale.
struct ShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
};

// Upstream's BuildBrokenLinearFunction: piecewise linear through the points, flat outside them.
// `shape` must not be empty.
int64_t brokenLinear(const std::vector<ShapePoint>& shape, int64_t utilization);

class ResourceAllocationScorer {
 public:
  // `resources` and `shape` (RequestedToCapacityRatio only) as their args decoder validated them.
  ResourceAllocationScorer(ScoringFunction function, const std::vector<ResourceSpec>& resources,
                           const std::vector<UtilizationShapePoint>& shape);

  const std::vector<ScoredResource>& resources() const { return resources_; }

  // The pod's request for each scored resource, in order: non-zero requests (unset cpu/memory
  // counted as defaults) except for Balanced, which uses the real ones.
  std::vector<int64_t> podRequests(const framework::PodInfo& pod) const;
  // `podRequests` has one entry per scored resource.
  int64_t score(const framework::NodeInfo& node, const int64_t* podRequests) const;
  // PreScore: the pod's requests, stored under `key` for scoreWithState.
  void writePreScoreState(framework::CycleState& state, framework::StateKey key,
                          std::vector<int64_t> podRequests) const;
  // Score with the requests PreScore stored under `key`; when PreScore did not run (not enabled at
  // that point) they are computed here, as upstream, and for Balanced a best-effort pod scores 0.
  int64_t scoreWithState(const framework::CycleState& state, framework::StateKey key,
                         const framework::PodInfo& pod, const framework::NodeInfo& node) const;

  // No request for any scored resource.
  static bool isBestEffort(const std::vector<int64_t>& podRequests);

 private:
  ScoringFunction function_ = ScoringFunction::LeastAllocated;
  std::vector<ScoredResource> resources_;
  std::vector<ShapePoint> shape_;
};

}  // namespace berth::plugins::noderesources
