#pragma once
// PodInfo: a pod plus what scheduling derives from it once, so that Filter and Score (run once per
// node) never recompute requests or ports.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/affinity_term.h"
#include "pkg/framework/resource.h"

namespace berth::framework {

struct HostPort {
  std::string ip;        // "0.0.0.0" when unset
  std::string protocol;  // "TCP" when unset
  int32_t port = 0;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

struct PodInfo {
  api::PodPtr pod;
  Resource requests;         // for Filter and NodeInfo.requested
  Resource nonZeroRequests;  // for scoring: unset cpu/memory counted as defaults
  std::vector<HostPort> hostPorts;
  // The pod (anti-)affinity terms, compiled; null for a pod without podAffinity and
  // podAntiAffinity (most pods: they pay one pointer).
  std::shared_ptr<const PodAffinityTerms> affinity;

  explicit PodInfo(api::PodPtr p);
  // The compiled terms; empty lists for a pod without any.
  const PodAffinityTerms& affinityTerms() const;
  // Upstream's PodsWithAffinity and PodsWithRequiredAntiAffinity membership.
  bool hasPodAffinity() const { return affinity != nullptr; }
  bool hasRequiredAntiAffinity() const {
    return affinity != nullptr && !affinity->requiredAntiAffinity.empty();
  }
  const api::Pod& operator*() const { return *pod; }
  const api::Pod* operator->() const { return pod.get(); }
};

using PodInfoPtr = std::shared_ptr<const PodInfo>;

// A pod waiting in the scheduling queue: `timestamp` is when it was (re)queued, the secondary
// order.
struct QueuedPodInfo {
  PodInfoPtr podInfo;
  api::Timestamp timestamp;
  int attempts = 0;
};

inline PodInfoPtr makePodInfo(api::PodPtr pod) { return std::make_shared<PodInfo>(std::move(pod)); }

}  // namespace berth::framework
