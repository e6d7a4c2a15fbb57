#include "pkg/plugins/noderesources/resource_allocation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include "pkg/framework/interface.h"
#include "pkg/framework/resource.h"

namespace berth::plugins::noderesources {
namespace {

constexpr int64_t kMaxUtilization = 100;

ScoredResource resolve(const ResourceSpec& spec) {
  ScoredResource r;
  r.name = spec.name;
  r.weight = spec.weight;
  if (spec.name == framework::kCPU) {
    r.kind = ScoredResource::Kind::CPU;
  } else if (spec.name == framework::kMemory) {
    r.kind = ScoredResource::Kind::Memory;
  } else if (spec.name == framework::kEphemeralStorage) {
    r.kind = ScoredResource::Kind::EphemeralStorage;
  } else {
    // Any other name, scalar or not: a non-scalar name (e.g. "pods") is never among the scalar
    // resources, so it reads as 0 and is skipped, as upstream skips it.
    r.kind = ScoredResource::Kind::Scalar;
  }
  return r;
}

int64_t podRequestFor(const ScoredResource& r, const framework::Resource& requests) {
  switch (r.kind) {
    case ScoredResource::Kind::CPU:
      return requests.milliCPU;
    case ScoredResource::Kind::Memory:
      return requests.memory;
    case ScoredResource::Kind::EphemeralStorage:
      return requests.ephemeralStorage;
    case ScoredResource::Kind::Scalar:
      return requests.scalarValue(r.name);
  }
  return 0;
}

// Upstream's calculateResourceAllocatableRequest: {allocatable, requested with the pod}; {0, 0}
// means "leave this resource out". cpu and memory count the node's non-zero requests unless
// `useRequested`; ephemeral storage and scalars always count the real ones. The sum is 128-bit:
// quantities saturate at int64's limit (allocatable "1e1000"), and the scores below are exact
// where upstream's int64 arithmetic would wrap.
struct AllocatableRequested {
  int64_t allocatable = 0;
  __int128 requested = 0;
};

inline AllocatableRequested allocatableRequested(const ScoredResource& r,
                                                 const framework::NodeInfo& node,
                                                 int64_t podRequest, bool useRequested) {
  const framework::Resource& used = useRequested ? node.requested() : node.nonZeroRequested();
  const __int128 pod = podRequest;
  switch (r.kind) {
    case ScoredResource::Kind::CPU:
      return {node.allocatable().milliCPU, used.milliCPU + pod};
    case ScoredResource::Kind::Memory:
      return {node.allocatable().memory, used.memory + pod};
    case ScoredResource::Kind::EphemeralStorage:
      return {node.allocatable().ephemeralStorage, node.requested().ephemeralStorage + pod};
    case ScoredResource::Kind::Scalar:
      // An extended resource the pod does not ask for would only skew the score.
      if (podRequest == 0) return {};
      return {node.allocatable().scalarValue(r.name), node.requested().scalarValue(r.name) + pod};
  }
  return {};
}

// (capacity - requested) * 100 / capacity, as upstream where its int64 product does not wrap.
int64_t leastRequestedScore(__int128 requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return static_cast<int64_t>((capacity - requested) * framework::kMaxNodeScore / capacity);
}

int64_t mostRequestedScore(__int128 requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Requested may exceed capacity because pods without requests count as the defaults.
  if (requested > capacity) requested = capacity;
  return static_cast<int64_t>(requested * framework::kMaxNodeScore / capacity);
}

// requested * 100 / capacity with requested clamped to [0, capacity], exact even where the
// product would overflow int64 (newest upstream's scaledUtilization).
int64_t utilization(__int128 requested, int64_t capacity) {
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return kMaxUtilization;
  return static_cast<int64_t>(requested * kMaxUtilization / capacity);
}

// Fractions for the standard deviation; more than kInline resources is rare enough to allocate.
constexpr size_t kInline = 8;

int64_t balancedScore(const double* fractions, size_t n) {
  double deviation = 0;
  if (n == 2) {
    deviation = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (n > 2) {
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += fractions[i];
    double mean = total / static_cast<double>(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum = sum + (fractions[i] - mean) * (fractions[i] - mean);
    deviation = std::sqrt(sum / static_cast<double>(n));
  }
  return static_cast<int64_t>((1 - deviation) * static_cast<double>(framework::kMaxNodeScore));
}

// The weighted average of the per-resource scores (non-zero requests for cpu and memory). A
// template per function, so the per-node loop carries no dispatch.
template <ScoringFunction F>
int64_t weightedScore(const std::vector<ScoredResource>& resources,
                      const std::vector<ShapePoint>& shape, const framework::NodeInfo& node,
                      const int64_t* podRequests) {
  int64_t nodeScore = 0;
  int64_t weightSum = 0;
  for (size_t i = 0; i < resources.size(); ++i) {
    auto ar = allocatableRequested(resources[i], node, podRequests[i], /*useRequested=*/false);
    if (ar.allocatable == 0) continue;
    const int64_t weight = resources[i].weight;
    if constexpr (F == ScoringFunction::LeastAllocated) {
      nodeScore += leastRequestedScore(ar.requested, ar.allocatable) * weight;
      weightSum += weight;
    } else if constexpr (F == ScoringFunction::MostAllocated) {
      nodeScore += mostRequestedScore(ar.requested, ar.allocatable) * weight;
      weightSum += weight;
    } else {
      int64_t u = ar.requested > ar.allocatable ? kMaxUtilization
                                                : utilization(ar.requested, ar.allocatable);
      int64_t resourceScore = brokenLinear(shape, u);
      // Upstream counts only resources that score above zero.
      if (resourceScore > 0) {
        nodeScore += resourceScore * weight;
        weightSum += weight;
      }
    }
  }
  if (weightSum == 0) return 0;
  if constexpr (F == ScoringFunction::RequestedToCapacityRatio) {
    return static_cast<int64_t>(
        std::round(static_cast<double>(nodeScore) / static_cast<double>(weightSum)));
  }
  return nodeScore / weightSum;
}

struct PodRequestsState final : framework::StateData {
  std::vector<int64_t> podRequests;  // one per scored resource
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PodRequestsState>(*this);
  }
};

}  // namespace

int64_t brokenLinear(const std::vector<ShapePoint>& shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      const ShapePoint& a = shape[i - 1];
      const ShapePoint& b = shape[i];
      return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
    }
  }
  return shape.back().score;
}

ResourceAllocationScorer::ResourceAllocationScorer(ScoringFunction function,
                                                   const std::vector<ResourceSpec>& resources,
                                                   const std::vector<UtilizationShapePoint>& shape)
    : function_(function) {
  for (const auto& spec : resources) resources_.push_back(resolve(spec));
  if (function != ScoringFunction::RequestedToCapacityRatio) return;
  for (const auto& point : shape) {
    // The file's 0..10 scores are scaled to the scheduler's 0..100.
    shape_.push_back(ShapePoint{
        point.utilization, point.score * (framework::kMaxNodeScore / kMaxCustomPriorityScore)});
  }
}

std::vector<int64_t> ResourceAllocationScorer::podRequests(const framework::PodInfo& pod) const {
  const framework::Resource& requests =
      function_ == ScoringFunction::Balanced ? pod.requests : pod.nonZeroRequests;
  std::vector<int64_t> out;
  out.reserve(resources_.size());
  for (const auto& r : resources_) out.push_back(podRequestFor(r, requests));
  return out;
}

int64_t ResourceAllocationScorer::score(const framework::NodeInfo& node,
                                        const int64_t* podRequests) const {
  switch (function_) {
    case ScoringFunction::LeastAllocated:
      return weightedScore<ScoringFunction::LeastAllocated>(resources_, shape_, node, podRequests);
    case ScoringFunction::MostAllocated:
      return weightedScore<ScoringFunction::MostAllocated>(resources_, shape_, node, podRequests);
    case ScoringFunction::RequestedToCapacityRatio:
      return weightedScore<ScoringFunction::RequestedToCapacityRatio>(resources_, shape_, node,
                                                                      podRequests);
    case ScoringFunction::Balanced:
      break;
  }
  std::array<double, kInline> inlineFractions;
  std::vector<double> heapFractions;
  double* fractions = inlineFractions.data();
  if (resources_.size() > kInline) {
    heapFractions.resize(resources_.size());
    fractions = heapFractions.data();
  }
  size_t n = 0;
  for (size_t i = 0; i < resources_.size(); ++i) {
    auto ar = allocatableRequested(resources_[i], node, podRequests[i], /*useRequested=*/true);
    if (ar.allocatable == 0) continue;
    double f = static_cast<double>(ar.requested) / static_cast<double>(ar.allocatable);
    fractions[n++] = f > 1 ? 1 : f;
  }
  return balancedScore(fractions, n);
}

}  // namespace berth::plugins::noderesources

namespace berth::plugins::noderesources {

void ResourceAllocationScorer::writePreScoreState(framework::CycleState& state,
                                                  framework::StateKey key,
                                                  std::vector<int64_t> podRequests) const {
  auto s = std::make_unique<PodRequestsState>();
  s->podRequests = std::move(podRequests);
  state.write(key, std::move(s));
}

int64_t ResourceAllocationScorer::scoreWithState(const framework::CycleState& state,
                                                 framework::StateKey key,
                                                 const framework::PodInfo& pod,
                                                 const framework::NodeInfo& node) const {
  const auto* s = state.readAs<PodRequestsState>(key);
  // The size check guards against a state written for another resource list.
  if (s != nullptr && s->podRequests.size() == resources_.size()) {
    return score(node, s->podRequests.data());
  }
  auto requests = podRequests(pod);
  if (function_ == ScoringFunction::Balanced && isBestEffort(requests)) return 0;
  return score(node, requests.data());
}

bool ResourceAllocationScorer::isBestEffort(const std::vector<int64_t>& podRequests) {
  return std::all_of(podRequests.begin(), podRequests.end(), [](int64_t r) { return r == 0; });
}

}  // namespace berth::plugins::noderesources
