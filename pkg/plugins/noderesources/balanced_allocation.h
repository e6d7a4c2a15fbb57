#pragma once
// NodeResourcesBalancedAllocation (upstream's noderesources.BalancedAllocation): favours nodes
// whose resource fractions (requested / allocatable, with the pod placed) are close to each other.
// Best-effort pods (no request for any configured resource) skip it, so they do not all pile onto
// one node (upstream issue 129138).

#include <cstdint>
#include <string_view>
#include <vector>

#include "pkg/framework/handle.h"
#include "pkg/framework/interface.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/noderesources/args.h"
#include "pkg/plugins/noderesources/resource_allocation.h"
#include "pkg/util/result.h"

namespace berth::plugins::noderesources {

class BalancedAllocation final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  std::string_view name() const override { return names::kNodeResourcesBalancedAllocation; }
  bool nodeLocal() const override { return true; }

  // Skip for a best-effort pod.
  framework::Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) const override;
  framework::Status score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t& out) const override;

 private:
  friend util::Result<framework::PluginPtr> newBalancedAllocation(
      const NodeResourcesBalancedAllocationArgs&, const framework::Handle&);
  explicit BalancedAllocation(ResourceAllocationScorer scorer) : scorer_(std::move(scorer)) {}

  ResourceAllocationScorer scorer_;
};

// `args` as decodeNodeResourcesBalancedAllocationArgs leaves them.
util::Result<framework::PluginPtr> newBalancedAllocation(
    const NodeResourcesBalancedAllocationArgs& args, const framework::Handle& handle);

}  // namespace berth::plugins::noderesources
