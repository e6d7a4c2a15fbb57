#include "pkg/plugins/noderesources/fit.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace berth::plugins::noderesources {
namespace {

using framework::Code;
using framework::Status;

constexpr std::string_view kTooManyPods = "Too many pods";
constexpr std::string_view kInsufficientCPU = "Insufficient cpu";
constexpr std::string_view kInsufficientMemory = "Insufficient memory";
constexpr std::string_view kInsufficientEphemeralStorage = "Insufficient ephemeral-storage";

// The pod's requests as Filter checks them, computed once per cycle.
struct PreFilterState final : framework::StateData {
  int64_t milliCPU = 0;
  int64_t memory = 0;
  int64_t ephemeralStorage = 0;
  bool requestsNothing = false;
  // Requested (> 0) scalar resources that are not ignored, sorted by name.
  std::vector<std::pair<std::string, int64_t>> scalars;

  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

const framework::StateKey kPreFilterKey = framework::makeStateKey("PreFilterNodeResourcesFit");
const framework::StateKey kPreScoreKey = framework::makeStateKey("PreScoreNodeResourcesFit");

// Upstream's IsExtendedResourceName for a name already known to be scalar: only extended resources
// (outside the kubernetes.io namespace) may be ignored; hugepages and native ones never are.
bool isExtendedResourceName(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  return name.substr(0, 9) != "requests.";
}

// Adds a rejection reason; the first one makes the status Unschedulable.
void reject(Status& status, std::string_view staticReason) {
  if (status.isSuccess()) {
    status = Status(Code::Unschedulable, staticReason);
  } else {
    status.addReason(staticReason);
  }
}

void reject(Status& status, std::string reason) {
  if (status.isSuccess()) {
    status = Status(Code::Unschedulable, std::move(reason));
  } else {
    status.addReason(std::move(reason));
  }
}

}  // namespace

bool Fit::ignored(std::string_view scalarName) const {
  if (!isExtendedResourceName(scalarName)) return false;
  if (std::find(ignored_resources_.begin(), ignored_resources_.end(), scalarName) !=
      ignored_resources_.end()) {
    return true;
  }
  auto group = scalarName.substr(0, scalarName.find('/'));
  return std::find(ignored_groups_.begin(), ignored_groups_.end(), group) != ignored_groups_.end();
}

std::vector<framework::ClusterEventWithHint> Fit::eventsToRegister() const {
  using framework::ActionType;
  using framework::EventResource;
  framework::ClusterEventWithHint nodeChanged{framework::ClusterEvent{
      EventResource::Node, ActionType::Add | ActionType::UpdateNodeAllocatable}};
  nodeChanged.nodeHint = [this](const api::Pod& pod, const api::Node* before,
                                const api::Node* after) {
    return afterNodeChange(pod, before, after);
  };
  return {std::move(nodeChanged), framework::ClusterEventWithHint{framework::ClusterEvent{
                                      EventResource::AssignedPod, ActionType::Delete}}};
}

framework::QueueingHint Fit::afterNodeChange(const api::Pod& pod, const api::Node* before,
                                             const api::Node* after) const {
  using framework::QueueingHint;
  if (after == nullptr) return QueueingHint::Skip;
  const framework::Resource wanted = framework::computePodRequests(pod, /*nonZero=*/false);
  const auto now = framework::Resource::fromList(after->status.allocatable);
  // The requested amounts, by name, that Filter checks ("pods" counts this one pod).
  std::vector<std::pair<std::string_view, int64_t>> requested = {{"pods", 1}};
  if (wanted.milliCPU > 0) requested.emplace_back("cpu", wanted.milliCPU);
  if (wanted.memory > 0) requested.emplace_back("memory", wanted.memory);
  if (wanted.ephemeralStorage > 0)
    requested.emplace_back("ephemeral-storage", wanted.ephemeralStorage);
  for (const auto& [name, value] : wanted.scalar) {
    if (value > 0 && !ignored(name)) requested.emplace_back(name, value);
  }
  // Even an empty node of this size cannot take the pod.
  for (const auto& [name, value] : requested) {
    if (value > now.get(name)) return QueueingHint::Skip;
  }
  if (before == nullptr) return QueueingHint::Queue;
  const auto was = framework::Resource::fromList(before->status.allocatable);
  for (const auto& [name, value] : requested) {
    if (now.get(name) > was.get(name)) return QueueingHint::Queue;
  }
  return QueueingHint::Skip;
}

Status Fit::preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                      framework::PreFilterResult& /*result*/) const {
  const framework::Resource& r = pod.requests;
  auto s = std::make_unique<PreFilterState>();
  s->milliCPU = r.milliCPU;
  s->memory = r.memory;
  s->ephemeralStorage = r.ephemeralStorage;
  // Like upstream, a scalar entry of 0 still counts as "requests something" (it changes nothing).
  s->requestsNothing =
      r.milliCPU == 0 && r.memory == 0 && r.ephemeralStorage == 0 && r.scalar.empty();
  for (const auto& [name, value] : r.scalar) {
    if (value != 0 && !ignored(name)) s->scalars.emplace_back(name, value);
  }
  state.write(kPreFilterKey, std::move(s));
  return Status::success();
}

Status Fit::filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                   const framework::NodeInfo& node) const {
  const auto* s = state.readAs<PreFilterState>(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
  }
  const framework::Resource& allocatable = node.allocatable();
  const framework::Resource& used = node.requested();

  Status status;
  // The pod count is checked even for a pod that requests nothing.
  if (static_cast<int64_t>(node.pods().size()) + 1 > allocatable.allowedPodNumber) {
    reject(status, kTooManyPods);
  }
  if (s->requestsNothing) return status;

  // Every shortage is reported, in upstream's order. Upstream v1.34+ returns
  // UnschedulableAndUnresolvable when a request exceeds the node's allocatable outright; berth
  // keeps v1.30-1.33's Unschedulable.
  // What is left, in 128 bits: a negative allocatable minus the requests must not overflow.
  const auto left = [](int64_t allocatable, int64_t used) {
    return static_cast<__int128>(allocatable) - used;
  };
  if (s->milliCPU > 0 && s->milliCPU > left(allocatable.milliCPU, used.milliCPU)) {
    reject(status, kInsufficientCPU);
  }
  if (s->memory > 0 && s->memory > left(allocatable.memory, used.memory)) {
    reject(status, kInsufficientMemory);
  }
  if (s->ephemeralStorage > 0 &&
      s->ephemeralStorage > left(allocatable.ephemeralStorage, used.ephemeralStorage)) {
    reject(status, kInsufficientEphemeralStorage);
  }
  for (const auto& [name, value] : s->scalars) {
    if (value > left(allocatable.scalarValue(name), used.scalarValue(name))) {
      reject(status, "Insufficient " + name);
    }
  }
  return status;
}

Status Fit::preScore(framework::CycleState& state, const framework::PodInfo& pod,
                     const std::vector<const framework::NodeInfo*>& /*nodes*/) const {
  scorer_.writePreScoreState(state, kPreScoreKey, scorer_.podRequests(pod));
  return Status::success();
}

Status Fit::score(const framework::CycleState& state, const framework::PodInfo& pod,
                  const framework::NodeInfo& node, int64_t& out) const {
  out = scorer_.scoreWithState(state, kPreScoreKey, pod, node);
  return Status::success();
}

util::Result<framework::PluginPtr> newFit(const NodeResourcesFitArgs& args,
                                          const framework::Handle& /*handle*/) {
  ScoringFunction function = ScoringFunction::LeastAllocated;
  switch (args.scoringStrategy.type) {
    case ScoringStrategy::Type::LeastAllocated:
      function = ScoringFunction::LeastAllocated;
      break;
    case ScoringStrategy::Type::MostAllocated:
      function = ScoringFunction::MostAllocated;
      break;
    case ScoringStrategy::Type::RequestedToCapacityRatio:
      function = ScoringFunction::RequestedToCapacityRatio;
      break;
  }
  return framework::PluginPtr(
      new Fit(args.ignoredResources, args.ignoredResourceGroups,
              ResourceAllocationScorer(function, args.scoringStrategy.resources,
                                       args.scoringStrategy.shape)));
}

}  // namespace berth::plugins::noderesources
