#include "pkg/plugins/noderesources/balanced_allocation.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace berth::plugins::noderesources {
namespace {

using framework::Status;

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> podRequests;  // one per scored resource, real (not non-zero) requests
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

const framework::StateKey kPreScoreKey =
    framework::makeStateKey("PreScoreNodeResourcesBalancedAllocation");

bool isBestEffort(const std::vector<int64_t>& podRequests) {
  return std::all_of(podRequests.begin(), podRequests.end(), [](int64_t r) { return r == 0; });
}

}  // namespace

Status BalancedAllocation::preScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const std::vector<const framework::NodeInfo*>& /*nodes*/) const {
  auto s = std::make_unique<PreScoreState>();
  s->podRequests = scorer_.podRequests(pod);
  if (isBestEffort(s->podRequests)) return Status::skip();
  state.write(kPreScoreKey, std::move(s));
  return Status::success();
}

Status BalancedAllocation::score(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node, int64_t& out) const {
  const auto* s = state.readAs<PreScoreState>(kPreScoreKey);
  // The size check guards against a state written for another resource list.
  if (s != nullptr && s->podRequests.size() == scorer_.resources().size()) {
    out = scorer_.score(node, s->podRequests.data());
    return Status::success();
  }
  // PreScore did not run (not enabled at that point): as upstream, decide here.
  auto requests = scorer_.podRequests(pod);
  out = isBestEffort(requests) ? 0 : scorer_.score(node, requests.data());
  return Status::success();
}

util::Result<framework::PluginPtr> newBalancedAllocation(
    const NodeResourcesBalancedAllocationArgs& args, const framework::Handle& /*handle*/) {
  return framework::PluginPtr(new BalancedAllocation(
      ResourceAllocationScorer(ScoringFunction::Balanced, args.resources, {})));
}

}  // namespace berth::plugins::noderesources
