// NodeVolumeLimits: upstream's csi_test.go rows (TestCSILimits: limits from CSINode and node
// allocatable, volumes shared with pods on the node counted once, unbound claims counted through
// their class's provisioner, missing claims, generic ephemeral volumes, in-tree volumes migrated
// to CSI) and the queueing hints, through the runtime over a real Snapshot.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/plugins/nodevolumelimits/node_volume_limits.h"
#include "pkg/plugins/registry.h"
#include "tests/support/builders.h"

namespace berth::plugins::nodevolumelimits {
namespace {

using framework::Code;
using framework::Status;
using test::MakeNode;
using test::MakePod;

constexpr std::string_view kPlugin = "NodeVolumeLimits";
constexpr const char* kEBS = "ebs.csi.aws.com";
constexpr const char* kGCE = "pd.csi.storage.gke.io";

api::Volume claimVolume(std::string claim) {
  api::Volume v;
  v.name = "v-" + claim;
  v.source = "persistentVolumeClaim";
  v.claimName = std::move(claim);
  return v;
}

api::Volume inlineVolume(std::string source, std::string disk) {
  api::Volume v;
  v.name = "v-" + disk;
  v.source = std::move(source);
  v.disk = std::move(disk);
  return v;
}

api::PodPtr pod(std::string name, std::vector<api::Volume> volumes, std::string node = "") {
  auto w = MakePod().name(name).uid(name).mutate(
      [&](api::Pod& p) { p.spec.volumes = std::move(volumes); });
  if (!node.empty()) w.node(std::move(node));
  return w.obj();
}

api::PodPtr podWithClaims(std::string name, const std::vector<std::string>& claims,
                          std::string node = "") {
  std::vector<api::Volume> volumes;
  for (const std::string& c : claims) volumes.push_back(claimVolume(c));
  return pod(std::move(name), std::move(volumes), std::move(node));
}

api::PersistentVolumeClaimPtr pvc(std::string name, std::string volume, std::string cls = "") {
  auto c = std::make_shared<api::PersistentVolumeClaim>();
  c->metadata.name = std::move(name);
  c->metadata.namespace_ = "default";
  c->spec.volumeName = std::move(volume);
  if (!cls.empty()) c->spec.storageClassName = std::move(cls);
  return c;
}

api::PersistentVolumePtr csiPV(std::string name, std::string driver, std::string handle) {
  auto v = std::make_shared<api::PersistentVolume>();
  v->metadata.name = std::move(name);
  v->spec.source = "csi";
  v->spec.csi = api::CSIPersistentVolumeSource{std::move(driver), std::move(handle), false};
  return v;
}

api::PersistentVolumePtr inTreePV(std::string name, std::string source, std::string disk,
                                  api::StringMap labels = {}) {
  auto v = std::make_shared<api::PersistentVolume>();
  v->metadata.name = std::move(name);
  v->metadata.labels = std::move(labels);
  v->spec.source = std::move(source);
  v->spec.disk = std::move(disk);
  return v;
}

api::CSINodePtr csiNode(std::string name, std::string driver, std::optional<int32_t> count,
                        std::string migrated = "") {
  auto n = std::make_shared<api::CSINode>();
  n->metadata.name = std::move(name);
  n->metadata.resourceVersion = "1";
  if (!migrated.empty()) {
    n->metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"] = std::move(migrated);
  }
  n->drivers.push_back(api::CSINodeDriver{std::move(driver), "id", {}, count});
  return n;
}

api::StorageClassPtr storageClass(std::string name, std::string provisioner) {
  auto c = std::make_shared<api::StorageClass>();
  c->metadata.name = std::move(name);
  c->provisioner = std::move(provisioner);
  c->volumeBindingMode = std::string(api::kVolumeBindingWaitForFirstConsumer);
  return c;
}

// One node "n1" with `existing` on it.
class Cycle {
 public:
  Cycle(const framework::ClusterObjects* objects, const std::vector<api::PodPtr>& existing,
        api::NodePtr node = MakeNode().name("n1").obj())
      : snapshot_(test::makeSnapshot({std::move(node)}, existing)) {
    static const framework::runtime::Registry registry = makeInTreeRegistry();
    framework::Handle handle;
    handle.objects = objects;
    auto fw = framework::runtime::Framework::create(
        registry, test::profileWith({test::plugin(kPlugin)}), handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    fw_ = std::move(*fw);
  }

  // "skip", "ok", "limit" (Unschedulable, the plugin's reason), or "<code>: <message>".
  std::string run(const api::PodPtr& p) const {
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PodInfo info(p);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    Status pre = fw_->runPreFilterPlugins(state, info, result, rejectedBy);
    if (!pre.isSuccess()) return "prefilter " + pre.message();
    if (state.filterSkipped(kPlugin)) return "skip";
    Status s = fw_->runFilterPlugins(state, info, *snapshot_.nodeInfos()[0]);
    if (s.isSuccess()) return "ok";
    if (s.code() == Code::Unschedulable && s.message() == kErrReasonMaxVolumeCountExceeded &&
        s.plugin() == kPlugin) {
      return "limit";
    }
    return std::to_string(static_cast<int>(s.code())) + ": " + s.message();
  }

  const framework::runtime::Framework& fw() const { return *fw_; }

 private:
  framework::Snapshot snapshot_;
  framework::runtime::FrameworkPtr fw_;
};

// Two EBS volumes attached on n1 (one shared by two pods), a limit of `limit` in the CSINode.
framework::ClusterObjectStore& ebsCluster(framework::ClusterObjectStore& objects,
                                          std::optional<int32_t> limit) {
  for (const char* n : {"a", "b", "c", "d"}) {
    objects.upsert(csiPV(std::string("pv-") + n, kEBS, std::string("vol-") + n));
    objects.upsert(pvc(std::string("c-") + n, std::string("pv-") + n));
  }
  objects.upsert(csiPV("pv-gce", kGCE, "disk-1"));
  objects.upsert(pvc("c-gce", "pv-gce"));
  objects.upsert(storageClass("ebs-sc", kEBS));
  objects.upsert(pvc("c-pending", "", "ebs-sc"));
  objects.upsert(pvc("c-pending-2", "", "ebs-sc"));
  objects.upsert(csiNode("n1", kEBS, limit));
  return objects;
}

std::vector<api::PodPtr> ebsPods() {
  return {podWithClaims("e1", {"c-a"}, "n1"), podWithClaims("e2", {"c-a", "c-b"}, "n1")};
}

TEST(NodeVolumeLimits, CountsDistinctVolumesPerDriverAgainstTheCSINode) {
  framework::ClusterObjectStore objects;
  Cycle cycle(&ebsCluster(objects, 3), ebsPods());
  struct Case {
    const char* name;
    std::vector<std::string> claims;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"one more volume fits the limit of 3", {"c-c"}, "ok"},
      {"two more exceed it", {"c-c", "c-d"}, "limit"},
      {"a volume already attached is not counted again", {"c-a", "c-b", "c-c"}, "ok"},
      {"another driver's volumes are not limited by this one", {"c-c", "c-gce"}, "ok"},
      {"an unbound claim counts through its class's provisioner", {"c-c", "c-pending"}, "limit"},
      {"the new pod's missing claim is unresolvable",
       {"c-none"},
       "3: looking up PVC default/c-none: persistentvolumeclaim \"c-none\" not found"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(cycle.run(podWithClaims("p", c.claims)), c.want);
  }
}

TEST(NodeVolumeLimits, LimitsComeFromTheCSINodeOrLegacyNodeAllocatable) {
  framework::ClusterObjectStore withoutCount;
  ebsCluster(withoutCount, std::nullopt);
  // A driver without allocatable.count, and no node allocatable: no limit.
  EXPECT_EQ(Cycle(&withoutCount, ebsPods()).run(podWithClaims("p", {"c-c", "c-d"})), "ok");

  // The legacy attachable-volumes-csi-<driver> node allocatable applies.
  auto legacy =
      MakeNode().name("n1").allocatable({{"attachable-volumes-csi-ebs.csi.aws.com", "2"}}).obj();
  EXPECT_EQ(Cycle(&withoutCount, ebsPods(), legacy).run(podWithClaims("p", {"c-c"})), "limit");

  // The CSINode's count overrides the node's.
  framework::ClusterObjectStore withCount;
  ebsCluster(withCount, 4);
  EXPECT_EQ(Cycle(&withCount, ebsPods(), legacy).run(podWithClaims("p", {"c-c", "c-d"})), "ok");

  // No CSINode at all: the node allocatable alone.
  framework::ClusterObjectStore noCSINode;
  noCSINode.upsert(csiPV("pv-c", kEBS, "vol-c"));
  noCSINode.upsert(pvc("c-c", "pv-c"));
  EXPECT_EQ(Cycle(&noCSINode, {}).run(podWithClaims("p", {"c-c"})), "ok");
  auto zero =
      MakeNode().name("n1").allocatable({{"attachable-volumes-csi-ebs.csi.aws.com", "0"}}).obj();
  EXPECT_EQ(Cycle(&noCSINode, {}, zero).run(podWithClaims("p", {"c-c"})), "limit");
}

// Upstream's GetCSIAttachLimitKey: a key that would reach 63 characters is the prefix, the driver
// name's first 23 characters and 16 hex digits of its SHA-1 (the expected keys computed apart).
TEST(NodeVolumeLimits, LongDriverNamesAreKeyedByTheirHashAsUpstream) {
  struct Case {
    std::string driver;
    std::string key;
  };
  const Case cases[] = {
      {std::string(39, 'x'), "attachable-volumes-csi-" + std::string(39, 'x')},
      {std::string(40, 'y'), "attachable-volumes-csi-yyyyyyyyyyyyyyyyyyyyyyy8429abbec4881ddb"},
      {"block.csi.storage.vendor-with-a-long-name.example.com",
       "attachable-volumes-csi-block.csi.storage.vendoef8d6d36c1724c7d"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.driver);
    framework::ClusterObjectStore objects;
    objects.upsert(csiPV("pv-a", c.driver, "vol-a"));
    objects.upsert(pvc("c-a", "pv-a"));
    objects.upsert(csiPV("pv-b", c.driver, "vol-b"));
    objects.upsert(pvc("c-b", "pv-b"));
    auto node = MakeNode().name("n1").allocatable({{c.key, "1"}}).obj();
    const std::vector<api::PodPtr> existing = {podWithClaims("e1", {"c-a"}, "n1")};
    EXPECT_EQ(Cycle(&objects, existing, node).run(podWithClaims("p", {"c-b"})), "limit");
    EXPECT_EQ(Cycle(&objects, existing, node).run(podWithClaims("p", {"c-a"})), "ok");
    // The CSINode's count goes under the same key, and overrides the node's.
    objects.upsert(csiNode("n1", c.driver, 2));
    EXPECT_EQ(Cycle(&objects, existing, node).run(podWithClaims("p", {"c-b"})), "ok");
  }
}

// Upstream takes the count as it is: a negative one admits no new volume of the driver (and the
// CSINode is logged once per version, not per cycle).
TEST(NodeVolumeLimits, NegativeCountAdmitsNoNewVolumeAndDoesNotCrash) {
  framework::ClusterObjectStore objects;
  Cycle cycle(&ebsCluster(objects, -1), ebsPods());
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-c"})), "limit");
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-c"})), "limit");
  // Volumes of other drivers still fit.
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-gce"})), "ok");
}

TEST(NodeVolumeLimits, PodsOnTheNodeWithMissingClaimsAreNotCounted) {
  framework::ClusterObjectStore objects;
  ebsCluster(objects, 2);
  std::vector<api::PodPtr> pods = ebsPods();
  pods.push_back(podWithClaims("ghost", {"c-gone"}, "n1"));
  EXPECT_EQ(Cycle(&objects, pods).run(podWithClaims("p", {"c-a"})), "ok");
  EXPECT_EQ(Cycle(&objects, pods).run(podWithClaims("p", {"c-c"})), "limit");
}

TEST(NodeVolumeLimits, GenericEphemeralVolumesCountWhenThePodOwnsTheirClaim) {
  framework::ClusterObjectStore objects;
  ebsCluster(objects, 2);
  auto owned = std::make_shared<api::PersistentVolumeClaim>(*pvc("p-scratch", "", "ebs-sc"));
  owned->metadata.ownerReferences.push_back({"v1", "Pod", "p", "p", true});
  objects.upsert(api::PersistentVolumeClaimPtr(owned));
  api::Volume scratch;
  scratch.name = "scratch";
  scratch.source = "ephemeral";
  Cycle cycle(&objects, ebsPods());
  EXPECT_EQ(cycle.run(pod("p", {scratch})), "limit");

  auto foreign = std::make_shared<api::PersistentVolumeClaim>(*owned);
  foreign->metadata.ownerReferences[0].uid = "someone-else";
  framework::ClusterObjectStore other;
  ebsCluster(other, 2);
  other.upsert(api::PersistentVolumeClaimPtr(foreign));
  EXPECT_EQ(Cycle(&other, ebsPods()).run(pod("p", {scratch})),
            "1: running \"NodeVolumeLimits\" filter plugin: PVC default/p-scratch was not created "
            "for pod default/p (pod is not owner)");
}

TEST(NodeVolumeLimits, InTreeVolumesCountWhereTheirPluginIsMigrated) {
  framework::ClusterObjectStore objects;
  objects.upsert(inTreePV("pv-gce-a", "gcePersistentDisk", "disk-a",
                          {{"failure-domain.beta.kubernetes.io/zone", "us-central1-a"}}));
  objects.upsert(pvc("c-gce-a", "pv-gce-a"));
  objects.upsert(inTreePV("pv-ebs", "awsElasticBlockStore", "aws://us-east-1a/vol-1"));
  objects.upsert(pvc("c-ebs", "pv-ebs"));
  objects.upsert(inTreePV("pv-azure", "azureDisk", ""));
  objects.upsert(pvc("c-azure", "pv-azure"));
  objects.upsert(storageClass("gce-intree", "kubernetes.io/gce-pd"));
  objects.upsert(pvc("c-gce-pending", "", "gce-intree"));
  // A limit of one PD volume; the GCE plugin migrated on n1.
  auto node = std::make_shared<api::CSINode>(
      *csiNode("n1", kGCE, 1, "kubernetes.io/gce-pd,kubernetes.io/aws-ebs"));
  node->drivers.push_back(api::CSINodeDriver{kEBS, "id", {}, 1});
  node->drivers.push_back(api::CSINodeDriver{"disk.csi.azure.com", "id", {}, 0});
  objects.upsert(api::CSINodePtr(node));

  const api::PodPtr inlineUser = pod("i", {inlineVolume("gcePersistentDisk", "disk-inline")}, "n1");
  Cycle cycle(&objects, {inlineUser});
  // The inline disk on the node uses the one PD slot.
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-gce-a"})), "limit");
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-gce-pending"})), "limit");
  // The same inline disk is attached already (same translated handle).
  EXPECT_EQ(cycle.run(pod("p", {inlineVolume("gcePersistentDisk", "disk-inline")})), "ok");
  // EBS: aws://<zone>/<id> is vol-1, within its own limit of one.
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-ebs"})), "ok");
  EXPECT_EQ(cycle.run(pod("p", {inlineVolume("awsElasticBlockStore", "vol-2")})), "ok");
  // azureDisk is not migrated on n1 (not in the annotation): not counted against its 0.
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-azure"})), "ok");

  // Without the annotation nothing in-tree is counted.
  framework::ClusterObjectStore plain;
  plain.upsert(inTreePV("pv-gce-a", "gcePersistentDisk", "disk-a"));
  plain.upsert(pvc("c-gce-a", "pv-gce-a"));
  plain.upsert(csiNode("n1", kGCE, 0));
  EXPECT_EQ(Cycle(&plain, {}).run(podWithClaims("p", {"c-gce-a"})), "ok");
}

TEST(NodeVolumeLimits, MigratedKindsWithoutTranslationCountOncePerPV) {
  framework::ClusterObjectStore objects;
  objects.upsert(inTreePV("pv-azure-1", "azureDisk", ""));
  objects.upsert(inTreePV("pv-azure-2", "azureDisk", ""));
  objects.upsert(pvc("c-1", "pv-azure-1"));
  objects.upsert(pvc("c-2", "pv-azure-2"));
  objects.upsert(csiNode("n1", "disk.csi.azure.com", 1, "kubernetes.io/azure-disk"));
  Cycle cycle(&objects, {podWithClaims("e", {"c-1"}, "n1")});
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-1"})), "ok");
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c-2"})), "limit");
}

TEST(NodeVolumeLimits, PreFilterSkipsPodsWithoutAttachableVolumes) {
  Cycle cycle(nullptr, {});
  api::Volume config;
  config.name = "cfg";
  config.source = "configMap";
  api::Volume csi;
  csi.name = "inline-csi";
  csi.source = "csi";
  csi.csiDriver = kEBS;
  EXPECT_EQ(cycle.run(pod("p", {})), "skip");
  EXPECT_EQ(cycle.run(pod("p", {config, csi})), "skip");
  EXPECT_EQ(cycle.run(pod("p", {inlineVolume("gcePersistentDisk", "d")})), "ok");
  // Without cluster objects a claim cannot be found.
  EXPECT_EQ(cycle.run(podWithClaims("p", {"c"})),
            "3: looking up PVC default/c: persistentvolumeclaim \"c\" not found");
}

TEST(NodeVolumeLimits, QueueingHintsAsUpstream) {
  Cycle cycle(nullptr, {});
  const auto& regs = cycle.fw().pluginEvents().at(std::string(kPlugin));
  auto queues = [&regs](const framework::ClusterEvent& e, const api::PodPtr& p,
                        const framework::EventObjects& objects) {
    for (const auto& r : regs) {
      if (r.event.matches(e)) return r.hint(e, *p, objects) == framework::QueueingHint::Queue;
    }
    return false;
  };
  namespace events = framework::events;
  const api::PodPtr pending = podWithClaims("p", {"data"});
  const api::PodPtr withClaim = podWithClaims("e", {"x"}, "n1");
  const api::PodPtr withDisk = pod("d", {inlineVolume("awsElasticBlockStore", "vol-1")}, "n1");
  api::Volume config;
  config.name = "cfg";
  config.source = "configMap";
  const api::PodPtr withConfig = pod("c", {config}, "n1");
  const api::PodPtr noVolumes = pod("n", {}, "n1");
  const auto data = pvc("data", "");
  const auto other = pvc("other", "");
  EXPECT_TRUE(queues(events::kAssignedPodDelete, pending, {.oldPod = withClaim.get()}));
  EXPECT_TRUE(queues(events::kAssignedPodDelete, pending, {.oldPod = withDisk.get()}));
  EXPECT_FALSE(queues(events::kAssignedPodDelete, pending, {.oldPod = withConfig.get()}));
  EXPECT_FALSE(queues(events::kAssignedPodDelete, pending, {.oldPod = noVolumes.get()}));
  EXPECT_TRUE(queues(events::kPersistentVolumeClaimAdd, pending, {.newClaim = data.get()}));
  EXPECT_FALSE(queues(events::kPersistentVolumeClaimAdd, pending, {.newClaim = other.get()}));
  EXPECT_TRUE(queues(events::kCSINodeAdd, pending, {}));
  EXPECT_FALSE(queues(events::kCSINodeUpdate, pending, {}));
  EXPECT_FALSE(queues(events::kNodeAdd, pending, {}));
}

}  // namespace
}  // namespace berth::plugins::nodevolumelimits
