#pragma once
// Snapshot: the nodes a scheduling cycle sees, in a stable order. Plugins only read it; the caller
// (the cache, or the simulator) may add an assumed pod to one NodeInfo between cycles, through
// addPod, so that the snapshot's list of generations stays true.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/framework/inter_pod_index.h"
#include "pkg/framework/node_info.h"

namespace berth::framework {

class Snapshot {
 public:
  Snapshot() = default;

  // Nodes in the given order, with the bound pods added to their nodes. Pods bound to a node that
  // is not in `nodes` are returned in `orphans` (they occupy nothing until that node appears).
  static Snapshot build(const std::vector<api::NodePtr>& nodes,
                        const std::vector<PodInfoPtr>& boundPods,
                        std::vector<PodInfoPtr>* orphans = nullptr);

  // Appends the node, or replaces the NodeInfo of the node with the same name in place.
  void addNodeInfo(NodeInfoPtr info);
  // Drops the named node, keeping the order of the others; false when absent.
  bool removeNodeInfo(std::string_view name);
  // Adds or removes a pod on the named node in place; false when the node is absent (or, for
  // removePod, the pod is not on it).
  bool addPod(std::string_view node, PodInfoPtr pod);
  bool removePod(std::string_view node, const api::Pod& pod);

  const std::vector<NodeInfoPtr>& nodeInfos() const { return node_infos_; }
  // Each node's NodeInfo generation, by position, in one array: finding the nodes that changed
  // since a generation reads this, not thousands of NodeInfos scattered in memory.
  const std::vector<int64_t>& generations() const { return generations_; }
  size_t numNodes() const { return node_infos_.size(); }
  const NodeInfo* get(std::string_view name) const;
  // The index of a NodeInfo of this snapshot in nodeInfos().
  size_t positionOf(const NodeInfo& info) const { return index_.at(info.name()); }
  // The same without a lookup by name: -1 when `info` is not one of this snapshot's NodeInfos (a
  // copy of one, or another snapshot's).
  int64_t findPosition(const NodeInfo& info) const {
    const size_t p = info.snapshotPosition();
    return p < node_infos_.size() && node_infos_[p].get() == &info ? static_cast<int64_t>(p) : -1;
  }
  // The nodes holding pods with pod (anti-)affinity, and with required anti-affinity, in no
  // particular order (upstream's HavePodsWithAffinityList, HavePodsWithRequiredAntiAffinityList):
  // kept up to date on every change, so InterPodAffinity's scan of existing pods' terms costs only
  // the nodes that have some.
  const std::vector<const NodeInfo*>& nodesWithPodAffinity() const {
    return with_affinity_.items();
  }
  const std::vector<const NodeInfo*>& nodesWithRequiredAntiAffinity() const {
    return with_required_anti_affinity_.items();
  }
  // The nodes whose status lists container images, in no particular order: ImageLocality reads
  // only these.
  const std::vector<const NodeInfo*>& nodesWithImages() const { return with_images_.items(); }
  // Every pod's labels and (anti-)affinity terms, counted per topology domain (InterPodAffinity
  // reads these instead of walking every pod).
  const InterPodIndex& interPodIndex() const { return inter_pod_; }
  // Whether a pod on one of these nodes uses the claim "namespace/name" (upstream's
  // StorageInfos().IsPVCUsedByPods), from the NodeInfos' pvcRefCounts.
  bool isPVCUsedByPods(std::string_view key) const;

  // The newest NodeInfo generation reflected here; the cache copies only nodes changed since.
  int64_t generation() const { return generation_; }
  void setGeneration(int64_t generation) { generation_ = generation; }

 private:
  // A set of NodeInfos with O(1) insert and erase, iterated as a vector.
  class NodeSet {
   public:
    void set(const NodeInfo* info, bool member);
    const std::vector<const NodeInfo*>& items() const { return items_; }

   private:
    std::vector<const NodeInfo*> items_;
    std::unordered_map<const NodeInfo*, size_t> at_;
  };
  // Re-files a NodeInfo (added or changed) in the three sets; `old` (replaced or removed) leaves
  // them.
  void track(const NodeInfo* old, const NodeInfo* now);
  // Adds (sign 1) or takes away (-1) a NodeInfo's claim references from the cluster's.
  void countClaims(const NodeInfo& info, int sign);

  std::vector<NodeInfoPtr> node_infos_;
  std::vector<int64_t> generations_;  // node_infos_[i]->generation()
  std::unordered_map<std::string, size_t> index_;
  int64_t generation_ = 0;
  NodeSet with_affinity_;
  NodeSet with_required_anti_affinity_;
  NodeSet with_images_;
  InterPodIndex inter_pod_;
  std::unordered_map<std::string, int> pvc_ref_counts_;  // the sum of the nodes' pvcRefCounts
};

}  // namespace berth::framework
