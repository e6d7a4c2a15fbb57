#include "pkg/plugins/volumebinding/volume_binding.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/framework/snapshot.h"
#include "pkg/log/log.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/volumebinding/assume_cache.h"
#include "pkg/plugins/volumebinding/volume_helpers.h"
#include "pkg/util/quote.h"

namespace berth::plugins::volumebinding {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kClaimsStateKey = framework::makeStateKey("PreFilterVolumeBinding");
const framework::StateKey kReservedStateKey = framework::makeStateKey("ReserveVolumeBinding");

constexpr auto kPollInterval = std::chrono::seconds(1);

// A delayed claim with what Filter needs of the cluster for it, read once in PreFilter.
struct DelayedClaim {
  api::PersistentVolumeClaimPtr pvc;
  std::string className;
  std::optional<labels::Selector> selector;  // spec.selector, compiled
  std::string selectorError;                 // spec.selector does not compile
  api::StorageClassPtr storageClass;         // null: not found
  bool checkCapacity = false;  // the provisioner is a CSIDriver with storageCapacity true
};

struct BoundClaim {
  api::PersistentVolumeClaimPtr pvc;
  api::PersistentVolumePtr pv;  // null: the PV does not exist
};

// PreFilter's classification, read by Filter on every node and by Reserve.
struct ClaimsState final : framework::StateData {
  std::vector<BoundClaim> bound;
  std::vector<DelayedClaim> delayed;  // by requested size, ascending
  std::map<std::string, std::vector<api::PersistentVolumePtr>, std::less<>> pvsByClass;
  std::vector<api::CSIStorageCapacityPtr> capacities;  // when some claim checks capacity
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<ClaimsState>(*this);
  }
};

struct StaticBinding {
  api::PersistentVolumePtr pv;  // as it is to be written
  api::PersistentVolumeClaimPtr pvc;
};

// What Filter decided for one node.
struct PodVolumes {
  std::vector<StaticBinding> staticBindings;
  std::vector<api::PersistentVolumeClaimPtr> provisions;
};

struct FindResult {
  PodVolumes volumes;
  bool nodeConflict = false;
  bool bindConflict = false;
  bool notEnoughSpace = false;
  bool pvMissing = false;
  std::string error;  // non-empty: an internal error
  bool fits() const {
    return error.empty() && !nodeConflict && !bindConflict && !notEnoughSpace && !pvMissing;
  }
};

// Reserve's assumptions for the chosen node, which PreBind writes. Absent when every claim of the
// pod is bound (or it has none): PreBind has nothing to do.
struct ReservedState final : framework::StateData {
  std::string node;
  labels::LabelSet nodeLabels;
  PodVolumes volumes;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<ReservedState>(*this);
  }
};

std::string claimKey(const api::PersistentVolumeClaim& pvc) {
  return pvc.metadata.namespace_ + "/" + pvc.metadata.name;
}

// The claim's name for a volume that uses one (and whether it is a generic ephemeral volume).
std::optional<std::pair<std::string, bool>> volumeClaimName(const api::Pod& pod,
                                                            const api::Volume& volume) {
  if (volume.source == "persistentVolumeClaim") return std::pair(volume.claimName, false);
  if (volume.source == "ephemeral") return std::pair(ephemeralClaimName(pod, volume), true);
  return std::nullopt;
}

bool podReferencesClaim(const api::Pod& pod, const api::PersistentVolumeClaim& claim) {
  if (pod.metadata.namespace_ != claim.metadata.namespace_) return false;
  return std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), [&](const api::Volume& v) {
    auto name = volumeClaimName(pod, v);
    return name && name->first == claim.metadata.name;
  });
}

// Some CSIStorageCapacity of the class offers the claim's size to the node.
bool capacityAvailable(const std::vector<api::CSIStorageCapacityPtr>& capacities,
                       const api::StorageClass& storageClass, const resource::Quantity& size,
                       const labels::LabelSet& nodeLabels) {
  for (const api::CSIStorageCapacityPtr& c : capacities) {
    if (c->storageClassName != storageClass.metadata.name) continue;
    const std::optional<resource::Quantity>& limit =
        c->maximumVolumeSize ? c->maximumVolumeSize : c->capacity;
    if (!limit || limit->value() < size.value()) continue;
    if (!c->nodeTopology) continue;  // no node has access
    auto selector = labels::Selector::fromLabelSelector(*c->nodeTopology);
    if (!selector.ok()) continue;
    // The selector reads only its requirements' keys: the node's values of those suffice.
    api::StringMap relevant;
    for (const auto& req : selector->requirements()) {
      if (auto value = nodeLabels.find(req.key)) relevant.emplace(req.key, std::string(*value));
    }
    if (selector->matches(relevant)) return true;
  }
  return false;
}

class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin,
                            public framework::EnqueueExtensions {
 public:
  VolumeBinding(const VolumeBindingArgs& args, const framework::Handle& handle)
      : objects_(handle.objects),
        volumes_(handle.volumes),
        clock_(handle.clock != nullptr ? *handle.clock : util::realClock()),
        bind_timeout_(std::chrono::seconds(args.bindTimeoutSeconds)),
        cache_(handle.objects) {}

  std::string_view name() const override { return names::kVolumeBinding; }

  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::ClusterEvent;
    using framework::EventResource;
    const ActionType addOrUpdate = ActionType::Add | ActionType::Update;
    framework::ClusterEventWithHint claims{
        ClusterEvent{EventResource::PersistentVolumeClaim, addOrUpdate}};
    // A claim the pod uses was created or changed (bound, annotated, its class fixed).
    claims.claimHint = [](const api::Pod& pod, const api::PersistentVolumeClaim*,
                          const api::PersistentVolumeClaim* newClaim) {
      return newClaim != nullptr && podReferencesClaim(pod, *newClaim)
                 ? framework::QueueingHint::Queue
                 : framework::QueueingHint::Skip;
    };
    return {
        {ClusterEvent{EventResource::StorageClass, addOrUpdate}},
        std::move(claims),
        {ClusterEvent{EventResource::PersistentVolume, addOrUpdate}},
        {ClusterEvent{EventResource::Node,
                      ActionType::Add | ActionType::UpdateNodeLabel | ActionType::UpdateNodeTaint}},
        {ClusterEvent{EventResource::CSINode, addOrUpdate}},
        {ClusterEvent{EventResource::CSIDriver, addOrUpdate}},
        {ClusterEvent{EventResource::CSIStorageCapacity, addOrUpdate}},
    };
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& podInfo,
                   framework::PreFilterResult& result) const override {
    const api::Pod& pod = *podInfo.pod;
    auto s = std::make_unique<ClaimsState>();
    bool hasClaims = false;
    std::vector<api::PersistentVolumeClaimPtr> claims;
    for (const api::Volume& volume : pod.spec.volumes) {
      auto ref = volumeClaimName(pod, volume);
      if (!ref) continue;
      hasClaims = true;
      const auto& [claimName, ephemeral] = *ref;
      api::PersistentVolumeClaimPtr pvc = cache_.pvc(pod.metadata.namespace_, claimName);
      if (pvc == nullptr) {
        return Status(Code::UnschedulableAndUnresolvable,
                      ephemeral
                          ? "waiting for ephemeral volume controller to create the "
                            "persistentvolumeclaim " +
                                util::quoteGo(claimName)
                          : "persistentvolumeclaim " + util::quoteGo(claimName) + " not found");
      }
      if (pvc->status.phase == "Lost") {
        return Status(Code::UnschedulableAndUnresolvable,
                      "persistentvolumeclaim " + util::quoteGo(pvc->metadata.name) +
                          " bound to non-existent persistentvolume " +
                          util::quoteGo(pvc->spec.volumeName));
      }
      if (pvc->metadata.deletionTimestamp) {
        return Status(
            Code::UnschedulableAndUnresolvable,
            "persistentvolumeclaim " + util::quoteGo(pvc->metadata.name) + " is being deleted");
      }
      if (ephemeral && !claimControlledByPod(*pvc, pod)) {
        return Status(Code::UnschedulableAndUnresolvable,
                      "PVC " + claimKey(*pvc) + " was not created for pod " +
                          pod.metadata.namespace_ + "/" + pod.metadata.name +
                          " (pod is not owner)");
      }
      claims.push_back(std::move(pvc));
    }
    if (!hasClaims) return Status::skip();

    bool unboundImmediate = false;
    for (api::PersistentVolumeClaimPtr& pvc : claims) {
      if (claimFullyBound(*pvc)) {
        api::PersistentVolumePtr pv = cache_.pv(pvc->spec.volumeName);
        if (pv != nullptr) warnInvalidNodeAffinity(*pv);
        s->bound.push_back({std::move(pvc), std::move(pv)});
        continue;
      }
      auto delayed = delayBinding(*pvc);
      if (!delayed.ok()) return Status::error(delayed.error().message);
      // A claim pre-bound to a PV (volumeName set) waits for the PV controller, as an immediate
      // one.
      if (!*delayed || !pvc->spec.volumeName.empty()) {
        unboundImmediate = true;
        continue;
      }
      s->delayed.push_back(delayedClaim(std::move(pvc), *s));
    }
    if (unboundImmediate) {
      return Status(Code::UnschedulableAndUnresolvable, kErrReasonUnboundImmediate);
    }
    std::stable_sort(s->delayed.begin(), s->delayed.end(),
                     [](const DelayedClaim& a, const DelayedClaim& b) {
                       return requestedStorage(*a.pvc).cmp(requestedStorage(*b.pvc)) < 0;
                     });
    if (std::any_of(s->delayed.begin(), s->delayed.end(),
                    [](const DelayedClaim& c) { return c.checkCapacity; })) {
      s->capacities = objects_->listCSIStorageCapacities();
    }
    // Local PVs the bound claims use pin the pod to their nodes.
    std::optional<std::set<std::string>> eligible;
    for (const BoundClaim& b : s->bound) {
      if (b.pv == nullptr) continue;
      std::set<std::string> nodes = localVolumeNodeNames(*b.pv);
      if (nodes.empty()) continue;
      if (!eligible) {
        eligible = std::move(nodes);
      } else {
        std::erase_if(*eligible, [&](const std::string& n) { return !nodes.contains(n); });
      }
    }
    result.nodeNames = std::move(eligible);
    state.write(kClaimsStateKey, std::move(s));
    return Status::success();
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo&,
                const framework::NodeInfo& node) const override {
    const auto* s = state.readAs<ClaimsState>(kClaimsStateKey);
    if (s == nullptr) return Status::error("reading \"PreFilterVolumeBinding\" from cycleState");
    if (node.node() == nullptr) return Status::error("node not found");
    FindResult found = findPodVolumes(*s, node.name(), node.labels(), /*keepVolumes=*/false);
    if (!found.error.empty()) return Status::error(std::move(found.error));
    if (found.fits()) return Status::success();
    Status status(Code::UnschedulableAndUnresolvable, std::vector<std::string>{});
    if (found.nodeConflict) status.addReason(kErrReasonNodeConflict);
    if (found.bindConflict) status.addReason(kErrReasonBindConflict);
    if (found.notEnoughSpace) status.addReason(kErrReasonNotEnoughSpace);
    if (found.pvMissing) status.addReason(kErrReasonPVNotExist);
    return status;
  }

  Status reserve(framework::CycleState& state, const framework::PodInfo&,
                 const std::string& nodeName) const override {
    const auto* s = state.readAs<ClaimsState>(kClaimsStateKey);
    // No claims, or all bound: nothing to assume or write (PreBind's preflight then Skips).
    if (s == nullptr || s->delayed.empty()) return Status::success();
    auto reserved = std::make_unique<ReservedState>();
    reserved->node = nodeName;
    const framework::NodeInfo* node =
        state.snapshot() != nullptr ? state.snapshot()->get(nodeName) : nullptr;
    if (node == nullptr || node->node() == nullptr) {
      return Status::error("node " + util::quoteGo(nodeName) + " not found");
    }
    FindResult found = findPodVolumes(*s, nodeName, node->labels(), /*keepVolumes=*/true);
    if (!found.error.empty()) return Status::error(std::move(found.error));
    if (!found.fits()) {
      return Status::error("volumes of pod no longer fit node " + util::quoteGo(nodeName));
    }
    reserved->nodeLabels = node->labels();
    for (StaticBinding& b : found.volumes.staticBindings) {
      if (api::PersistentVolumePtr bound = bindVolumeToClaim(*b.pv, *b.pvc)) {
        b.pv = std::move(bound);
        cache_.assume(b.pv);
      }
      reserved->volumes.staticBindings.push_back(std::move(b));
    }
    for (const api::PersistentVolumeClaimPtr& claim : found.volumes.provisions) {
      auto annotated = std::make_shared<api::PersistentVolumeClaim>(*claim);
      annotated->metadata.annotations[std::string(kAnnSelectedNode)] = nodeName;
      cache_.assume(api::PersistentVolumeClaimPtr(annotated));
      reserved->volumes.provisions.push_back(std::move(annotated));
    }
    state.write(kReservedStateKey, std::move(reserved));
    return Status::success();
  }

  void unreserve(framework::CycleState& state, const framework::PodInfo&,
                 const std::string&) const override {
    const auto* r = state.readAs<ReservedState>(kReservedStateKey);
    if (r == nullptr) return;
    for (const StaticBinding& b : r->volumes.staticBindings) cache_.restorePV(b.pv->metadata.name);
    for (const api::PersistentVolumeClaimPtr& c : r->volumes.provisions) {
      cache_.restorePVC(c->metadata.namespace_, c->metadata.name);
    }
  }

  Status preBindPreFlight(const framework::CycleState& state, const framework::PodInfo&,
                          const std::string&) const override {
    const auto* r = state.readAs<ReservedState>(kReservedStateKey);
    return r == nullptr ? Status::skip() : Status::success();
  }

  Status preBind(framework::CycleState& state, const framework::PodInfo&,
                 const std::string& nodeName) const override {
    const auto* r = state.readAs<ReservedState>(kReservedStateKey);
    if (r == nullptr) return Status::success();
    if (r->node != nodeName) {
      return Status::error("no pod volumes found for node " + util::quoteGo(nodeName));
    }
    // Where nothing is written (the simulator), the assumptions are the outcome.
    if (volumes_ == nullptr) return Status::success();
    // Upstream's order: the PVs' claimRefs, then the claims to provision. No rollback: the PV
    // controller finishes or undoes what landed.
    for (const StaticBinding& b : r->volumes.staticBindings) {
      Status s = volumes_->updatePersistentVolume(*b.pv);
      if (!s.isSuccess()) return Status::error(s.message());
    }
    for (const api::PersistentVolumeClaimPtr& c : r->volumes.provisions) {
      Status s = volumes_->updatePersistentVolumeClaim(*c);
      if (!s.isSuccess()) return Status::error(s.message());
    }
    const util::MonotonicTime deadline = clock_.monotonicNow() + bind_timeout_;
    while (true) {
      const util::Duration left = deadline - clock_.monotonicNow();
      if (left <= util::Duration::zero()) {
        return Status::error("binding volumes: context deadline exceeded");
      }
      if (!clock_.sleepFor(std::min<util::Duration>(kPollInterval, left), state.stopToken())) {
        return Status::error("binding volumes: context canceled");
      }
      if (clock_.monotonicNow() >= deadline) {
        return Status::error("binding volumes: context deadline exceeded");
      }
      auto done = checkBindings(*r);
      if (!done.ok()) return Status::error("binding volumes: " + done.error().message);
      if (*done) return Status::success();
    }
  }

 private:
  // Upstream's IsDelayBindingMode: the claim's class is WaitForFirstConsumer. No class, or a class
  // that does not exist, is immediate; a class without volumeBindingMode is an error.
  util::Result<bool> delayBinding(const api::PersistentVolumeClaim& pvc) const {
    const std::string className = claimClass(pvc);
    if (className.empty()) return false;
    api::StorageClassPtr sc = objects_->getStorageClass(className);
    if (sc == nullptr) return false;
    if (!sc->volumeBindingMode) {
      return util::invalidArgument("VolumeBindingMode not set for StorageClass " +
                                   util::quoteGo(className));
    }
    return *sc->volumeBindingMode == api::kVolumeBindingWaitForFirstConsumer;
  }

  DelayedClaim delayedClaim(api::PersistentVolumeClaimPtr pvc, ClaimsState& s) const {
    DelayedClaim c;
    c.className = claimClass(*pvc);
    if (pvc->spec.selector) {
      auto selector = labels::Selector::fromLabelSelector(*pvc->spec.selector);
      if (selector.ok()) {
        c.selector = std::move(*selector);
      } else {
        c.selectorError = "error creating internal label selector for claim: " + claimKey(*pvc) +
                          ": " + selector.error().message;
      }
    }
    if (!s.pvsByClass.contains(c.className)) {
      auto listed = s.pvsByClass.emplace(c.className, cache_.listPVs(c.className)).first;
      for (const api::PersistentVolumePtr& pv : listed->second) warnInvalidNodeAffinity(*pv);
    }
    if (!c.className.empty()) {
      c.storageClass = objects_->getStorageClass(c.className);
      if (c.storageClass != nullptr && !requestedStorage(*pvc).isZero()) {
        api::CSIDriverPtr driver = objects_->getCSIDriver(c.storageClass->provisioner);
        c.checkCapacity = driver != nullptr && driver->storageCapacity.value_or(false);
      }
    }
    c.pvc = std::move(pvc);
    return c;
  }

  // Upstream's FindPodVolumes on one node. With `keepVolumes`, the bindings and provisions found.
  FindResult findPodVolumes(const ClaimsState& s, std::string_view nodeName,
                            const labels::LabelSet& nodeLabels, bool keepVolumes) const {
    FindResult r;
    for (const BoundClaim& b : s.bound) {
      if (b.pv == nullptr) {
        r.pvMissing = true;
        break;
      }
      if (!nodeAffinityMatches(*b.pv, nodeLabels)) {
        r.nodeConflict = true;
        break;
      }
    }
    if (s.delayed.empty()) return r;
    std::vector<const DelayedClaim*> toMatch;
    std::vector<const DelayedClaim*> toProvision;
    for (const DelayedClaim& c : s.delayed) {
      const auto& annotations = c.pvc->metadata.annotations;
      if (auto it = annotations.find(std::string(kAnnSelectedNode)); it != annotations.end()) {
        // Provisioning already started for one node: every other node is out (fast path).
        if (it->second != nodeName) {
          r.bindConflict = true;
          return r;
        }
        toProvision.push_back(&c);
      } else {
        toMatch.push_back(&c);
      }
    }
    bool satisfied = true;
    if (!toMatch.empty()) {
      std::set<std::string> chosen;
      for (const DelayedClaim* c : toMatch) {
        if (!c->selectorError.empty()) {
          r.error = c->selectorError;
          return r;
        }
        static const std::vector<api::PersistentVolumePtr> kNone;
        auto pvs = s.pvsByClass.find(c->className);
        api::PersistentVolumePtr pv =
            findMatchingVolume(*c->pvc, c->selector,
                               pvs == s.pvsByClass.end() ? kNone : pvs->second, nodeLabels, chosen);
        if (pv == nullptr) {
          toProvision.push_back(c);
          satisfied = false;
          continue;
        }
        chosen.insert(pv->metadata.name);
        if (keepVolumes) r.volumes.staticBindings.push_back({std::move(pv), c->pvc});
      }
    }
    if (!toProvision.empty()) {
      // As upstream, provisioning decides alone once static matching left claims over.
      satisfied = true;
      for (const DelayedClaim* c : toProvision) {
        if (c->className.empty()) {
          r.error = "no class for claim " + util::quoteGo(claimKey(*c->pvc));
          return r;
        }
        if (c->storageClass == nullptr) {
          r.error = "failed to find storage class " + util::quoteGo(c->className);
          return r;
        }
        const std::string& provisioner = c->storageClass->provisioner;
        if (provisioner.empty() || provisioner == kNotSupportedProvisioner ||
            !topologyAllows(c->storageClass->allowedTopologies, nodeLabels)) {
          satisfied = false;
          break;
        }
        if (c->checkCapacity && !capacityAvailable(s.capacities, *c->storageClass,
                                                   requestedStorage(*c->pvc), nodeLabels)) {
          r.notEnoughSpace = true;
          break;
        }
        if (keepVolumes) r.volumes.provisions.push_back(c->pvc);
      }
    }
    r.bindConflict = !satisfied;
    return r;
  }

  // Upstream's checkBindings over the informers' objects (not the assumed ones): true when every
  // claim written is bound; an error when binding must be retried.
  util::Result<bool> checkBindings(const ReservedState& r) const {
    for (const StaticBinding& b : r.volumes.staticBindings) {
      api::PersistentVolumePtr pv = objects_->getPersistentVolume(b.pv->metadata.name);
      if (pv == nullptr) {
        return util::invalidArgument("failed to check binding: persistentvolume " +
                                     util::quoteGo(b.pv->metadata.name) + " not found");
      }
      api::PersistentVolumeClaimPtr pvc =
          objects_->getPersistentVolumeClaim(b.pvc->metadata.namespace_, b.pvc->metadata.name);
      if (pvc == nullptr) {
        return util::invalidArgument("failed to check binding: persistentvolumeclaim " +
                                     util::quoteGo(claimKey(*b.pvc)) + " not found");
      }
      // Our write has not reached the informer yet.
      if (!newerResourceVersion(pv->metadata.resourceVersion, b.pv->metadata.resourceVersion)) {
        return false;
      }
      if (!nodeAffinityMatches(*pv, r.nodeLabels)) {
        return util::invalidArgument("pv " + util::quoteGo(pv->metadata.name) +
                                     " node affinity doesn't match node " + util::quoteGo(r.node) +
                                     ": no matching NodeSelectorTerms");
      }
      if (!pv->spec.claimRef || pv->spec.claimRef->uid.empty()) {
        return util::invalidArgument("ClaimRef got reset for pv " +
                                     util::quoteGo(pv->metadata.name));
      }
      if (!claimFullyBound(*pvc)) return false;
    }
    for (const api::PersistentVolumeClaimPtr& claim : r.volumes.provisions) {
      api::PersistentVolumeClaimPtr pvc =
          objects_->getPersistentVolumeClaim(claim->metadata.namespace_, claim->metadata.name);
      if (pvc == nullptr) {
        return util::invalidArgument("failed to check provisioning pvc: persistentvolumeclaim " +
                                     util::quoteGo(claimKey(*claim)) + " not found");
      }
      if (!newerResourceVersion(pvc->metadata.resourceVersion, claim->metadata.resourceVersion)) {
        return false;
      }
      if (pvc->metadata.annotations.empty()) {
        return util::invalidArgument("selectedNode annotation reset for PVC " +
                                     util::quoteGo(pvc->metadata.name));
      }
      auto selected = pvc->metadata.annotations.find(std::string(kAnnSelectedNode));
      if (selected == pvc->metadata.annotations.end() || selected->second != r.node) {
        // The provisioner removes the annotation when it fails: the scheduler must choose again.
        return util::invalidArgument("provisioning failed for PVC " +
                                     util::quoteGo(pvc->metadata.name));
      }
      if (!pvc->spec.volumeName.empty()) {
        api::PersistentVolumePtr pv = objects_->getPersistentVolume(pvc->spec.volumeName);
        if (pv == nullptr) return false;  // the PV may not have reached the informer yet
        if (!nodeAffinityMatches(*pv, r.nodeLabels)) {
          return util::invalidArgument("pv " + util::quoteGo(pv->metadata.name) +
                                       " node affinity doesn't match node " +
                                       util::quoteGo(r.node) + ": no matching NodeSelectorTerms");
        }
      }
      if (!claimFullyBound(*pvc)) return false;
    }
    return true;
  }

  // A PV whose node affinity does not parse matches no node, as upstream's CheckNodeAffinity
  // fails on it: said once per version of the PV, not every cycle.
  void warnInvalidNodeAffinity(const api::PersistentVolume& pv) const {
    std::optional<std::string> field = invalidNodeAffinityField(pv);
    if (!field) return;
    {
      std::lock_guard lock(mu_);
      if (!warned_.insert(pv.metadata.name + "/" + pv.metadata.resourceVersion).second) return;
    }
    log::warning("PersistentVolume has a node affinity that does not parse; it matches no node",
                 {{"persistentVolume", pv.metadata.name}, {"field", *field}});
  }

  const framework::ClusterObjects* objects_;  // not owned; may be null (no claims can be found)
  framework::VolumeWriter* volumes_;          // not owned; null: nothing is written
  util::Clock& clock_;
  util::Duration bind_timeout_;
  mutable AssumeCache cache_;
  mutable std::mutex mu_;
  mutable std::set<std::string> warned_;  // "name/resourceVersion" of PVs already logged
};

}  // namespace

util::Result<framework::PluginPtr> newVolumeBinding(const VolumeBindingArgs& args,
                                                    const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<VolumeBinding>(args, handle));
}

}  // namespace berth::plugins::volumebinding
