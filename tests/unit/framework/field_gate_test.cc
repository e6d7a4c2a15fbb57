// FieldGate: a pod that uses a field restricting its placement, whose upstream plugin berth lacks,
// is refused in PreFilter, naming the field; rows switch off when the registry gains the plugin.

#include "pkg/framework/runtime/field_gate.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "pkg/framework/fit_error.h"
#include "pkg/plugins/registry.h"
#include "tests/support/builders.h"

namespace berth::framework::runtime {
namespace {

using test::MakePod;

api::Volume volume(std::string name, std::string source) {
  api::Volume v;
  v.name = std::move(name);
  v.source = std::move(source);
  return v;
}

api::PodAffinityTerm term() {
  api::PodAffinityTerm t;
  t.labelSelector = api::LabelSelector{{{"app", "web"}}, {}};
  t.topologyKey = "kubernetes.io/hostname";
  return t;
}

struct Case {
  const char* name;
  std::function<void(api::Pod&)> mutate;
  std::string wantPath;    // "" when the pod is placed as usual
  std::string wantPlugin;  // the upstream plugin named
  std::string wantField;   // the row (the gauge's label)
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"a pod without restricting fields passes", [](api::Pod&) {}, "", "", ""},
      {"configMap, secret and emptyDir volumes restrict nothing",
       [](api::Pod& p) {
         p.spec.volumes = {volume("a", "configMap"), volume("b", "secret"),
                           volume("c", "emptyDir")};
       },
       "", "", ""},
      {"a persistentVolumeClaim volume is refused, by its index",
       [](api::Pod& p) {
         p.spec.volumes = {volume("cfg", "configMap"), volume("data", "persistentVolumeClaim")};
       },
       "spec.volumes[1].persistentVolumeClaim", "VolumeBinding",
       "spec.volumes[*].persistentVolumeClaim"},
      {"a generic ephemeral volume is refused",
       [](api::Pod& p) { p.spec.volumes = {volume("scratch", "ephemeral")}; },
       "spec.volumes[0].ephemeral", "VolumeBinding", "spec.volumes[*].ephemeral"},
      {"a GCE persistent disk is refused (VolumeRestrictions)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "gcePersistentDisk")}; },
       "spec.volumes[0].gcePersistentDisk", "VolumeRestrictions",
       "spec.volumes[*].gcePersistentDisk"},
      {"an AWS EBS volume is refused (VolumeRestrictions)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "awsElasticBlockStore")}; },
       "spec.volumes[0].awsElasticBlockStore", "VolumeRestrictions",
       "spec.volumes[*].awsElasticBlockStore"},
      {"an RBD volume is refused (VolumeRestrictions)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "rbd")}; }, "spec.volumes[0].rbd",
       "VolumeRestrictions", "spec.volumes[*].rbd"},
      {"an iSCSI volume is refused (VolumeRestrictions)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "iscsi")}; }, "spec.volumes[0].iscsi",
       "VolumeRestrictions", "spec.volumes[*].iscsi"},
      {"an Azure disk is refused (NodeVolumeLimits)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "azureDisk")}; },
       "spec.volumes[0].azureDisk", "NodeVolumeLimits", "spec.volumes[*].azureDisk"},
      {"an Azure file volume is refused (NodeVolumeLimits)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "azureFile")}; },
       "spec.volumes[0].azureFile", "NodeVolumeLimits", "spec.volumes[*].azureFile"},
      {"a Cinder volume is refused (NodeVolumeLimits)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "cinder")}; }, "spec.volumes[0].cinder",
       "NodeVolumeLimits", "spec.volumes[*].cinder"},
      {"a vSphere volume is refused (NodeVolumeLimits)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "vsphereVolume")}; },
       "spec.volumes[0].vsphereVolume", "NodeVolumeLimits", "spec.volumes[*].vsphereVolume"},
      {"a Portworx volume is refused (NodeVolumeLimits)",
       [](api::Pod& p) { p.spec.volumes = {volume("d", "portworxVolume")}; },
       "spec.volumes[0].portworxVolume", "NodeVolumeLimits", "spec.volumes[*].portworxVolume"},
      {"required pod affinity is refused",
       [](api::Pod& p) {
         p.spec.affinity = api::Affinity{};
         p.spec.affinity->podAffinity = api::PodAffinity{{term()}, {}};
       },
       "spec.affinity.podAffinity", "InterPodAffinity", "spec.affinity.podAffinity"},
      {"preferred pod anti-affinity is refused",
       [](api::Pod& p) {
         p.spec.affinity = api::Affinity{};
         p.spec.affinity->podAntiAffinity = api::PodAffinity{{}, {{10, term()}}};
       },
       "spec.affinity.podAntiAffinity", "InterPodAffinity", "spec.affinity.podAntiAffinity"},
      {"pod affinity without terms restricts nothing",
       [](api::Pod& p) {
         p.spec.affinity = api::Affinity{};
         p.spec.affinity->podAffinity = api::PodAffinity{};
       },
       "", "", ""},
      {"topology spread constraints are refused",
       [](api::Pod& p) {
         api::TopologySpreadConstraint c;
         c.maxSkew = 1;
         c.topologyKey = "topology.kubernetes.io/zone";
         c.whenUnsatisfiable = "DoNotSchedule";
         p.spec.topologySpreadConstraints = {c};
       },
       "spec.topologySpreadConstraints", "PodTopologySpread", "spec.topologySpreadConstraints"},
      {"resource claims are refused",
       [](api::Pod& p) { p.spec.resourceClaims = {api::PodResourceClaim{"gpu"}}; },
       "spec.resourceClaims", "DynamicResources", "spec.resourceClaims"},
      {"pod-level resources are refused",
       [](api::Pod& p) {
         p.spec.resources = api::ResourceRequirements{test::resourceList({{"cpu", "1"}}), {}};
       },
       "spec.resources", "NodeResourcesFit", "spec.resources"},
      {"the first offending field in spec order is named",
       [](api::Pod& p) {
         p.spec.resourceClaims = {api::PodResourceClaim{"gpu"}};
         p.spec.volumes = {volume("data", "persistentVolumeClaim")};
       },
       "spec.volumes[0].persistentVolumeClaim", "VolumeBinding",
       "spec.volumes[*].persistentVolumeClaim"},
  };
  return kCases;
}

// Against an empty registry every row is active, whichever plugins berth has today.
TEST(FieldGate, RefusesEachFieldWhosePluginTheRegistryLacks) {
  const FieldGate gate = FieldGate::fromRegistry(Registry{});
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto pod = MakePod().name("p").mutate(c.mutate).obj();
    auto refusal = gate.check(*pod);
    if (c.wantPath.empty()) {
      EXPECT_FALSE(refusal.has_value()) << refusal->path;
      continue;
    }
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->path, c.wantPath);
    EXPECT_EQ(refusal->row->plugin, c.wantPlugin);
    EXPECT_EQ(refusal->row->field, c.wantField);
    Status s = FieldGate::status(*refusal);
    EXPECT_EQ(s.code(), Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(s.plugin(), c.wantPlugin);
    EXPECT_EQ(s.message(), "berth does not implement " + c.wantPath + " (" + c.wantPlugin + ")");
  }
}

// A registry with only a stand-in for one upstream plugin enforces that plugin's rows.
Registry registryWith(std::string_view name) {
  Registry r;
  r.add(std::string(name), [](const Handle&) -> util::Result<PluginPtr> {
     return util::invalidArgument("not built in this test");
   }).ignore();
  return r;
}

TEST(FieldGate, RowsSwitchOffWhenTheRegistryHasTheirPlugin) {
  auto pvc = MakePod().mutate(
      [](api::Pod& p) { p.spec.volumes = {volume("data", "persistentVolumeClaim")}; });
  EXPECT_TRUE(FieldGate::fromRegistry(Registry{}).check(*pvc.obj()));
  EXPECT_FALSE(FieldGate::fromRegistry(registryWith("VolumeBinding")).check(*pvc.obj()));

  // A GCE disk needs both VolumeRestrictions and NodeVolumeLimits: the one still missing is named.
  auto gce =
      MakePod().mutate([](api::Pod& p) { p.spec.volumes = {volume("d", "gcePersistentDisk")}; });
  auto refusal = FieldGate::fromRegistry(registryWith("VolumeRestrictions")).check(*gce.obj());
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->row->plugin, "NodeVolumeLimits");
}

// With berth's registry: VolumeRestrictions and NodeVolumeLimits enforce the in-tree disks they
// read; the in-tree kinds NodeVolumeLimits does not translate to CSI stay refused, and claims stay
// refused until VolumeBinding is registered.
TEST(FieldGate, InTreeRegistryPlacesTheDisksItsVolumePluginsEnforce) {
  const Registry r = plugins::makeInTreeRegistry();
  ASSERT_TRUE(r.hasPlugin("VolumeRestrictions"));
  ASSERT_TRUE(r.hasPlugin("NodeVolumeLimits"));
  const FieldGate gate = FieldGate::fromRegistry(r);
  auto refusedBy = [&gate](std::string source) -> std::string {
    auto pod = MakePod().mutate([&](api::Pod& p) { p.spec.volumes = {volume("v", source)}; });
    auto refusal = gate.check(*pod.obj());
    return refusal ? std::string(refusal->row->plugin) : "";
  };
  for (const char* placed : {"gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi",
                             "azureFile", "vsphereVolume"}) {
    EXPECT_EQ(refusedBy(placed), "") << placed;
  }
  for (const char* refused : {"azureDisk", "cinder", "portworxVolume"}) {
    EXPECT_EQ(refusedBy(refused), "NodeVolumeLimits") << refused;
  }
  if (!r.hasPlugin("VolumeBinding")) {
    EXPECT_EQ(refusedBy("persistentVolumeClaim"), "VolumeBinding");
    EXPECT_EQ(refusedBy("ephemeral"), "VolumeBinding");
  }
}

TEST(FieldGate, PodLevelResourcesNeedTheFeatureNotJustThePlugin) {
  auto pod = MakePod().mutate([](api::Pod& p) {
    p.spec.resources = api::ResourceRequirements{test::resourceList({{"memory", "1Gi"}}), {}};
  });
  Registry r = plugins::makeInTreeRegistry();
  ASSERT_TRUE(r.hasPlugin("NodeResourcesFit"));
  EXPECT_TRUE(FieldGate::fromRegistry(r).check(*pod.obj()));
  r.addFeature("NodeResourcesFit", "PodLevelResources");
  EXPECT_FALSE(FieldGate::fromRegistry(r).check(*pod.obj()));
}

TEST(FieldGate, FrameworkRefusesInPreFilterWithTheFieldInTheFitError) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  auto pod = MakePod().name("p").mutate(
      [](api::Pod& p) { p.spec.resourceClaims = {api::PodResourceClaim{"gpu"}}; });
  PodInfo info(pod.obj());
  CycleState state;
  PreFilterResult result;
  std::set<std::string> rejectedBy;
  Status s = fw->runPreFilterPlugins(state, info, result, rejectedBy);
  EXPECT_EQ(s.code(), Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(rejectedBy, std::set<std::string>{"DynamicResources"});
  FitError fit{5, Diagnosis{}};
  fit.diagnosis.preFilterMsg = s.message();
  EXPECT_EQ(fit.message(),
            "0/5 nodes are available: berth does not implement spec.resourceClaims "
            "(DynamicResources).");
}

TEST(FieldGate, NoClusterEventRequeuesARefusedPod) {
  auto fw = test::mustMakeFramework(config::defaultConfiguration().profiles[0]);
  auto it = fw->pluginEvents().find("DynamicResources");
  ASSERT_NE(it, fw->pluginEvents().end());
  EXPECT_TRUE(it->second.empty());
}

}  // namespace
}  // namespace berth::framework::runtime
