#include "pkg/framework/runtime/field_gate.h"

#include <utility>

#include "pkg/framework/runtime/framework.h"

namespace berth::framework::runtime {
namespace {

// Upstream's default plugins that act on pod fields berth may lack. The volume sources are the
// ones those plugins read: PVCs and generic ephemeral volumes (VolumeBinding, and VolumeZone and
// NodeVolumeLimits through the PVC), in-tree disks that cannot be shared between nodes' pods
// (VolumeRestrictions), and in-tree sources that count against a node's attach limit after CSI
// migration (NodeVolumeLimits). NodeVolumeLimits translates inline gcePersistentDisk and
// awsElasticBlockStore volumes to their CSI drivers' volumes, not the other kinds upstream
// migrates: those rows need its "InTreeMigration" feature, which no registry declares yet.
// (Upstream never counts azureFile and vsphereVolume volumes: their rows end with the plugin.)
const std::vector<GatedField> kRows = {
    {"spec.volumes[*].persistentVolumeClaim", "VolumeBinding", ""},
    {"spec.volumes[*].ephemeral", "VolumeBinding", ""},
    {"spec.volumes[*].gcePersistentDisk", "VolumeRestrictions", ""},
    {"spec.volumes[*].awsElasticBlockStore", "VolumeRestrictions", ""},
    {"spec.volumes[*].rbd", "VolumeRestrictions", ""},
    {"spec.volumes[*].iscsi", "VolumeRestrictions", ""},
    {"spec.volumes[*].gcePersistentDisk", "NodeVolumeLimits", ""},
    {"spec.volumes[*].awsElasticBlockStore", "NodeVolumeLimits", ""},
    {"spec.volumes[*].azureDisk", "NodeVolumeLimits", "InTreeMigration"},
    {"spec.volumes[*].azureFile", "NodeVolumeLimits", ""},
    {"spec.volumes[*].cinder", "NodeVolumeLimits", "InTreeMigration"},
    {"spec.volumes[*].vsphereVolume", "NodeVolumeLimits", ""},
    {"spec.volumes[*].portworxVolume", "NodeVolumeLimits", "InTreeMigration"},
    {"spec.affinity.podAffinity", "InterPodAffinity", ""},
    {"spec.affinity.podAntiAffinity", "InterPodAffinity", ""},
    {"spec.topologySpreadConstraints", "PodTopologySpread", ""},
    {"spec.resourceClaims", "DynamicResources", ""},
    {"spec.resources", "NodeResourcesFit", "PodLevelResources"},
};

constexpr std::string_view kVolumePrefix = "spec.volumes[*].";

bool hasTerms(const std::optional<api::PodAffinity>& a) {
  return a && (!a->requiredDuringSchedulingIgnoredDuringExecution.empty() ||
               !a->preferredDuringSchedulingIgnoredDuringExecution.empty());
}

bool hasRequests(const std::optional<api::ResourceRequirements>& r) {
  return r && (!r->requests.empty() || !r->limits.empty());
}

}  // namespace

const std::vector<GatedField>& FieldGate::allRows() { return kRows; }

FieldGate FieldGate::fromRegistry(const Registry& registry) {
  FieldGate gate;
  for (const GatedField& row : kRows) {
    const bool enforced = registry.hasPlugin(row.plugin) &&
                          (row.feature.empty() || registry.hasFeature(row.plugin, row.feature));
    if (!enforced) gate.active_.push_back(&row);
  }
  return gate;
}

std::optional<Refusal> FieldGate::check(const api::Pod& pod) const {
  if (active_.empty()) return std::nullopt;
  const api::PodSpec& spec = pod.spec;
  auto firstActive = [&](std::string_view field) -> const GatedField* {
    for (const GatedField* row : active_) {
      if (row->field == field) return row;
    }
    return nullptr;
  };
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    const std::string& source = spec.volumes[i].source;
    if (source.empty()) continue;
    for (const GatedField* row : active_) {
      const std::string_view f = row->field;
      if (f.substr(0, kVolumePrefix.size()) == kVolumePrefix &&
          f.substr(kVolumePrefix.size()) == source) {
        return Refusal{row, "spec.volumes[" + std::to_string(i) + "]." + source};
      }
    }
  }
  if (spec.affinity) {
    for (auto [terms, field] :
         {std::pair{&spec.affinity->podAffinity, std::string_view("spec.affinity.podAffinity")},
          std::pair{&spec.affinity->podAntiAffinity,
                    std::string_view("spec.affinity.podAntiAffinity")}}) {
      if (!hasTerms(*terms)) continue;
      if (const GatedField* row = firstActive(field)) return Refusal{row, std::string(field)};
    }
  }
  auto whole = [&](bool used, std::string_view field) -> std::optional<Refusal> {
    if (!used) return std::nullopt;
    const GatedField* row = firstActive(field);
    if (row == nullptr) return std::nullopt;
    return Refusal{row, std::string(field)};
  };
  if (auto r = whole(!spec.topologySpreadConstraints.empty(), "spec.topologySpreadConstraints"))
    return r;
  if (auto r = whole(!spec.resourceClaims.empty(), "spec.resourceClaims")) return r;
  return whole(hasRequests(spec.resources), "spec.resources");
}

Status FieldGate::status(const Refusal& refusal) {
  return Status(Code::UnschedulableAndUnresolvable, "berth does not implement " + refusal.path +
                                                        " (" + std::string(refusal.row->plugin) +
                                                        ")")
      .withPlugin(refusal.row->plugin);
}

}  // namespace berth::framework::runtime
