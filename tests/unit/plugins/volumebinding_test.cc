// VolumeBinding: upstream's volume_binding_test.go and binder_test.go rows' intent (PreFilter
// classification and messages, Filter reasons in order, Reserve's assumptions and Unreserve,
// PreBind's writes in order and its wait), through the real runtime over a real Snapshot, with a
// fake VolumeWriter that plays the API server (each write lands with a newer resourceVersion) and
// a clock whose sleeps let the test play the PV controller.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/log/log.h"
#include "pkg/plugins/registry.h"
#include "pkg/plugins/volumebinding/args.h"
#include "pkg/plugins/volumebinding/volume_binding.h"
#include "tests/support/builders.h"

namespace berth::plugins::volumebinding {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

constexpr const char* kWaitClass = "wait";
constexpr const char* kImmediateClass = "immediate";

// A clock whose every sleep advances fake time, then runs onSleep (the test's PV controller).
class SteppingClock final : public util::Clock {
 public:
  util::MonotonicTime monotonicNow() const override { return inner_.monotonicNow(); }
  util::SystemTime systemNow() const override { return inner_.systemNow(); }
  bool sleepFor(util::Duration d, std::stop_token stop) override {
    if (!inner_.sleepFor(d, std::move(stop))) return false;
    ++sleeps;
    if (onSleep) onSleep(sleeps);
    return true;
  }
  int sleeps = 0;
  std::function<void(int)> onSleep;

 private:
  util::FakeClock inner_;
};

std::string bumped(const std::string& rv) { return std::to_string(std::stoll(rv) + 1); }

// Records every write in order and lands it in the store with a newer resourceVersion, as the API
// server and the informer would.
class FakeVolumeWriter final : public framework::VolumeWriter {
 public:
  explicit FakeVolumeWriter(framework::ClusterObjectStore& store) : store_(store) {}
  framework::Status updatePersistentVolume(const api::PersistentVolume& pv) override {
    writes.push_back("pv/" + pv.metadata.name);
    pvs.push_back(pv);
    if (fail)
      return framework::Status::error("persistentvolumes \"" + pv.metadata.name + "\" conflict");
    auto landed = std::make_shared<api::PersistentVolume>(pv);
    landed->metadata.resourceVersion = bumped(pv.metadata.resourceVersion);
    store_.upsert(api::PersistentVolumePtr(landed));
    return framework::Status::success();
  }
  framework::Status updatePersistentVolumeClaim(const api::PersistentVolumeClaim& pvc) override {
    writes.push_back("pvc/" + pvc.metadata.namespace_ + "/" + pvc.metadata.name);
    pvcs.push_back(pvc);
    if (fail) return framework::Status::error("conflict");
    auto landed = std::make_shared<api::PersistentVolumeClaim>(pvc);
    landed->metadata.resourceVersion = bumped(pvc.metadata.resourceVersion);
    store_.upsert(api::PersistentVolumeClaimPtr(landed));
    return framework::Status::success();
  }
  std::vector<std::string> writes;
  std::vector<api::PersistentVolume> pvs;
  std::vector<api::PersistentVolumeClaim> pvcs;
  bool fail = false;

 private:
  framework::ClusterObjectStore& store_;
};

api::StorageClassPtr storageClass(std::string name, std::optional<std::string> mode,
                                  std::string provisioner = "csi.example.com",
                                  std::vector<api::TopologySelectorTerm> topologies = {}) {
  auto sc = std::make_shared<api::StorageClass>();
  sc->metadata.name = std::move(name);
  sc->volumeBindingMode = std::move(mode);
  sc->provisioner = std::move(provisioner);
  sc->allowedTopologies = std::move(topologies);
  return sc;
}

struct ClaimSpec {
  std::string name;
  std::string className = kWaitClass;
  std::string size = "1Gi";
  std::string volumeName = "";
  bool bindCompleted = false;
  std::vector<std::string> accessModes = {"ReadWriteOnce"};
};

api::PersistentVolumeClaimPtr claim(const ClaimSpec& c) {
  auto pvc = std::make_shared<api::PersistentVolumeClaim>();
  pvc->metadata.name = c.name;
  pvc->metadata.namespace_ = "default";
  pvc->metadata.uid = "uid-" + c.name;
  pvc->metadata.resourceVersion = "10";
  pvc->spec.storageClassName = c.className;
  pvc->spec.accessModes = c.accessModes;
  pvc->spec.resources.requests["storage"] = test::quantity(c.size);
  pvc->spec.volumeName = c.volumeName;
  if (c.bindCompleted) pvc->metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
  pvc->status.phase = c.bindCompleted ? "Bound" : "Pending";
  return pvc;
}

struct VolumeSpec {
  std::string name;
  std::string className = kWaitClass;
  std::string size = "1Gi";
  std::optional<std::string> zone = std::nullopt;      // node affinity on zone In (zone)
  std::optional<std::string> hostname = std::nullopt;  // node affinity on the hostname label
  std::string claimName = "";                          // claimRef to default/<claimName>
  std::string phase = "Available";
  std::vector<std::string> accessModes = {"ReadWriteOnce"};
};

api::PersistentVolumePtr volume(const VolumeSpec& v) {
  auto pv = std::make_shared<api::PersistentVolume>();
  pv->metadata.name = v.name;
  pv->metadata.resourceVersion = "20";
  pv->spec.storageClassName = v.className;
  pv->spec.capacity["storage"] = test::quantity(v.size);
  pv->spec.accessModes = v.accessModes;
  pv->status.phase = v.phase;
  auto pin = [&](std::string key, std::string value) {
    pv->spec.nodeAffinity.emplace().nodeSelectorTerms.push_back(
        {.matchExpressions = {{std::move(key), api::NodeSelectorOperator::In, {std::move(value)}}},
         .matchFields = {}});
  };
  if (v.zone) pin("zone", *v.zone);
  if (v.hostname) pin("kubernetes.io/hostname", *v.hostname);
  if (!v.claimName.empty()) {
    pv->spec.claimRef = api::ObjectReference{.kind = "PersistentVolumeClaim",
                                             .namespace_ = "default",
                                             .name = v.claimName,
                                             .uid = "uid-" + v.claimName};
  }
  return pv;
}

test::PodWrapper podWithClaims(const std::vector<std::string>& claims) {
  return MakePod().name("pod-a").uid("uid-pod-a").mutate([claims](api::Pod& p) {
    for (const auto& c : claims) {
      p.spec.volumes.push_back({.name = "vol-" + c,
                                .source = "persistentVolumeClaim",
                                .claimName = c,
                                .readOnly = false,
                                .disk = "",
                                .rbdPool = "",
                                .rbdMonitors = {},
                                .csiDriver = ""});
    }
  });
}

class VolumeBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    objects_.upsert(storageClass(kWaitClass, "WaitForFirstConsumer"));
    objects_.upsert(storageClass(kImmediateClass, "Immediate"));
    nodes_ = {MakeNode()
                  .name("node-a")
                  .label("zone", "a")
                  .label("kubernetes.io/hostname", "node-a")
                  .obj(),
              MakeNode()
                  .name("node-b")
                  .label("zone", "b")
                  .label("kubernetes.io/hostname", "node-b")
                  .obj()};
  }

  void build(int64_t bindTimeoutSeconds = 600) {
    config::Profile profile = test::profileWith({test::plugin("VolumeBinding")});
    profile.pluginConfig.push_back({"VolumeBinding",
                                    config::Json{{"bindTimeoutSeconds", bindTimeoutSeconds}},
                                    "profiles[0].pluginConfig[0].args"});
    framework::Handle handle;
    handle.objects = &objects_;
    handle.volumes = &writer_;
    handle.clock = &clock_;
    auto fw = framework::runtime::Framework::create(registry_, profile, handle, clock_);
    ASSERT_TRUE(fw.ok()) << fw.error().message;
    fw_ = std::move(*fw);
    snapshot_ = test::makeSnapshot(nodes_);
  }

  struct Cycle {
    framework::Status preFilter;
    std::optional<std::set<std::string>> nodes;
    std::vector<framework::Status> filter;  // per node, in order
    framework::CycleState state;
    framework::PodInfoPtr pod;
  };

  Cycle run(const api::PodPtr& pod) {
    if (!fw_) build();
    Cycle c;
    c.pod = framework::makePodInfo(pod);
    c.state.setSnapshot(&snapshot_);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    c.preFilter = fw_->runPreFilterPlugins(c.state, *c.pod, result, rejectedBy);
    c.nodes = result.nodeNames;
    if (c.preFilter.isSuccess()) {
      for (const auto& n : snapshot_.nodeInfos()) {
        c.filter.push_back(fw_->runFilterPlugins(c.state, *c.pod, *n));
      }
    }
    return c;
  }

  // PreFilter, Filter, then Reserve on `node`.
  Cycle reserve(const api::PodPtr& pod, const std::string& node) {
    Cycle c = run(pod);
    EXPECT_TRUE(c.preFilter.isSuccess()) << c.preFilter.message();
    framework::Status s = fw_->runReservePluginsReserve(c.state, *c.pod, node);
    EXPECT_TRUE(s.isSuccess()) << s.message();
    return c;
  }

  framework::Status preBind(Cycle& c, const std::string& node) {
    return fw_->runPreBindPlugins(c.state, *c.pod, node);
  }

  void bindClaim(const std::string& name, const std::string& pvName) {
    auto pvc = std::make_shared<api::PersistentVolumeClaim>(
        *objects_.getPersistentVolumeClaim("default", name));
    pvc->spec.volumeName = pvName;
    pvc->metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
    pvc->metadata.resourceVersion = bumped(pvc->metadata.resourceVersion);
    objects_.upsert(api::PersistentVolumeClaimPtr(pvc));
  }

  framework::runtime::Registry registry_ = makeInTreeRegistry();
  framework::ClusterObjectStore objects_;
  FakeVolumeWriter writer_{objects_};
  SteppingClock clock_;
  std::vector<api::NodePtr> nodes_;
  framework::runtime::FrameworkPtr fw_;
  framework::Snapshot snapshot_;
};

std::vector<std::string> reasons(const framework::Status& s) { return s.reasons(); }

TEST_F(VolumeBindingTest, PreFilterClassifiesClaimsWithUpstreamMessages) {
  struct Case {
    std::string name;
    std::vector<api::PersistentVolumeClaimPtr> claims;
    std::vector<api::PersistentVolumePtr> pvs;
    api::PodPtr pod;
    Code wantCode;
    std::string wantMessage;
  };
  auto lost = std::make_shared<api::PersistentVolumeClaim>(
      *claim({.name = "pvc-a", .volumeName = "pv-a", .bindCompleted = true}));
  lost->status.phase = "Lost";
  auto deleting = std::make_shared<api::PersistentVolumeClaim>(*claim({.name = "pvc-a"}));
  deleting->metadata.deletionTimestamp = api::Timestamp{1};
  auto ephemeralPod = MakePod().name("pod-a").uid("uid-pod-a").mutate([](api::Pod& p) {
    p.spec.volumes.push_back({.name = "scratch",
                              .source = "ephemeral",
                              .claimName = "",
                              .readOnly = false,
                              .disk = "",
                              .rbdPool = "",
                              .rbdMonitors = {},
                              .csiDriver = ""});
  });
  auto foreign = std::make_shared<api::PersistentVolumeClaim>(*claim({.name = "pod-a-scratch"}));
  foreign->metadata.ownerReferences.push_back(
      {.apiVersion = "v1", .kind = "Pod", .name = "other", .uid = "uid-other", .controller = true});
  auto owned = std::make_shared<api::PersistentVolumeClaim>(*foreign);
  owned->metadata.ownerReferences[0].uid = "uid-pod-a";
  std::vector<Case> cases = {
      {"a pod without claims is skipped", {}, {}, MakePod().name("pod-a").obj(), Code::Success, ""},
      {"a missing claim",
       {},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "persistentvolumeclaim \"pvc-a\" not found"},
      {"a lost claim",
       {lost},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\""},
      {"a claim being deleted",
       {deleting},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "persistentvolumeclaim \"pvc-a\" is being deleted"},
      {"an ephemeral volume's claim not created yet",
       {},
       {},
       ephemeralPod.obj(),
       Code::UnschedulableAndUnresolvable,
       "waiting for ephemeral volume controller to create the persistentvolumeclaim "
       "\"pod-a-scratch\""},
      {"an ephemeral volume's claim of another pod",
       {foreign},
       {},
       ephemeralPod.obj(),
       Code::UnschedulableAndUnresolvable,
       "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)"},
      {"an ephemeral volume's own delayed claim",
       {owned},
       {},
       ephemeralPod.obj(),
       Code::Success,
       ""},
      {"an unbound immediate claim",
       {claim({.name = "pvc-a", .className = kImmediateClass})},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "pod has unbound immediate PersistentVolumeClaims"},
      {"a claim of a class that does not exist is immediate",
       {claim({.name = "pvc-a", .className = "missing"})},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "pod has unbound immediate PersistentVolumeClaims"},
      {"a delayed claim pre-bound to a PV waits like an immediate one",
       {claim({.name = "pvc-a", .volumeName = "pv-a"})},
       {volume({.name = "pv-a"})},
       podWithClaims({"pvc-a"}).obj(),
       Code::UnschedulableAndUnresolvable,
       "pod has unbound immediate PersistentVolumeClaims"},
      {"a class without volumeBindingMode is an error",
       {claim({.name = "pvc-a", .className = "unset"})},
       {},
       podWithClaims({"pvc-a"}).obj(),
       Code::Error,
       "running PreFilter plugin \"VolumeBinding\": VolumeBindingMode not set for StorageClass "
       "\"unset\""},
      {"bound claims pass",
       {claim({.name = "pvc-a", .volumeName = "pv-a", .bindCompleted = true})},
       {volume({.name = "pv-a", .claimName = "pvc-a", .phase = "Bound"})},
       podWithClaims({"pvc-a"}).obj(),
       Code::Success,
       ""},
  };
  objects_.upsert(storageClass("unset", std::nullopt));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (const auto& pvc : c.claims) objects_.upsert(pvc);
    for (const auto& pv : c.pvs) objects_.upsert(pv);
    Cycle cycle = run(c.pod);
    EXPECT_EQ(cycle.preFilter.code(), c.wantCode);
    EXPECT_EQ(cycle.preFilter.message(), c.wantMessage);
    if (c.claims.empty() && c.wantCode == Code::Success) {
      EXPECT_TRUE(cycle.state.filterSkipped("VolumeBinding"));
    }
    for (const auto& pvc : c.claims) {
      EXPECT_TRUE(objects_.removePersistentVolumeClaim("default", pvc->metadata.name));
    }
    for (const auto& pv : c.pvs) EXPECT_TRUE(objects_.removePersistentVolume(pv->metadata.name));
  }
}

TEST_F(VolumeBindingTest, FilterReasonsPerNodeInUpstreamOrder) {
  struct Case {
    std::string name;
    std::vector<api::PersistentVolumeClaimPtr> claims;
    std::vector<api::PersistentVolumePtr> pvs;
    std::vector<std::vector<std::string>> want;  // reasons on node-a, node-b (empty: fits)
    std::vector<api::StorageClassPtr> classes = {};
  };
  const auto boundA = claim({.name = "pvc-a", .volumeName = "pv-a", .bindCompleted = true});
  const auto zonalA = volume({.name = "pv-a", .zone = "a", .claimName = "pvc-a", .phase = "Bound"});
  std::vector<Case> cases = {
      {"a bound PV's node affinity",
       {boundA},
       {zonalA},
       {{}, {std::string(kErrReasonNodeConflict)}}},
      {"a bound claim whose PV does not exist",
       {boundA},
       {},
       {{std::string(kErrReasonPVNotExist)}, {std::string(kErrReasonPVNotExist)}}},
      {"a delayed claim matches an available PV in its zone",
       {claim({.name = "pvc-b", .className = "static"})},
       {volume({.name = "pv-b", .className = "static", .zone = "a"})},
       {{}, {std::string(kErrReasonBindConflict)}},
       {storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")}},
      {"affinity conflict and no volume to bind, in that order",
       {boundA, claim({.name = "pvc-b", .className = "static"})},
       {zonalA, volume({.name = "pv-b", .className = "static", .zone = "a"})},
       {{}, {std::string(kErrReasonNodeConflict), std::string(kErrReasonBindConflict)}},
       {storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")}},
      {"a PV too small, of another class or access mode does not match",
       {claim({.name = "pvc-b",
               .className = "static",
               .size = "5Gi",
               .accessModes = {"ReadWriteMany"}})},
       {volume({.name = "small",
                .className = "static",
                .size = "1Gi",
                .accessModes = {"ReadWriteMany"}}),
        volume({.name = "other-class",
                .className = "other",
                .size = "10Gi",
                .accessModes = {"ReadWriteMany"}}),
        volume({.name = "rwo", .className = "static", .size = "10Gi"}),
        volume({.name = "released",
                .className = "static",
                .size = "10Gi",
                .phase = "Released",
                .accessModes = {"ReadWriteMany"}})},
       {{std::string(kErrReasonBindConflict)}, {std::string(kErrReasonBindConflict)}},
       {storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")}},
      {"one PV serves one claim of the pod",
       {claim({.name = "pvc-b", .className = "static"}),
        claim({.name = "pvc-c", .className = "static"})},
       {volume({.name = "only", .className = "static", .size = "5Gi"})},
       {{std::string(kErrReasonBindConflict)}, {std::string(kErrReasonBindConflict)}},
       {storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")}},
      {"provisioning within allowedTopologies",
       {claim({.name = "pvc-b", .className = "zonal"})},
       {},
       {{}, {std::string(kErrReasonBindConflict)}},
       {storageClass("zonal", "WaitForFirstConsumer", "csi.example.com",
                     {{.matchLabelExpressions = {{.key = "zone", .values = {"a"}}}}})}},
      {"a class that provisions everywhere", {claim({.name = "pvc-b"})}, {}, {{}, {}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (const auto& sc : c.classes) objects_.upsert(sc);
    for (const auto& pvc : c.claims) objects_.upsert(pvc);
    for (const auto& pv : c.pvs) objects_.upsert(pv);
    Cycle cycle = run(podWithClaims([&] {
                        std::vector<std::string> names;
                        for (const auto& pvc : c.claims) names.push_back(pvc->metadata.name);
                        return names;
                      }())
                          .obj());
    ASSERT_TRUE(cycle.preFilter.isSuccess()) << cycle.preFilter.message();
    ASSERT_EQ(cycle.filter.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      SCOPED_TRACE(nodes_[i]->metadata.name);
      if (c.want[i].empty()) {
        EXPECT_TRUE(cycle.filter[i].isSuccess()) << cycle.filter[i].message();
      } else {
        EXPECT_EQ(cycle.filter[i].code(), Code::UnschedulableAndUnresolvable);
        EXPECT_EQ(reasons(cycle.filter[i]), c.want[i]);
      }
    }
    for (const auto& pvc : c.claims)
      objects_.removePersistentVolumeClaim("default", pvc->metadata.name);
    for (const auto& pv : c.pvs) objects_.removePersistentVolume(pv->metadata.name);
    for (const auto& sc : c.classes) objects_.removeStorageClass(sc->metadata.name);
  }
}

TEST_F(VolumeBindingTest, SelectedNodeAnnotationRejectsEveryOtherNode) {
  auto pvc = std::make_shared<api::PersistentVolumeClaim>(*claim({.name = "pvc-a"}));
  pvc->metadata.annotations["volume.kubernetes.io/selected-node"] = "node-b";
  objects_.upsert(api::PersistentVolumeClaimPtr(pvc));
  Cycle c = run(podWithClaims({"pvc-a"}).obj());
  ASSERT_TRUE(c.preFilter.isSuccess());
  EXPECT_EQ(reasons(c.filter[0]), std::vector<std::string>{std::string(kErrReasonBindConflict)});
  EXPECT_TRUE(c.filter[1].isSuccess()) << c.filter[1].message();
}

TEST_F(VolumeBindingTest, LocalBoundVolumesNarrowTheNodes) {
  objects_.upsert(claim({.name = "pvc-a", .volumeName = "local-a", .bindCompleted = true}));
  objects_.upsert(
      volume({.name = "local-a", .hostname = "node-a", .claimName = "pvc-a", .phase = "Bound"}));
  Cycle c = run(podWithClaims({"pvc-a"}).obj());
  ASSERT_TRUE(c.preFilter.isSuccess()) << c.preFilter.message();
  EXPECT_EQ(c.nodes, (std::set<std::string>{"node-a"}));
  EXPECT_TRUE(c.filter[0].isSuccess());
  EXPECT_EQ(reasons(c.filter[1]), std::vector<std::string>{std::string(kErrReasonNodeConflict)});
}

// Bad input: a PV whose node affinity does not parse (a Gt value that is no integer) matches no
// node, with upstream's reason, is logged once for its version rather than every cycle, and other
// pods' volumes still fit.
TEST_F(VolumeBindingTest, AVolumeWhoseNodeAffinityDoesNotParseMatchesNoNodeAndIsLoggedOnce) {
  auto broken = std::make_shared<api::PersistentVolume>(
      *volume({.name = "pv-broken", .zone = "a", .claimName = "pvc-a", .phase = "Bound"}));
  broken->spec.nodeAffinity->nodeSelectorTerms[0].matchExpressions[0] = {
      "zone", api::NodeSelectorOperator::Gt, {"a"}};
  objects_.upsert(claim({.name = "pvc-a", .volumeName = "pv-broken", .bindCompleted = true}));
  objects_.upsert(api::PersistentVolumePtr(broken));
  objects_.upsert(claim({.name = "pvc-b", .volumeName = "pv-b", .bindCompleted = true}));
  objects_.upsert(volume({.name = "pv-b", .zone = "b", .claimName = "pvc-b", .phase = "Bound"}));
  std::vector<std::string> lines;
  log::setSink([&lines](std::string_view line) { lines.emplace_back(line); });
  for (int cycle = 0; cycle < 3; ++cycle) {
    Cycle c = run(podWithClaims({"pvc-a"}).obj());
    ASSERT_TRUE(c.preFilter.isSuccess()) << c.preFilter.message();
    for (const framework::Status& s : c.filter) {
      EXPECT_EQ(s.code(), Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(reasons(s), std::vector<std::string>{std::string(kErrReasonNodeConflict)});
    }
    Cycle other = run(podWithClaims({"pvc-b"}).obj());
    EXPECT_TRUE(other.filter.at(1).isSuccess()) << other.filter.at(1).message();
  }
  log::setSink({});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("PersistentVolume has a node affinity that does not parse"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("persistentVolume=\"pv-broken\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(
                "field=\"spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]\""),
            std::string::npos)
      << lines[0];
}

TEST_F(VolumeBindingTest, StorageCapacityIsCheckedForDriversThatPublishIt) {
  auto driver = std::make_shared<api::CSIDriver>();
  driver->metadata.name = "csi.example.com";
  driver->storageCapacity = true;
  objects_.upsert(api::CSIDriverPtr(driver));
  auto capacity = std::make_shared<api::CSIStorageCapacity>();
  capacity->metadata.name = "zone-a";
  capacity->metadata.namespace_ = "kube-system";
  capacity->storageClassName = kWaitClass;
  capacity->capacity = test::quantity("10Gi");
  capacity->nodeTopology =
      api::LabelSelector{.matchLabels = {{"zone", "a"}}, .matchExpressions = {}};
  objects_.upsert(api::CSIStorageCapacityPtr(capacity));
  objects_.upsert(claim({.name = "pvc-a", .size = "5Gi"}));
  Cycle fits = run(podWithClaims({"pvc-a"}).obj());
  EXPECT_TRUE(fits.filter[0].isSuccess()) << fits.filter[0].message();
  EXPECT_EQ(reasons(fits.filter[1]),
            std::vector<std::string>{std::string(kErrReasonNotEnoughSpace)});

  objects_.upsert(claim({.name = "pvc-a", .size = "20Gi"}));
  Cycle tooBig = run(podWithClaims({"pvc-a"}).obj());
  EXPECT_EQ(reasons(tooBig.filter[0]),
            std::vector<std::string>{std::string(kErrReasonNotEnoughSpace)});
}

TEST_F(VolumeBindingTest, ReserveAssumesTheSmallestFittingVolumeForLaterCycles) {
  objects_.upsert(storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"));
  objects_.upsert(claim({.name = "pvc-a", .className = "static", .size = "2Gi"}));
  objects_.upsert(volume({.name = "pv-10g", .className = "static", .size = "10Gi"}));
  objects_.upsert(volume({.name = "pv-3g", .className = "static", .size = "3Gi"}));
  objects_.upsert(volume({.name = "pv-1g", .className = "static", .size = "1Gi"}));
  Cycle first = reserve(podWithClaims({"pvc-a"}).obj(), "node-a");
  EXPECT_TRUE(fw_->hasPreBindWork(first.state, *first.pod, "node-a"));

  // Another pod's claim of the same size cannot have the assumed PV: it gets the next one.
  objects_.upsert(claim({.name = "pvc-b", .className = "static", .size = "2Gi"}));
  auto other = MakePod().name("pod-b").uid("uid-pod-b").mutate([](api::Pod& p) {
    p.spec.volumes.push_back({.name = "v",
                              .source = "persistentVolumeClaim",
                              .claimName = "pvc-b",
                              .readOnly = false,
                              .disk = "",
                              .rbdPool = "",
                              .rbdMonitors = {},
                              .csiDriver = ""});
  });
  Cycle second = reserve(other.obj(), "node-a");
  ASSERT_TRUE(preBind(second, "node-a").code() == Code::Error);  // not bound within 600 s
  ASSERT_GE(writer_.pvs.size(), 1u);
  EXPECT_EQ(writer_.pvs.back().metadata.name, "pv-10g");

  // Unreserve gives pv-3g back: a third claim may take it.
  fw_->runReservePluginsUnreserve(first.state, *first.pod, "node-a");
  objects_.upsert(claim({.name = "pvc-c", .className = "static", .size = "2Gi"}));
  auto third = MakePod().name("pod-c").uid("uid-pod-c").mutate([](api::Pod& p) {
    p.spec.volumes.push_back({.name = "v",
                              .source = "persistentVolumeClaim",
                              .claimName = "pvc-c",
                              .readOnly = false,
                              .disk = "",
                              .rbdPool = "",
                              .rbdMonitors = {},
                              .csiDriver = ""});
  });
  Cycle thirdCycle = reserve(third.obj(), "node-a");
  clock_.onSleep = [&](int) { bindClaim("pvc-c", "pv-3g"); };
  writer_.pvs.clear();
  EXPECT_TRUE(preBind(thirdCycle, "node-a").isSuccess());
  ASSERT_EQ(writer_.pvs.size(), 1u);
  EXPECT_EQ(writer_.pvs[0].metadata.name, "pv-3g");
}

TEST_F(VolumeBindingTest, PreBindWritesVolumesThenClaimsAndWaitsUntilBound) {
  objects_.upsert(storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"));
  objects_.upsert(claim({.name = "pvc-static", .className = "static"}));
  objects_.upsert(volume({.name = "pv-static", .className = "static"}));
  objects_.upsert(claim({.name = "pvc-dynamic"}));
  Cycle c = reserve(podWithClaims({"pvc-dynamic", "pvc-static"}).obj(), "node-a");
  // The PV controller binds both at the third poll.
  clock_.onSleep = [&](int n) {
    if (n != 3) return;
    bindClaim("pvc-static", "pv-static");
    objects_.upsert(volume({.name = "pvc-uid-dynamic", .claimName = "pvc-dynamic"}));
    bindClaim("pvc-dynamic", "pvc-uid-dynamic");
  };
  framework::Status s = preBind(c, "node-a");
  EXPECT_TRUE(s.isSuccess()) << s.message();
  EXPECT_EQ(writer_.writes, (std::vector<std::string>{"pv/pv-static", "pvc/default/pvc-dynamic"}));
  ASSERT_EQ(writer_.pvs.size(), 1u);
  const api::PersistentVolume& pv = writer_.pvs[0];
  ASSERT_TRUE(pv.spec.claimRef);
  EXPECT_EQ(pv.spec.claimRef->name, "pvc-static");
  EXPECT_EQ(pv.spec.claimRef->uid, "uid-pvc-static");
  EXPECT_EQ(pv.spec.claimRef->kind, "PersistentVolumeClaim");
  EXPECT_EQ(pv.metadata.annotations.at("pv.kubernetes.io/bound-by-controller"), "yes");
  EXPECT_EQ(pv.metadata.resourceVersion, "20");  // the UPDATE is conditional on it
  ASSERT_EQ(writer_.pvcs.size(), 1u);
  EXPECT_EQ(writer_.pvcs[0].metadata.annotations.at("volume.kubernetes.io/selected-node"),
            "node-a");
  EXPECT_EQ(clock_.sleeps, 3);
}

TEST_F(VolumeBindingTest, PreBindFailsWithUpstreamReasons) {
  struct Case {
    std::string name;
    int64_t timeout;
    std::function<void()> controller;  // on the first poll
    std::string want;
    int wantSleeps;
  };
  std::vector<Case> cases = {
      {"nothing binds the claims", 5, nullptr,
       "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded", 5},
      {"a zero timeout fails at once", 0, nullptr,
       "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded", 0},
      {"the PV controller dropped the claimRef", 600,
       [this] {
         auto pv = std::make_shared<api::PersistentVolume>(*objects_.getPersistentVolume("pv-s"));
         pv->spec.claimRef.reset();
         pv->metadata.resourceVersion = "99";
         objects_.upsert(api::PersistentVolumePtr(pv));
       },
       "running PreBind plugin \"VolumeBinding\": binding volumes: ClaimRef got reset for pv "
       "\"pv-s\"",
       1},
      {"the provisioner gave up", 600,
       [this] {
         auto pvc = std::make_shared<api::PersistentVolumeClaim>(
             *objects_.getPersistentVolumeClaim("default", "pvc-d"));
         bindClaim("pvc-s", "pv-s");
         pvc->metadata.annotations.erase("volume.kubernetes.io/selected-node");
         pvc->metadata.annotations["other"] = "x";
         pvc->metadata.resourceVersion = "99";
         objects_.upsert(api::PersistentVolumeClaimPtr(pvc));
       },
       "running PreBind plugin \"VolumeBinding\": binding volumes: provisioning failed for PVC "
       "\"pvc-d\"",
       1},
      {"the provisioned PV does not fit the node", 600,
       [this] {
         objects_.upsert(volume({.name = "pv-d", .zone = "b", .claimName = "pvc-d"}));
         bindClaim("pvc-s", "pv-s");
         bindClaim("pvc-d", "pv-d");
       },
       "running PreBind plugin \"VolumeBinding\": binding volumes: pv \"pv-d\" node affinity "
       "doesn't match node \"node-a\": no matching NodeSelectorTerms",
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    objects_.upsert(storageClass("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"));
    objects_.upsert(claim({.name = "pvc-s", .className = "static"}));
    objects_.upsert(volume({.name = "pv-s", .className = "static"}));
    objects_.upsert(claim({.name = "pvc-d"}));
    fw_.reset();
    build(c.timeout);
    clock_.sleeps = 0;
    clock_.onSleep = [&](int n) {
      if (n == 1 && c.controller) c.controller();
    };
    Cycle cycle = reserve(podWithClaims({"pvc-s", "pvc-d"}).obj(), "node-a");
    framework::Status s = preBind(cycle, "node-a");
    EXPECT_EQ(s.code(), Code::Error);
    EXPECT_EQ(s.message(), c.want);
    EXPECT_EQ(s.plugin(), "VolumeBinding");
    EXPECT_EQ(clock_.sleeps, c.wantSleeps);
    fw_->runReservePluginsUnreserve(cycle.state, *cycle.pod, "node-a");
    objects_.removePersistentVolume("pv-d");
  }
}

TEST_F(VolumeBindingTest, PreBindEndsItsWaitWhenStopped) {
  objects_.upsert(claim({.name = "pvc-a"}));
  Cycle c = reserve(podWithClaims({"pvc-a"}).obj(), "node-a");
  std::stop_source stop;
  c.state.setStopToken(stop.get_token());
  clock_.onSleep = [&](int n) {
    if (n == 2) stop.request_stop();
  };
  framework::Status s = preBind(c, "node-a");
  EXPECT_EQ(s.message(),
            "running PreBind plugin \"VolumeBinding\": binding volumes: context canceled");
  EXPECT_EQ(clock_.sleeps, 2);
}

TEST_F(VolumeBindingTest, PreBindReportsAFailedWrite) {
  objects_.upsert(claim({.name = "pvc-a"}));
  Cycle c = reserve(podWithClaims({"pvc-a"}).obj(), "node-a");
  writer_.fail = true;
  framework::Status s = preBind(c, "node-a");
  EXPECT_EQ(s.message(), "running PreBind plugin \"VolumeBinding\": conflict");
  EXPECT_EQ(clock_.sleeps, 0);
}

TEST_F(VolumeBindingTest, BoundClaimsNeedNoPreBind) {
  objects_.upsert(claim({.name = "pvc-a", .volumeName = "pv-a", .bindCompleted = true}));
  objects_.upsert(volume({.name = "pv-a", .claimName = "pvc-a", .phase = "Bound"}));
  Cycle bound = reserve(podWithClaims({"pvc-a"}).obj(), "node-a");
  EXPECT_FALSE(fw_->hasPreBindWork(bound.state, *bound.pod, "node-a"));
  EXPECT_TRUE(preBind(bound, "node-a").isSuccess());
  Cycle none = reserve(MakePod().name("plain").obj(), "node-a");
  EXPECT_FALSE(fw_->hasPreBindWork(none.state, *none.pod, "node-a"));
  EXPECT_TRUE(writer_.writes.empty());
}

TEST_F(VolumeBindingTest, AnAssumptionIsShadowedByANewerInformerObject) {
  objects_.upsert(claim({.name = "pvc-a"}));
  Cycle c = reserve(podWithClaims({"pvc-a"}).obj(), "node-a");
  // Another pod sharing the claim sees the assumed selected-node: only node-a fits.
  Cycle sharing = run(podWithClaims({"pvc-a"}).name("pod-b").obj());
  EXPECT_TRUE(sharing.filter[0].isSuccess());
  EXPECT_FALSE(sharing.filter[1].isSuccess());
  // The informer's newer object (here without the annotation) wins over the assumption.
  auto newer = std::make_shared<api::PersistentVolumeClaim>(*claim({.name = "pvc-a"}));
  newer->metadata.resourceVersion = "11";
  objects_.upsert(api::PersistentVolumeClaimPtr(newer));
  Cycle after = run(podWithClaims({"pvc-a"}).name("pod-b").obj());
  EXPECT_TRUE(after.filter[1].isSuccess()) << after.filter[1].message();
}

TEST_F(VolumeBindingTest, ClaimEventsQueueOnlyPodsThatUseTheClaim) {
  build();
  const framework::PluginEvents& events = fw_->pluginEvents();
  auto it = events.find("VolumeBinding");
  ASSERT_NE(it, events.end());
  const framework::ClusterEventWithHint* claims = nullptr;
  for (const auto& e : it->second) {
    if (e.event.resource == framework::EventResource::PersistentVolumeClaim) claims = &e;
  }
  ASSERT_NE(claims, nullptr);
  const api::Pod pod = *podWithClaims({"pvc-a"}).obj();
  const auto mine = claim({.name = "pvc-a"});
  const auto other = claim({.name = "pvc-b"});
  EXPECT_EQ(
      claims->hint(framework::events::kPersistentVolumeClaimUpdate, pod, {.newClaim = mine.get()}),
      framework::QueueingHint::Queue);
  EXPECT_EQ(
      claims->hint(framework::events::kPersistentVolumeClaimAdd, pod, {.newClaim = other.get()}),
      framework::QueueingHint::Skip);
  std::set<std::string> labels;
  for (const auto& e : it->second) {
    for (const auto& incoming :
         {framework::events::kPersistentVolumeAdd, framework::events::kStorageClassUpdate,
          framework::events::kCSINodeAdd, framework::events::kCSIDriverUpdate,
          framework::events::kCSIStorageCapacityAdd, framework::events::kNodeLabelChange}) {
      if (e.event.matches(incoming)) labels.emplace(incoming.label);
    }
  }
  EXPECT_EQ(labels.size(), 6u);
}

TEST(VolumeBindingArgs, DefaultsAndValidation) {
  VolumeBindingArgs defaults;
  EXPECT_EQ(defaults.bindTimeoutSeconds, 600);
  config::Decoder d;
  VolumeBindingArgs args;
  decodeVolumeBindingArgs(d, config::Json{{"bindTimeoutSeconds", -1}}, "args", args);
  ASSERT_TRUE(d.failed());
  EXPECT_EQ(d.error(),
            "args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be "
            "a negative value");
  config::Decoder ok;
  decodeVolumeBindingArgs(ok, config::Json{{"bindTimeoutSeconds", 0}}, "args", args);
  EXPECT_FALSE(ok.failed());
  EXPECT_EQ(args.bindTimeoutSeconds, 0);
}

}  // namespace
}  // namespace berth::plugins::volumebinding
