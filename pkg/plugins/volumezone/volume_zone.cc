#include "pkg/plugins/volumezone/volume_zone.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/log/log.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::volumezone {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kPreFilterStateKey = framework::makeStateKey("PreFilterVolumeZone");

constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";
constexpr std::array<std::string_view, 4> kTopologyLabels = {kBetaZone, kBetaRegion, kZone,
                                                             kRegion};
// A volume in several zones lists them joined by this (upstream's LabelMultiZoneDelimiter).
constexpr std::string_view kMultiZoneDelimiter = "__";
// The annotation that named a claim's class before spec.storageClassName existed; it still wins.
constexpr std::string_view kBetaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class";

// One topology label of a bound PV: the node's value for `key` must be one of `values`.
struct PVTopology {
  std::string pvName;
  std::string key;
  std::set<std::string> values;
};

struct PreFilterState final : framework::StateData {
  std::vector<PVTopology> topologies;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

std::string_view toGALabel(std::string_view key) {
  if (key == kBetaZone) return kZone;
  if (key == kBetaRegion) return kRegion;
  return key;
}

// The zones of a label value; nullopt when one of them is empty (upstream's LabelZonesToSet).
std::optional<std::set<std::string>> zonesOf(std::string_view value) {
  std::set<std::string> zones;
  size_t start = 0;
  while (true) {
    const size_t end = value.find(kMultiZoneDelimiter, start);
    std::string_view part =
        value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) return std::nullopt;
    zones.emplace(part);
    if (end == std::string_view::npos) return zones;
    start = end + kMultiZoneDelimiter.size();
  }
}

// The claim's class: the beta annotation, else spec.storageClassName ("" for none).
std::string claimClass(const api::PersistentVolumeClaim& claim) {
  auto it = claim.metadata.annotations.find(std::string(kBetaStorageClassAnnotation));
  if (it != claim.metadata.annotations.end()) return it->second;
  return claim.spec.storageClassName.value_or("");
}

Status notFound(std::string_view resource, const std::string& name) {
  return Status(Code::UnschedulableAndUnresolvable,
                std::string(resource) + " \"" + name + "\" not found");
}

class VolumeZone final : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::EnqueueExtensions {
 public:
  explicit VolumeZone(const framework::ClusterObjects* objects) : objects_(objects) {}

  std::string_view name() const override { return names::kVolumeZone; }

  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::EventResource;
    using framework::QueueingHint;
    namespace events = framework::events;
    // A claim of the pod created, or bound (volumeName set).
    auto referenced = [](const api::Pod& pod, const api::PersistentVolumeClaim*,
                         const api::PersistentVolumeClaim* claim) {
      if (claim == nullptr) return QueueingHint::Queue;
      if (claim->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::Skip;
      for (const api::Volume& v : pod.spec.volumes) {
        if (v.source == "persistentVolumeClaim" && v.claimName == claim->metadata.name)
          return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    };
    framework::ClusterEventWithHint claims{framework::ClusterEvent{
        EventResource::PersistentVolumeClaim, ActionType::Add | ActionType::Update}};
    claims.claimHint = referenced;
    // A new WaitForFirstConsumer class (volumeBindingMode is immutable: updates cannot help); a
    // node added or relabelled; a PV created or relabelled.
    return {
        framework::ClusterEventWithHint{events::kStorageClassAdd},
        framework::ClusterEventWithHint{framework::ClusterEvent{
            EventResource::Node,
            ActionType::Add | ActionType::UpdateNodeLabel | ActionType::UpdateNodeTaint}},
        std::move(claims),
        framework::ClusterEventWithHint{framework::ClusterEvent{
            EventResource::PersistentVolume, ActionType::Add | ActionType::Update}},
    };
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                   framework::PreFilterResult&) const override {
    auto s = std::make_unique<PreFilterState>();
    Status status = topologiesOf(*pod, s->topologies);
    if (!status.isSuccess()) return status;
    if (s->topologies.empty()) return Status::skip();
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    if (pod->spec.volumes.empty()) return Status::success();
    if (node.node() == nullptr) return Status::error("node not found");
    std::vector<PVTopology> computed;
    const std::vector<PVTopology>* topologies = &computed;
    if (const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey)) {
      topologies = &s->topologies;
    } else {
      // Upstream recomputes when PreFilter did not run (a Filter-only profile).
      Status status = topologiesOf(*pod, computed);
      if (!status.isSuccess()) return status;
    }
    const api::StringMap& labels = node.node()->metadata.labels;
    const bool zoned =
        std::any_of(kTopologyLabels.begin(), kTopologyLabels.end(),
                    [&](std::string_view k) { return labels.count(std::string(k)); });
    // A node without zone or region labels (a single-zone cluster) takes any volume.
    if (!zoned) return Status::success();
    for (const PVTopology& t : *topologies) {
      auto it = labels.find(t.key);
      if (it == labels.end()) it = labels.find(std::string(toGALabel(t.key)));
      if (it == labels.end() || t.values.count(it->second) == 0) {
        return Status(Code::UnschedulableAndUnresolvable, kErrReasonConflict);
      }
    }
    return Status::success();
  }

 private:
  // The zone and region labels of the PVs bound to the pod's claims.
  Status topologiesOf(const api::Pod& pod, std::vector<PVTopology>& out) const {
    const std::string& ns = pod.metadata.namespace_;
    for (const api::Volume& v : pod.spec.volumes) {
      if (v.source != "persistentVolumeClaim") continue;
      if (v.claimName.empty()) {
        return Status(Code::UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name");
      }
      api::PersistentVolumeClaimPtr claim =
          objects_ != nullptr ? objects_->getPersistentVolumeClaim(ns, v.claimName) : nullptr;
      if (claim == nullptr) return notFound("persistentvolumeclaim", v.claimName);
      const std::string& pvName = claim->spec.volumeName;
      if (pvName.empty()) {
        const std::string className = claimClass(*claim);
        if (className.empty()) {
          return Status(Code::UnschedulableAndUnresolvable,
                        "PersistentVolumeClaim had no pv name and storageClass name");
        }
        api::StorageClassPtr cls = objects_->getStorageClass(className);
        if (cls == nullptr) return notFound("storageclass.storage.k8s.io", className);
        if (!cls->volumeBindingMode) {
          return Status(Code::UnschedulableAndUnresolvable,
                        "VolumeBindingMode not set for StorageClass \"" + className + "\"");
        }
        // Not bound yet: VolumeBinding chooses its PV or provisions it for the node.
        if (*cls->volumeBindingMode == api::kVolumeBindingWaitForFirstConsumer) continue;
        return Status(Code::UnschedulableAndUnresolvable, "PersistentVolume had no name");
      }
      api::PersistentVolumePtr pv = objects_->getPersistentVolume(pvName);
      if (pv == nullptr) return notFound("persistentvolume", pvName);
      for (std::string_view key : kTopologyLabels) {
        auto label = pv->metadata.labels.find(std::string(key));
        if (label == pv->metadata.labels.end()) continue;
        std::optional<std::set<std::string>> zones = zonesOf(label->second);
        if (!zones) {
          // Upstream ignores the label; say so once per version of the PV, not every cycle.
          logOnce(*pv, key, label->second);
          continue;
        }
        out.push_back(PVTopology{pv->metadata.name, std::string(key), std::move(*zones)});
      }
    }
    return Status::success();
  }

  void logOnce(const api::PersistentVolume& pv, std::string_view key,
               const std::string& value) const {
    {
      std::lock_guard lock(mu_);
      if (!logged_.insert(pv.metadata.name + "/" + pv.metadata.resourceVersion).second) return;
    }
    log::warning("Failed to parse label, ignoring the label",
                 {{"persistentVolume", pv.metadata.name},
                  {"label", std::string(key) + ":" + value},
                  {"err", "\"" + std::string(kMultiZoneDelimiter) + "\" separated list (\"" +
                              value + "\") must not contain an empty string"}});
  }

  const framework::ClusterObjects* objects_;
  mutable std::mutex mu_;
  mutable std::set<std::string> logged_;  // "name/resourceVersion" of PVs already logged
};

}  // namespace

util::Result<framework::PluginPtr> newVolumeZone(const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<VolumeZone>(handle.objects));
}

}  // namespace berth::plugins::volumezone
