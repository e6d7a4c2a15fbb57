#include "pkg/plugins/volumerestrictions/volume_restrictions.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/snapshot.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::volumerestrictions {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kPreFilterStateKey =
    framework::makeStateKey("PreFilterVolumeRestrictions");

constexpr std::string_view kClaimSource = "persistentVolumeClaim";

// The pod's ReadWriteOncePod claims and how many scheduled pods use them (at most one each).
// Preemption's dry runs move the count through addPod/removePod.
struct PreFilterState final : framework::StateData {
  std::string ns;
  std::set<std::string> readWriteOncePodClaims;
  int conflictingRefs = 0;

  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
  // The other pod's references to these claims. Upstream compares claim names only; a claim is
  // namespaced, so a pod of another namespace never holds it.
  int refsOf(const api::Pod& other) const {
    if (other.metadata.namespace_ != ns) return 0;
    int n = 0;
    for (const api::Volume& v : other.spec.volumes) {
      if (v.source == kClaimSource && readWriteOncePodClaims.count(v.claimName) > 0) ++n;
    }
    return n;
  }
};

bool isRestrictedDisk(const api::Volume& v) {
  return v.source == "gcePersistentDisk" || v.source == "awsElasticBlockStore" ||
         v.source == "rbd" || v.source == "iscsi";
}

bool haveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&b](const std::string& x) {
    return std::find(b.begin(), b.end(), x) != b.end();
  });
}

// Whether `v` of the incoming pod conflicts with a volume of a pod already on the node.
bool conflicts(const api::Volume& v, const api::Pod& existing) {
  for (const api::Volume& e : existing.spec.volumes) {
    if (e.source != v.source || e.disk != v.disk) continue;
    const bool bothReadOnly = v.readOnly && e.readOnly;
    if (v.source == "awsElasticBlockStore") return true;
    if ((v.source == "gcePersistentDisk" || v.source == "iscsi") && !bothReadOnly) return true;
    if (v.source == "rbd" && v.rbdPool == e.rbdPool && haveOverlap(v.rbdMonitors, e.rbdMonitors) &&
        !bothReadOnly) {
      return true;
    }
  }
  return false;
}

bool conflictsWithAny(const api::Pod& pod, const std::vector<const api::Pod*>& existing) {
  for (const api::Volume& v : pod.spec.volumes) {
    if (!isRestrictedDisk(v)) continue;
    for (const api::Pod* e : existing) {
      if (conflicts(v, *e)) return true;
    }
  }
  return false;
}

bool usesClaim(const api::Pod& pod, std::string_view ns, std::string_view name) {
  if (pod.metadata.namespace_ != ns) return false;
  return std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), [&](const api::Volume& v) {
    return v.source == kClaimSource && v.claimName == name;
  });
}

class VolumeRestrictions final : public framework::PreFilterPlugin,
                                 public framework::PreFilterExtensions,
                                 public framework::FilterPlugin,
                                 public framework::EnqueueExtensions {
 public:
  explicit VolumeRestrictions(const framework::ClusterObjects* objects) : objects_(objects) {}

  std::string_view name() const override { return names::kVolumeRestrictions; }

  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::EventResource;
    using framework::QueueingHint;
    // A deleted pod frees the disks it held, and a ReadWriteOncePod claim it used (spec.volumes
    // is immutable, so pod updates cannot help).
    framework::ClusterEventWithHint podDeleted{
        framework::ClusterEvent{EventResource::AssignedPod, ActionType::Delete}};
    podDeleted.podHint = [](const api::Pod& pod, const api::Pod* deleted, const api::Pod*) {
      if (deleted == nullptr) return QueueingHint::Queue;
      if (deleted->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::Skip;
      if (conflictsWithAny(pod, {deleted})) return QueueingHint::Queue;
      for (const api::Volume& v : pod.spec.volumes) {
        if (v.source == kClaimSource && usesClaim(*deleted, pod.metadata.namespace_, v.claimName))
          return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    };
    // The claim the pod waits for, created.
    framework::ClusterEventWithHint claimAdded{framework::events::kPersistentVolumeClaimAdd};
    claimAdded.claimHint = [](const api::Pod& pod, const api::PersistentVolumeClaim*,
                              const api::PersistentVolumeClaim* added) {
      if (added == nullptr) return QueueingHint::Queue;
      return usesClaim(pod, added->metadata.namespace_, added->metadata.name) ? QueueingHint::Queue
                                                                              : QueueingHint::Skip;
    };
    // Every new node may be free of the pod's disks.
    return {std::move(podDeleted),
            framework::ClusterEventWithHint{
                framework::ClusterEvent{EventResource::Node, ActionType::Add}},
            std::move(claimAdded)};
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                   framework::PreFilterResult&) const override {
    const std::vector<api::Volume>& volumes = pod->spec.volumes;
    const bool needsDiskCheck = std::any_of(volumes.begin(), volumes.end(), isRestrictedDisk);
    const bool hasClaims = std::any_of(volumes.begin(), volumes.end(), [](const api::Volume& v) {
      return v.source == kClaimSource;
    });
    if (!needsDiskCheck && !hasClaims) return Status::skip();  // most pods: nothing to look up
    auto s = std::make_unique<PreFilterState>();
    s->ns = pod->metadata.namespace_;
    for (const api::Volume& v : volumes) {
      if (v.source != kClaimSource) continue;
      api::PersistentVolumeClaimPtr claim =
          objects_ != nullptr ? objects_->getPersistentVolumeClaim(s->ns, v.claimName) : nullptr;
      if (claim == nullptr) {
        return Status(Code::UnschedulableAndUnresolvable,
                      "persistentvolumeclaim \"" + v.claimName + "\" not found");
      }
      const auto& modes = claim->spec.accessModes;
      if (std::find(modes.begin(), modes.end(), api::kReadWriteOncePod) != modes.end()) {
        s->readWriteOncePodClaims.insert(v.claimName);
      }
    }
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot != nullptr) {
      for (const std::string& claim : s->readWriteOncePodClaims) {
        if (snapshot->isPVCUsedByPods(s->ns + "/" + claim)) ++s->conflictingRefs;
      }
    }
    if (!needsDiskCheck && s->conflictingRefs == 0) return Status::skip();
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status addPod(framework::CycleState& state, const framework::PodInfo&,
                const framework::PodInfo& podToAdd, const framework::NodeInfo&) const override {
    return updateWithPod(state, *podToAdd.pod, 1);
  }

  Status removePod(framework::CycleState& state, const framework::PodInfo&,
                   const framework::PodInfo& podToRemove,
                   const framework::NodeInfo&) const override {
    return updateWithPod(state, *podToRemove.pod, -1);
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    std::vector<const api::Pod*> existing;
    existing.reserve(node.pods().size());
    for (const auto& p : node.pods()) existing.push_back(p->pod.get());
    if (conflictsWithAny(*pod, existing)) {
      return Status(Code::Unschedulable, kErrReasonDiskConflict);
    }
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (s == nullptr) {
      return Status::error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    }
    if (s->conflictingRefs > 0) {
      return Status(Code::Unschedulable, kErrReasonReadWriteOncePodConflict);
    }
    return Status::success();
  }

 private:
  static Status updateWithPod(framework::CycleState& state, const api::Pod& other, int sign) {
    const auto* current = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (current == nullptr) {
      return Status::error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    }
    auto s = std::make_unique<PreFilterState>(*current);
    s->conflictingRefs += sign * s->refsOf(other);
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  const framework::ClusterObjects* objects_;
};

}  // namespace

util::Result<framework::PluginPtr> newVolumeRestrictions(const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<VolumeRestrictions>(handle.objects));
}

}  // namespace berth::plugins::volumerestrictions
