#pragma once
// EquivalenceCache: what the node-local plugins' Filter and Score said about each node for a class
// of equivalent pods, so the next pod of the class re-evaluates only the nodes that changed since.
// Pods of one ReplicaSet or Job differ only in name and identity; a plugin that declares
// Plugin::nodeLocal() reads the pod's spec, namespace and labels and the one node it is given,
// nothing else. So on a node whose NodeInfo generation has not moved, an equivalent pod gets the
// same status and raw score from those plugins: at 5,000 nodes a cycle of a pod whose predecessor
// was just placed evaluates one node instead of 5,000. The other plugins (which read the rest of
// the cluster) run on every node every cycle, merged in the profile's order, and normalization and
// host selection run over every feasible node, so the outcome is exactly the uncached one.
// (kube-scheduler had an "equivalence class cache" of this kind until v1.12; it was dropped with
// the move to the framework, whose plugins may read the whole cluster.)
//
// Used by one scheduling thread; holds no locks.

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/node_info.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/status.h"

namespace berth::algorithm {

class EquivalenceCache {
 public:
  // What is kept for one node, at the node's position in the snapshot's list.
  struct NodeResult {
    const framework::NodeInfo* node = nullptr;  // compared only, never read: the entry's identity
    int64_t generation = -1;
    uint64_t classId = 0;   // the class the entry was written for (a Class's storage is recycled)
    bool feasible = false;  // Filter passed; otherwise the rejection is in Class::rejections
    bool scored = false;    // raw scores below are valid (only feasible nodes that were scored)
  };

  // Everything known for one (profile, pod class).
  struct Class {
    uint64_t id = 0;
    const framework::runtime::Framework* framework = nullptr;
    std::string key;
    // The node-local Filter plugins the entries were computed with, in order.
    std::vector<const framework::FilterPlugin*> filters;
    // Kept small and apart from the statuses: every cycle reads all of them.
    std::vector<NodeResult> nodes;
    std::vector<framework::Status> rejections;  // by node position; read for infeasible nodes only
    // The node-local score plugins the raw scores are for, in order.
    std::vector<std::string_view> plugins;
    // Raw scores, plugin by plugin: [plugin * nodes.size() + node], so a cycle reads each plugin's
    // row in one pass.
    std::vector<int64_t> scores;

    // Whether the entry at position i still holds for `node`, whose generation is given (from the
    // snapshot's array, so that the check reads no NodeInfo).
    bool fresh(size_t i, const framework::NodeInfo* node, int64_t generation) const {
      return nodes[i].node == node && nodes[i].generation == generation && nodes[i].classId == id;
    }
  };

  // The pods of one class: equal namespace, labels and spec; name, uid, annotations, owner and
  // status do not matter to any plugin berth ships.
  static std::string classKey(const api::Pod& pod);

  // The class's results, sized for `numNodes` (entries past the end dropped, new ones stale). Keeps
  // the most recently used classes only. The first lookup for a profile logs (at V(2)) each Filter
  // or Score plugin that is not node-local, since those run uncached.
  Class& lookup(const framework::runtime::Framework& fw, std::string key, size_t numNodes);

 private:
  static constexpr size_t kClasses = 4;
  std::list<Class> classes_;  // most recently used first
  // The profiles already looked up (a profile's plugins are fixed when it is built).
  std::vector<const framework::runtime::Framework*> seen_;
  uint64_t next_id_ = 1;
};

}  // namespace berth::algorithm
