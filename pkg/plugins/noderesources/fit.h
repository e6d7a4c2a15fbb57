#pragma once
// NodeResourcesFit (upstream's noderesources.Fit): Filter rejects nodes without room for the pod's
// requests (pod count, cpu, memory, ephemeral storage, scalar resources, every shortage reported);
// Score ranks nodes by the profile's scoring strategy (LeastAllocated by default).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/framework/handle.h"
#include "pkg/framework/interface.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/noderesources/args.h"
#include "pkg/plugins/noderesources/resource_allocation.h"
#include "pkg/util/result.h"

namespace berth::plugins::noderesources {

class Fit final : public framework::PreFilterPlugin,
                  public framework::FilterPlugin,
                  public framework::PreScorePlugin,
                  public framework::ScorePlugin,
                  public framework::EnqueueExtensions {
 public:
  std::string_view name() const override { return names::kNodeResourcesFit; }
  bool nodeLocal() const override { return true; }
  // A node added with room for the pod, a node whose allocatable grew in a resource the pod
  // requests (and now has room), an assigned pod deleted (its requests are free again).
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override;

  framework::Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult& result) const override;
  framework::Status filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  framework::Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) const override;
  framework::Status score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t& out) const override;

 private:
  friend util::Result<framework::PluginPtr> newFit(const NodeResourcesFitArgs&,
                                                   const framework::Handle&);
  Fit(std::vector<std::string> ignoredResources, std::vector<std::string> ignoredGroups,
      ResourceAllocationScorer scorer)
      : ignored_resources_(std::move(ignoredResources)),
        ignored_groups_(std::move(ignoredGroups)),
        scorer_(std::move(scorer)) {}

  bool ignored(std::string_view scalarName) const;
  // Upstream's isSchedulableAfterNodeChange.
  framework::QueueingHint afterNodeChange(const api::Pod& pod, const api::Node* before,
                                          const api::Node* after) const;

  std::vector<std::string> ignored_resources_;  // extended resource names Filter does not check
  std::vector<std::string> ignored_groups_;     // and their prefixes before the '/'
  ResourceAllocationScorer scorer_;
};

// `args` as decodeNodeResourcesFitArgs leaves them.
util::Result<framework::PluginPtr> newFit(const NodeResourcesFitArgs& args,
                                          const framework::Handle& handle);

}  // namespace berth::plugins::noderesources
