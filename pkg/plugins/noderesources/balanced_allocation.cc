#include "pkg/plugins/noderesources/balanced_allocation.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace berth::plugins::noderesources {
namespace {

using framework::Status;

const framework::StateKey kPreScoreKey =
    framework::makeStateKey("PreScoreNodeResourcesBalancedAllocation");

}  // namespace

Status BalancedAllocation::preScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const std::vector<const framework::NodeInfo*>& /*nodes*/) const {
  std::vector<int64_t> requests = scorer_.podRequests(pod);
  if (ResourceAllocationScorer::isBestEffort(requests)) return Status::skip();
  scorer_.writePreScoreState(state, kPreScoreKey, std::move(requests));
  return Status::success();
}

Status BalancedAllocation::score(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node, int64_t& out) const {
  out = scorer_.scoreWithState(state, kPreScoreKey, pod, node);
  return Status::success();
}

util::Result<framework::PluginPtr> newBalancedAllocation(
    const NodeResourcesBalancedAllocationArgs& args, const framework::Handle& /*handle*/) {
  return framework::PluginPtr(new BalancedAllocation(
      ResourceAllocationScorer(ScoringFunction::Balanced, args.resources, {})));
}

}  // namespace berth::plugins::noderesources
