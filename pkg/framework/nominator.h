#pragma once
// PodNominator: the pods nominated to run on a node (status.nominatedNodeName, set when preemption
// evicts pods to make room for them). Filter counts nominated pods of equal or higher priority as
// if they were already placed, so that the room a preemptor waits for is not taken by another pod
// while its victims terminate (upstream's PodNominator).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/framework/pod_info.h"

namespace berth::framework {

class PodNominator {
 public:
  virtual ~PodNominator() = default;
  // The pods nominated to `node`, any priority. May be called from several threads at once.
  virtual std::vector<PodInfoPtr> nominatedPodsForNode(std::string_view node) const = 0;
  // Every node some pod is nominated to, so that a cycle over thousands of nodes asks about those
  // only; nullopt (the default) when unknown: callers then ask about every node.
  virtual std::optional<std::vector<std::string>> nominatedNodes() const { return std::nullopt; }
};

}  // namespace berth::framework
