#include "pkg/plugins/nodevolumelimits/node_volume_limits.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/log/log.h"
#include "pkg/plugins/names.h"
#include "pkg/util/random.h"
#include "pkg/util/sha1.h"

namespace berth::plugins::nodevolumelimits {
namespace {

using framework::Code;
using framework::Status;

// CSINode annotation: the in-tree plugins whose volumes the node's CSI drivers handle.
constexpr std::string_view kMigratedPluginsAnnotation =
    "storage.alpha.kubernetes.io/migrated-plugins";
// Where kubelets before v1.17 published a CSI driver's limit on the Node, and every in-tree
// plugin's: a node allocatable named with this prefix.
constexpr std::string_view kAttachableVolumesPrefix = "attachable-volumes-";
constexpr std::string_view kCSIAttachLimitPrefix = "attachable-volumes-csi-";
constexpr std::string_view kClassAnnotation = "volume.beta.kubernetes.io/storage-class";
constexpr std::string_view kGCEZoneLabel = "failure-domain.beta.kubernetes.io/zone";

// An in-tree volume plugin that CSI migration moves to a driver (the CSI translation library's
// names). `migrates` is false where v1.35 never counts it (its migration check is off for it).
struct InTreePlugin {
  std::string_view source;  // the pod volume / PV source field
  std::string_view name;    // the in-tree plugin (and provisioner) name
  std::string_view driver;  // its CSI driver
  bool migrates;
};
constexpr InTreePlugin kInTreePlugins[] = {
    {"gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", true},
    {"awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com", true},
    {"azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com", true},
    {"cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org", true},
    {"portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com", true},
    {"azureFile", "kubernetes.io/azure-file", "file.csi.azure.com", false},
    {"vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", false},
    {"rbd", "kubernetes.io/rbd", "rbd.csi.ceph.com", false},
};

const InTreePlugin* inTreeBySource(std::string_view source) {
  for (const InTreePlugin& p : kInTreePlugins) {
    if (p.source == source) return &p;
  }
  return nullptr;
}

const InTreePlugin* inTreeByName(std::string_view name) {
  for (const InTreePlugin& p : kInTreePlugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// Whether the CSINode says the plugin's volumes go through its CSI driver on that node.
bool migrationOn(const api::CSINode* csiNode, const InTreePlugin& plugin) {
  if (csiNode == nullptr || !plugin.migrates) return false;
  auto it = csiNode->metadata.annotations.find(std::string(kMigratedPluginsAnnotation));
  if (it == csiNode->metadata.annotations.end()) return false;
  std::string_view list = it->second;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == plugin.name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// The handle upstream's translation gives an in-tree disk; nullopt where it fails. Inline GCE
// disks have no zone; a PV's comes from its beta zone label, a multi-zone label giving the region.
std::optional<std::string> translatedHandle(std::string_view source, const std::string& disk,
                                            const api::StringMap* pvLabels) {
  if (source == "awsElasticBlockStore") {
    // aws://<zone>/<volume id> or a bare volume id.
    constexpr std::string_view kScheme = "aws://";
    if (disk.rfind(kScheme, 0) != 0) return disk;
    std::string_view rest = std::string_view(disk).substr(kScheme.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(slash + 1);
    while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    if (rest.empty()) return std::nullopt;
    return std::string(rest);
  }
  std::string where = "UNSPECIFIED";
  if (pvLabels != nullptr) {
    auto it = pvLabels->find(std::string(kGCEZoneLabel));
    const std::string zonesLabel = it == pvLabels->end() ? "" : it->second;
    std::vector<std::string> zones;
    for (size_t start = 0;;) {
      const size_t end = zonesLabel.find("__", start);
      zones.push_back(zonesLabel.substr(start, end == std::string::npos ? end : end - start));
      if (end == std::string::npos) break;
      start = end + 2;
    }
    if (zones.size() == 1 && !zones[0].empty()) {
      where = zones[0];
    } else if (zones.size() > 1) {
      // A regional disk: every zone in one region (<region>-<zone letter>).
      std::string region;
      for (const std::string& z : zones) {
        const size_t dash = z.rfind('-');
        if (dash == std::string::npos || dash == 0) return std::nullopt;
        const std::string r = z.substr(0, dash);
        if (!region.empty() && r != region) return std::nullopt;
        region = r;
      }
      where = region;
    }
  }
  return "projects/UNSPECIFIED/zones/" + where + "/disks/" + disk;
}

// A claim's class: the beta annotation, else spec.storageClassName ("" for none).
std::string claimClassOf(const api::PersistentVolumeClaim& claim) {
  auto it = claim.metadata.annotations.find(std::string(kClassAnnotation));
  if (it != claim.metadata.annotations.end()) return it->second;
  return claim.spec.storageClassName.value_or("");
}

// A resource name's length limit, which a limit key must stay under.
constexpr size_t kResourceNameLengthLimit = 63;

// The node allocatable name of a CSI driver's limit (upstream's GetCSIAttachLimitKey): the prefix
// and the driver's name, or where that would reach 63 characters, the prefix, the name's first 23
// characters and the first 16 hex digits of the name's SHA-1.
std::string limitKey(std::string_view driver) {
  std::string key(kCSIAttachLimitPrefix);
  if (key.size() + driver.size() < kResourceNameLengthLimit) return key.append(driver);
  return key.append(driver.substr(0, 23)).append(util::sha1Hex(driver).substr(0, 16));
}

// Volume "<driver>/<handle>" -> the limit key it counts against.
using VolumeSet = std::map<std::string, std::string>;

class NodeVolumeLimits final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::EnqueueExtensions {
 public:
  explicit NodeVolumeLimits(const framework::ClusterObjects* objects)
      : objects_(objects), random_prefix_(randomPrefix(util::defaultRandom())) {}

  std::string_view name() const override { return names::kNodeVolumeLimits; }

  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::EventResource;
    using framework::QueueingHint;
    framework::ClusterEventWithHint podDeleted{
        framework::ClusterEvent{EventResource::AssignedPod, ActionType::Delete}};
    // A pod that held attachable volumes left its node.
    podDeleted.podHint = [](const api::Pod&, const api::Pod* deleted, const api::Pod*) {
      if (deleted == nullptr) return QueueingHint::Queue;
      if (deleted->spec.nodeName.empty()) return QueueingHint::Skip;
      for (const api::Volume& v : deleted->spec.volumes) {
        if (mayCount(v)) return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    };
    framework::ClusterEventWithHint claimAdded{framework::events::kPersistentVolumeClaimAdd};
    // One of the pod's claims created.
    claimAdded.claimHint = [](const api::Pod& pod, const api::PersistentVolumeClaim*,
                              const api::PersistentVolumeClaim* added) {
      if (added == nullptr) return QueueingHint::Queue;
      if (added->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::Skip;
      for (const api::Volume& v : pod.spec.volumes) {
        if (claimNameOf(pod, v) == added->metadata.name) return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    };
    // A new CSINode may carry limits, or drivers, that let the pod in.
    return {framework::ClusterEventWithHint{framework::events::kCSINodeAdd}, std::move(podDeleted),
            std::move(claimAdded)};
  }

  Status preFilter(framework::CycleState&, const framework::PodInfo& pod,
                   framework::PreFilterResult&) const override {
    const auto& volumes = pod->spec.volumes;
    return std::any_of(volumes.begin(), volumes.end(), mayCount) ? Status::success()
                                                                 : Status::skip();
  }

  Status filter(const framework::CycleState&, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    if (pod->spec.volumes.empty()) return Status::success();
    if (node.node() == nullptr) return Status::error("node not found");
    api::CSINodePtr csiNode = objects_ != nullptr ? objects_->getCSINode(node.name()) : nullptr;

    VolumeSet added;
    if (Status s = attachable(*pod, csiNode.get(), /*newPod=*/true, added); !s.isSuccess()) {
      return s;
    }
    if (added.empty()) return Status::success();

    const std::map<std::string, int64_t> limits = limitsOf(*node.node(), csiNode.get());
    if (limits.empty()) return Status::success();

    VolumeSet attached;
    for (const auto& existing : node.pods()) {
      if (Status s = attachable(*existing->pod, csiNode.get(), /*newPod=*/false, attached);
          !s.isSuccess()) {
        return s;
      }
    }
    // A volume another pod of the node already uses is attached once.
    std::map<std::string, int64_t> attachedCount;
    for (const auto& [volume, key] : attached) {
      added.erase(volume);
      ++attachedCount[key];
    }
    std::map<std::string, int64_t> addedCount;
    for (const auto& [volume, key] : added) ++addedCount[key];
    for (const auto& [key, count] : addedCount) {
      auto limit = limits.find(key);
      if (limit == limits.end()) continue;
      if (attachedCount[key] + count > limit->second) {
        return Status(Code::Unschedulable, kErrReasonMaxVolumeCountExceeded);
      }
    }
    return Status::success();
  }

 private:
  // Whether a volume of this kind can count against a limit (upstream's PreFilter test: a claim,
  // a generic ephemeral volume or an in-tree source CSI migration handles).
  static bool mayCount(const api::Volume& v) {
    return v.source == "persistentVolumeClaim" || v.source == "ephemeral" ||
           inTreeBySource(v.source) != nullptr;
  }

  // The claim a volume uses ("" for volumes without one): an ephemeral volume's is
  // "<pod>-<volume>".
  static std::string claimNameOf(const api::Pod& pod, const api::Volume& v) {
    if (v.source == "persistentVolumeClaim") return v.claimName;
    if (v.source == "ephemeral") return pod.metadata.name + "-" + v.name;
    return "";
  }

  static std::string randomPrefix(util::Random& random) {
    constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
    std::string out;
    for (int i = 0; i < 32; ++i) {
      const auto at = static_cast<size_t>(random.uniform() * static_cast<double>(kAlphabet.size()));
      out.push_back(kAlphabet[std::min(at, kAlphabet.size() - 1)]);
    }
    return out;
  }

  // Adds the pod's attachable volumes to `out`. For the pod being scheduled a missing claim is
  // an error (it cannot run without it); for pods already on the node it is not counted.
  Status attachable(const api::Pod& pod, const api::CSINode* csiNode, bool newPod,
                    VolumeSet& out) const {
    const std::string& ns = pod.metadata.namespace_;
    for (const api::Volume& v : pod.spec.volumes) {
      if (v.source != "persistentVolumeClaim" && v.source != "ephemeral") {
        inlineVolume(v, csiNode, out);
        continue;
      }
      const std::string claimName = claimNameOf(pod, v);
      if (claimName.empty()) return Status::error("PersistentVolumeClaim had no name");
      api::PersistentVolumeClaimPtr claim =
          objects_ != nullptr ? objects_->getPersistentVolumeClaim(ns, claimName) : nullptr;
      if (claim == nullptr) {
        if (!newPod) continue;
        return Status(Code::UnschedulableAndUnresolvable, "looking up PVC " + ns + "/" + claimName +
                                                              ": persistentvolumeclaim \"" +
                                                              claimName + "\" not found");
      }
      if (v.source == "ephemeral" && !ownedBy(*claim, pod)) {
        return Status::error("PVC " + ns + "/" + claimName + " was not created for pod " + ns +
                             "/" + pod.metadata.name + " (pod is not owner)");
      }
      auto [driver, handle] = driverAndHandle(*claim, csiNode);
      if (driver.empty() || handle.empty()) continue;
      out[driver + "/" + handle] = limitKey(driver);
    }
    return Status::success();
  }

  static bool ownedBy(const api::PersistentVolumeClaim& claim, const api::Pod& pod) {
    return std::any_of(
        claim.metadata.ownerReferences.begin(), claim.metadata.ownerReferences.end(),
        [&](const api::OwnerReference& o) { return o.controller && o.uid == pod.metadata.uid; });
  }

  static void inlineVolume(const api::Volume& v, const api::CSINode* csiNode, VolumeSet& out) {
    const InTreePlugin* plugin = inTreeBySource(v.source);
    if (plugin == nullptr || !migrationOn(csiNode, *plugin)) return;
    // The refusal gate keeps pods with the kinds berth does not translate inline out of
    // scheduling; pods placed by others are not counted for them.
    if (v.source != "gcePersistentDisk" && v.source != "awsElasticBlockStore") return;
    std::optional<std::string> handle = translatedHandle(v.source, v.disk, nullptr);
    if (!handle || handle->empty()) return;
    out[std::string(plugin->driver) + "/" + *handle] = limitKey(plugin->driver);
  }

  // The CSI driver and volume handle of a claim: its bound PV's (translated where the in-tree
  // plugin is migrated on the node), else its class's provisioner with a handle unique to the
  // claim (it is not provisioned yet; two pods sharing it are counted twice, as upstream).
  std::pair<std::string, std::string> driverAndHandle(const api::PersistentVolumeClaim& claim,
                                                      const api::CSINode* csiNode) const {
    const std::string& pvName = claim.spec.volumeName;
    api::PersistentVolumePtr pv = pvName.empty() ? nullptr : objects_->getPersistentVolume(pvName);
    if (pv == nullptr) return fromClass(claim, csiNode);
    if (pv->spec.csi) return {pv->spec.csi->driver, pv->spec.csi->volumeHandle};
    const InTreePlugin* plugin = inTreeBySource(pv->spec.source);
    if (plugin == nullptr || !migrationOn(csiNode, *plugin)) return {};
    if (pv->spec.source == "gcePersistentDisk" || pv->spec.source == "awsElasticBlockStore") {
      std::optional<std::string> handle =
          translatedHandle(pv->spec.source, pv->spec.disk, &pv->metadata.labels);
      if (!handle) return {};
      return {std::string(plugin->driver), *handle};
    }
    // azureDisk, cinder, portworxVolume: berth does not decode their disk identity; one PV is
    // one disk.
    return {std::string(plugin->driver), "pv/" + pv->metadata.name};
  }

  std::pair<std::string, std::string> fromClass(const api::PersistentVolumeClaim& claim,
                                                const api::CSINode* csiNode) const {
    const std::string className = claimClassOf(claim);
    // Without a class the claim binds immediately, before scheduling: nothing to count.
    if (className.empty()) return {};
    api::StorageClassPtr cls = objects_->getStorageClass(className);
    if (cls == nullptr) return {};
    std::string handle =
        random_prefix_ + "-" + claim.metadata.namespace_ + "/" + claim.metadata.name;
    if (const InTreePlugin* plugin = inTreeByName(cls->provisioner)) {
      if (!migrationOn(csiNode, *plugin)) return {};
      return {std::string(plugin->driver), std::move(handle)};
    }
    return {cls->provisioner, std::move(handle)};
  }

  // Legacy attachable-volumes-* node allocatables, overridden by the CSINode's driver counts.
  std::map<std::string, int64_t> limitsOf(const api::Node& node,
                                          const api::CSINode* csiNode) const {
    std::map<std::string, int64_t> limits;
    for (const auto& [name, quantity] : node.status.allocatable) {
      if (name.rfind(kAttachableVolumesPrefix, 0) == 0) limits[name] = quantity.value();
    }
    if (csiNode == nullptr) return limits;
    for (const api::CSINodeDriver& d : csiNode->drivers) {
      if (!d.allocatableCount) continue;
      // Upstream takes a negative count as it is: the driver then fits no new volume.
      if (*d.allocatableCount < 0) logNegativeOnce(*csiNode, d);
      limits[limitKey(d.name)] = *d.allocatableCount;
    }
    return limits;
  }

  void logNegativeOnce(const api::CSINode& csiNode, const api::CSINodeDriver& d) const {
    {
      std::lock_guard lock(mu_);
      const std::string key =
          csiNode.metadata.name + "/" + csiNode.metadata.resourceVersion + "/" + d.name;
      if (!logged_.insert(key).second) return;
    }
    log::warning(
        "CSINode has a negative allocatable count; the driver fits no new volume there",
        {{"csiNode", csiNode.metadata.name}, {"driver", d.name}, {"count", *d.allocatableCount}});
  }

  const framework::ClusterObjects* objects_;
  // Upstream's random prefix for the handles of claims not provisioned yet, so that they never
  // equal a real volume's.
  const std::string random_prefix_;
  mutable std::mutex mu_;
  mutable std::set<std::string> logged_;  // CSINode versions and drivers already logged
};

}  // namespace

util::Result<framework::PluginPtr> newNodeVolumeLimits(const framework::Handle& handle) {
  // Not handle.random: the prefix must not take draws a fixed source keeps for preemption.
  return framework::PluginPtr(std::make_unique<NodeVolumeLimits>(handle.objects));
}

}  // namespace berth::plugins::nodevolumelimits
