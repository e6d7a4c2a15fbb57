#pragma once
// Nominator: the pending pods nominated to a node (upstream's nominator in backend/queue), from two
// sources: a pod's own status.nominatedNodeName, whoever set it, as the pod informer delivers it,
// and this scheduler's preemptions, which nominate a pod before their status patch is seen. A
// nomination ends when the pod is bound (or assumed), deleted, or its status drops the node it
// carried. The scheduling queue keeps it current; Filter reads it through framework::PodNominator.
// Thread-safe: one shared mutex; the queue calls it without holding its own lock.

#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/nominator.h"
#include "pkg/framework/pod_info.h"

namespace berth::queue {

class Nominator final : public framework::PodNominator {
 public:
  // A new version of a pending pod. A status.nominatedNodeName replaces the pod's nomination; a
  // status without one ends a nomination an earlier status carried, but keeps one this scheduler
  // made whose status patch has not arrived yet (upstream's updateNominatedPod). The pod's newest
  // version (its priority) is kept either way.
  void updateFromStatus(api::PodPtr pod);
  // This scheduler nominated `pod` to `node`; an empty node ends the nomination.
  void nominate(framework::PodInfoPtr pod, const std::string& node);
  // The pod is bound, assumed or deleted.
  void remove(const api::Pod& pod);
  // The node `pod` (by namespace/name) is nominated to; empty when none.
  std::string nominatedNode(const api::Pod& pod) const;

  // framework::PodNominator
  std::vector<framework::PodInfoPtr> nominatedPodsForNode(std::string_view node) const override;
  std::optional<std::vector<std::string>> nominatedNodes() const override;

 private:
  struct Nomination {
    framework::PodInfoPtr pod;
    std::string node;
    bool fromStatus = false;  // the pod's status carried this node (else only this scheduler knows)
  };
  void setLocked(const std::string& key, framework::PodInfoPtr pod, const std::string& node,
                 bool fromStatus);
  void eraseLocked(const std::string& key);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Nomination> by_pod_;                 // by namespace/name
  std::unordered_map<std::string, std::vector<std::string>> by_node_;  // node -> pod keys
};

}  // namespace berth::queue
