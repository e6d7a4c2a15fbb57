#pragma once
// NodeInfo: one node and the pods placed on it, with the sums that Filter and Score read. Adding or
// removing a pod is O(pods' ports + scalar resources), so assuming a placement is cheap.
// `generation` moves on every change, so a cache can copy only the nodes that changed into the next
// snapshot.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/resource.h"
#include "pkg/labels/label_set.h"

namespace berth::framework {

// Host ports in use on a node. 0.0.0.0 conflicts with every address for the same protocol and port.
class HostPortInfo {
 public:
  void add(const HostPort& p);
  void remove(const HostPort& p);
  bool conflicts(const HostPort& p) const;
  bool empty() const { return ports_.empty(); }

 private:
  std::vector<HostPort> ports_;  // a multiset: two pods may hold the same port on different IPs
};

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(api::NodePtr node) { setNode(std::move(node)); }

  void setNode(api::NodePtr node);
  // The node object; null for a NodeInfo that holds only pods bound to a node not yet seen.
  const api::Node* node() const { return node_.get(); }
  const api::NodePtr& nodePtr() const { return node_; }
  const std::string& name() const { return name_; }
  // The node's labels in a lookup-friendly layout (empty without a node).
  const labels::LabelSet& labels() const { return labels_; }
  // Copies of spec fields every Filter reads, kept here to spare a cache miss per node.
  bool unschedulable() const { return unschedulable_; }
  std::span<const api::Taint> taints() const { return taints_; }

  void addPod(PodInfoPtr pod);
  // Removes the pod with this uid (or namespace/name when uids are empty); false when absent.
  bool removePod(const api::Pod& pod);

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  // The pod with this uid (or namespace/name when uids are empty); null when absent.
  PodInfoPtr findPod(const api::Pod& pod) const;
  // The pods with pod affinity or anti-affinity of any kind, and those with required
  // anti-affinity: InterPodAffinity reads only these where it can (upstream's PodsWithAffinity,
  // PodsWithRequiredAntiAffinity).
  const std::vector<PodInfoPtr>& podsWithAffinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& podsWithRequiredAntiAffinity() const {
    return pods_with_required_anti_affinity_;
  }
  const Resource& allocatable() const { return allocatable_; }
  const Resource& requested() const { return requested_; }
  const Resource& nonZeroRequested() const { return non_zero_requested_; }
  const HostPortInfo& usedPorts() const { return used_ports_; }
  // How many of this node's pods use each claim, by podClaimKeys (upstream's PVCRefCounts):
  // VolumeRestrictions asks whether a ReadWriteOncePod claim is in use anywhere.
  const std::map<std::string, int>& pvcRefCounts() const { return pvc_ref_counts_; }
  int64_t generation() const { return generation_; }
  // Where the Snapshot holding this NodeInfo last put it (Snapshot::findPosition checks that it is
  // still there); a copy carries the original's.
  uint32_t snapshotPosition() const { return snapshot_position_; }
  void setSnapshotPosition(size_t position) {
    snapshot_position_ = static_cast<uint32_t>(position);
  }

 private:
  void bump();

  api::NodePtr node_;
  std::string name_;
  labels::LabelSet labels_;
  uint32_t snapshot_position_ = UINT32_MAX;  // beside the labels that the same readers load
  bool unschedulable_ = false;
  std::span<const api::Taint> taints_;  // into *node_
  std::vector<PodInfoPtr> pods_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  Resource allocatable_;
  Resource requested_;
  Resource non_zero_requested_;
  HostPortInfo used_ports_;
  std::map<std::string, int> pvc_ref_counts_;
  int64_t generation_ = 0;
};

using NodeInfoPtr = std::shared_ptr<NodeInfo>;

// The claims a pod's volumes use, as "namespace/claim": persistentVolumeClaim volumes by their
// claimName, generic ephemeral volumes by the claim the ephemeral volume controller creates for
// them ("<pod>-<volume>"). Upstream's NodeInfo.PVCRefCounts keys.
std::vector<std::string> podClaimKeys(const api::Pod& pod);

}  // namespace berth::framework
