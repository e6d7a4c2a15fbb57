#pragma once
// The scheduling framework's extension points, one small interface each (upstream's
// kube-scheduler/framework/interface.go). A plugin derives from the points it implements; the
// runtime sorts plugins into per-point lists once, when the profile is built.
//
// Filter and Score run once per node, possibly on several threads at once: they must only read the
// plugin, the CycleState and the NodeInfo they are given (and, for a plugin that is not
// nodeLocal(), what its PreFilter/PreScore read from elsewhere in the cluster).

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/framework/cycle_state.h"
#include "pkg/framework/events.h"
#include "pkg/framework/fit_error.h"
#include "pkg/framework/node_info.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/status.h"

namespace berth::framework {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // Whether the plugin's Filter status and raw Score for a node depend only on the pod (its
  // namespace, labels and spec) and that node's NodeInfo (upstream's SignPlugin idea). The
  // equivalence cache then reuses them for equivalent pods on nodes that have not changed; a plugin
  // that reads other nodes (InterPodAffinity, PodTopologySpread) keeps the default and runs every
  // cycle.
  virtual bool nodeLocal() const { return false; }
};

// The cluster events that may make a pod this plugin rejected schedulable (upstream's
// EnqueueExtensions). The queue retries an unschedulable pod only on an event one of its rejecting
// plugins registered, and whose hint, if any, says Queue. A rejecting plugin that is no
// EnqueueExtensions is retried on every event.
class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> eventsToRegister() const = 0;
};

// Orders the active queue: true when a should be scheduled before b.
class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// PreFilter may narrow the nodes to evaluate (e.g. NodeAffinity with matchFields on metadata.name).
struct PreFilterResult {
  std::optional<std::set<std::string>> nodeNames;  // nullopt: all nodes
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Runs once per cycle. Unschedulable* rejects the pod on every node; Skip skips this plugin's
  // Filter.
  virtual Status preFilter(CycleState& state, const PodInfo& pod,
                           PreFilterResult& result) const = 0;
};

// A PreFilter plugin whose state depends on the other pods of the cluster updates that state as if
// a pod were added to or removed from a node (upstream's PreFilterExtensions), so preemption's dry
// runs and the nominated-pods pass can evaluate a changed node without rerunning PreFilter.
class PreFilterExtensions : public virtual Plugin {
 public:
  virtual Status addPod(CycleState& state, const PodInfo& podToSchedule, const PodInfo& podToAdd,
                        const NodeInfo& node) const = 0;
  virtual Status removePod(CycleState& state, const PodInfo& podToSchedule,
                           const PodInfo& podToRemove, const NodeInfo& node) const = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status filter(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
};

// What a PostFilter plugin (preemption) found: the node the pod is nominated to, and the pods to
// evict from it first. The plugin does no I/O: the scheduler, or the simulator, carries it out.
struct PostFilterResult {
  std::string nominatedNode;
  std::vector<PodInfoPtr> victims;
  // Set with a rejection when preemption found no candidate node: a nomination the pod carries
  // from an earlier attempt is cleared (upstream's empty ModeOverride). A pod that is merely not
  // eligible keeps its nomination.
  bool clearNomination = false;
};

// Runs when no node fits. `diagnosis` holds this cycle's per-node Filter rejections (and the
// status of the nodes PreFilter left out). Success with a result nominates a node.
class PostFilterPlugin : public virtual Plugin {
 public:
  virtual Status postFilter(CycleState& state, const PodInfo& pod, const Diagnosis& diagnosis,
                            PostFilterResult& result) const = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Runs once per cycle over the feasible nodes. Skip skips this plugin's Score.
  virtual Status preScore(CycleState& state, const PodInfo& pod,
                          const std::vector<const NodeInfo*>& nodes) const = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // A raw score for one node; after normalizeScores every score must be in [0, kMaxNodeScore].
  virtual Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       int64_t& out) const = 0;
  // Rescales the raw scores of all feasible nodes (upstream's ScoreExtensions). Default: none.
  virtual Status normalizeScores(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                 std::vector<int64_t>& /*scores*/) const {
    return Status::success();
  }
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) const = 0;
  virtual void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) const = 0;
};

// Runs in the binding cycle after Reserve and before Bind, off the scheduling thread (upstream's
// PreBind: VolumeBinding writes its PV and PVC updates there and waits until the claims are
// bound). A status other than success unreserves the pod and sends it back to the queue.
class PreBindPlugin : public virtual Plugin {
 public:
  // Runs on the scheduling thread after Reserve (upstream's PreBindPreFlight): Skip when preBind
  // has nothing to do for this pod. The scheduler runs the binding cycles of pods some PreBind
  // works for (and may wait in) apart from the others, so that their waits hold up no other
  // binding. Default: success, preBind has work.
  virtual Status preBindPreFlight(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                  const std::string& /*node*/) const {
    return Status::success();
  }
  // May block (VolumeBinding waits for its claims to be bound); a wait ends early, with an error,
  // once state.stopToken() is requested.
  virtual Status preBind(CycleState& state, const PodInfo& pod, const std::string& node) const = 0;
};

// Binds the pod to the node (e.g. POSTs a Binding). Skip means "not mine; ask the next bind
// plugin".
class BindPlugin : public virtual Plugin {
 public:
  virtual Status bind(CycleState& state, const PodInfo& pod, const std::string& node) const = 0;
};

using PluginPtr = std::unique_ptr<Plugin>;

// Upstream's DefaultNormalizeScore: scale to [0, kMaxNodeScore] by the maximum; reverse flips it.
void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::vector<int64_t>& scores);

}  // namespace berth::framework
