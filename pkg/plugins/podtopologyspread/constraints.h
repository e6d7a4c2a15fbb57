#pragma once
// PodTopologySpread's constraints as a cycle uses them: the pod's own (or the profile's defaults,
// with a selector deduced from the Services and controller that select the pod), validated, with
// their selectors compiled once so that the per-node work is label lookups only (upstream's
// common.go and helper/spread.go).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/pod_info.h"
#include "pkg/labels/label_set.h"
#include "pkg/labels/node_affinity.h"
#include "pkg/labels/selector.h"
#include "pkg/util/result.h"

namespace berth::plugins::podtopologyspread {

inline constexpr std::string_view kHostnameKey = "kubernetes.io/hostname";
inline constexpr std::string_view kZoneKey = "topology.kubernetes.io/zone";
inline constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
inline constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";

// Several label selectors ANDed (a constraint's selector merged with its matchLabelKeys, or a
// Service's selector with a ReplicaSet's), or one that selects nothing (a constraint without a
// labelSelector).
class SpreadSelector {
 public:
  static SpreadSelector nothing() { return SpreadSelector(false); }
  static SpreadSelector of(labels::Selector s) {
    SpreadSelector out(true);
    out.add(std::move(s));
    return out;
  }

  void add(labels::Selector s) {
    if (!s.empty()) parts_.push_back(std::move(s));
  }
  bool matches(const api::StringMap& labels) const {
    if (!selects_) return false;
    for (const labels::Selector& s : parts_) {
      if (!s.matches(labels)) return false;
    }
    return true;
  }
  // Upstream counts no existing pod for an empty selector (which still matches the incoming pod).
  bool countsPods() const { return selects_ && !parts_.empty(); }
  bool empty() const { return selects_ && parts_.empty(); }
  // The selectors ANDed (none for one that selects nothing, or everything).
  const std::vector<labels::Selector>& parts() const { return parts_; }

 private:
  explicit SpreadSelector(bool selects) : selects_(selects) {}
  bool selects_;
  std::vector<labels::Selector> parts_;
};

struct Constraint {
  int32_t maxSkew = 1;
  std::string topologyKey;
  SpreadSelector selector = SpreadSelector::nothing();
  int32_t minDomains = 1;
  bool honorNodeAffinity = true;  // nodeAffinityPolicy Honor (the default)
  bool honorNodeTaints = false;   // nodeTaintsPolicy Honor (Ignore is the default)
};

// What the plugin applies to pods without constraints of their own.
struct Defaults {
  std::vector<api::TopologySpreadConstraint> constraints;
  bool system = false;  // defaultingType System: the selector need not cover every key
};

// The first problem of the pod's spec.topologySpreadConstraints, as the API server would word it
// ("spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero").
util::Result<void> validatePodConstraints(const api::Pod& pod);

// The constraints with this whenUnsatisfiable: the pod's own, or when it has none, `defaults`
// with the selector deduced for the pod (none when nothing selects it). `objects` may be null.
util::Result<std::vector<Constraint>> constraintsFor(const api::Pod& pod,
                                                     std::string_view whenUnsatisfiable,
                                                     const Defaults& defaults,
                                                     const framework::ClusterObjects* objects);

// helper.DefaultSelector: the selectors of the Services in the pod's namespace that select it,
// ANDed with its controller's (ReplicationController, ReplicaSet or StatefulSet). Empty when none.
SpreadSelector defaultSelector(const api::Pod& pod, const framework::ClusterObjects* objects);

// Whether the node carries every constraint's topology key.
bool hasAllKeys(const labels::LabelSet& nodeLabels, const std::vector<Constraint>& constraints);

// Which nodes count for a constraint (matchNodeInclusionPolicies): with Honor, the pod's required
// node affinity and nodeSelector must match and no NoSchedule/NoExecute taint may be untolerated.
class NodeInclusion {
 public:
  explicit NodeInclusion(const api::Pod& pod);  // borrows the pod
  bool includes(const Constraint& c, const labels::LabelSet& nodeLabels, std::string_view nodeName,
                std::span<const api::Taint> taints) const;
  // Whether includes() holds for every node: the constraint honors neither policy, or the pod has
  // nothing for it to honor.
  bool includesAll(const Constraint& c) const {
    return (!c.honorNodeAffinity || affinity_free_) && !c.honorNodeTaints;
  }

 private:
  const api::Pod* pod_;
  bool affinity_free_;  // no nodeSelector, no required node affinity
  labels::RequiredNodeAffinity required_;
};

// Whether one pod counts for the selector: not terminating, in namespace `ns`, matching.
bool countsPod(const api::Pod& pod, const SpreadSelector& selector, std::string_view ns);
// Pods on the node that count for the selector.
int64_t countMatchingPods(const std::vector<framework::PodInfoPtr>& pods,
                          const SpreadSelector& selector, std::string_view ns);

}  // namespace berth::plugins::podtopologyspread
