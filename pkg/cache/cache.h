#pragma once
// Cache: which pods occupy which node, as the scheduler believes (upstream's backend/cache). Every
// pod with spec.nodeName set counts against its node, whoever bound it. A pod berth has just placed
// is *assumed* on its node before its binding is sent, so the next cycle cannot hand out the same
// capacity; the informer's add of the bound pod confirms it:
//
//   assumePod ──> assumed ──finishBinding──> binding sent ──addPod (informer)──> added
//   assumed, binding sent ──forgetPod (bind failed), or TTL if set──> gone
//   added ──removePod, or an update to Succeeded/Failed──> gone
//
// Succeeded and Failed pods hold nothing: the update that makes a pod terminal frees its requests
// once, and kubelet admission rejections of pods berth placed are counted by reason. Pods bound to
// a node the cache has not seen wait on a node-less NodeInfo and count once the node appears; a
// removed node's pods likewise stay until they are deleted. Snapshots skip node-less NodeInfos.
//
// Each NodeInfo's generation moves on every change and the cache keeps nodes most recently changed
// first, so updateSnapshot copies only what changed since the snapshot's generation. The snapshot
// is the scheduling cycle's own copy; informer threads keep updating the cache. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pkg/api/types.h"
#include "pkg/framework/node_info.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/snapshot.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::cache {

struct CacheOptions {
  // How long an assumed pod whose binding was sent waits for the informer to confirm it. Zero, the
  // default, never expires it, as kube-scheduler since v1.23 (durationToExpireAssumedPod = 0).
  util::Duration assumedPodTtl = util::Duration::zero();
};

// How often the daemon should call cleanupAssumedPods() when a TTL is set (upstream's
// cleanAssumedPeriod).
inline constexpr std::chrono::seconds kCleanupAssumedPeriod{1};

// The `type` values of scheduler_cache_size.
struct CacheSize {
  size_t nodes = 0;        // nodes the cache has an object for
  size_t pods = 0;         // pods counted on some node, assumed ones included
  size_t assumedPods = 0;  // assumed and not yet confirmed
  // Not a type of scheduler_cache_size: pods bound to a node the cache has no object for
  // (berth_pods_on_unknown_nodes).
  size_t podsOnUnknownNodes = 0;
};

// Kubelet admission failure reasons (status.reason of a pod kubelet set to Failed without running
// it): "OutOf<resource>" (OutOfcpu, OutOfmemory, OutOfpods...), UnexpectedAdmissionError, and the
// predicate names kubelet re-checks (NodeAffinity, NodePorts, TaintToleration...).
bool isKubeletAdmissionRejection(std::string_view reason);

class Cache {
 public:
  explicit Cache(util::Clock& clock, CacheOptions options = {});
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // --- Nodes (from the node informer) ---
  // Adds the node or, if known, replaces its object (pods already bound to it start counting).
  void addNode(api::NodePtr node);
  void updateNode(api::NodePtr node) { addNode(std::move(node)); }
  // The node leaves snapshots; its pods stay counted on it until they are deleted.
  util::Result<void> removeNode(const api::Node& node);

  // --- Pods placed by this scheduler ---
  // Counts the pod (spec.nodeName set) on its node before the binding is sent.
  util::Result<void> assumePod(framework::PodInfoPtr pod);
  // The binding was sent; starts the TTL, if one is set. Unknown pods are ignored.
  void finishBinding(const api::Pod& pod);
  // The binding failed: stop counting the assumed pod. A pod no longer cached is fine.
  util::Result<void> forgetPod(const api::Pod& pod);
  bool isAssumed(const api::Pod& pod) const;
  // Drops assumed pods whose binding was sent more than the TTL ago; returns how many.
  size_t cleanupAssumedPods();

  // --- Bound pods (from the pod informer) ---
  // A bound pod: counted on spec.nodeName. An assumed pod is confirmed, moving to the node the
  // informer reports if it differs; a known pod is updated; a terminal pod frees what it held.
  util::Result<void> addPod(api::PodPtr pod);
  // The newer version of a bound pod, applied as addPod is (an unknown pod is added).
  util::Result<void> updatePod(api::PodPtr pod) { return addPod(std::move(pod)); }
  // The pod was deleted. Deleting a terminal pod the cache already dropped is fine.
  util::Result<void> removePod(const api::Pod& pod);

  // --- Reading ---
  // Brings `snapshot` up to date: copies the NodeInfos changed since its generation, appends new
  // nodes, drops removed ones; the order of the others does not change. A snapshot must be kept
  // up to date by one cache only.
  void updateSnapshot(framework::Snapshot& snapshot) const;
  CacheSize size() const;
  // Pods berth placed that kubelet then rejected at admission, by status.reason.
  std::map<std::string, int64_t> kubeletRejections() const;

 private:
  struct PodState {
    framework::PodInfoPtr info;  // the version counted on info->pod->spec.nodeName
    bool assumed = false;
    bool bindingFinished = false;
    std::optional<util::MonotonicTime> deadline;  // TTL of an assumed pod whose binding was sent
    bool placedHere = false;  // assumed by this cache at some point: berth placed it
  };
  struct NodeItem {
    framework::NodeInfo info;  // node() is null while only pods bound to it are known
    std::list<NodeItem*>::iterator recent;
    uint64_t order = 0;  // when the node object arrived: snapshots list nodes in this order
  };

  NodeItem& itemLocked(const std::string& name);
  void touchLocked(NodeItem& item);  // to the front of recent_ after a change
  void maybeDropItemLocked(const std::string& name);
  void countLocked(const std::string& key, PodState state);
  void uncountLocked(const std::string& key);
  void dropTerminalLocked(const api::Pod& pod);

  util::Clock& clock_;
  const CacheOptions options_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, PodState> pods_;  // by uid (namespace/name without one)
  std::unordered_map<std::string, NodeItem> nodes_;
  std::list<NodeItem*> recent_;  // most recently changed first, so generations descend
  size_t real_nodes_ = 0;
  size_t assumed_ = 0;
  uint64_t next_order_ = 0;
  std::map<std::string, int64_t> kubelet_rejections_;
};

}  // namespace berth::cache
