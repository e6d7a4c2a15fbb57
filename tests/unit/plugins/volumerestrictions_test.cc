// VolumeRestrictions: upstream's volume_restrictions_test.go rows (TestGCEDiskConflicts,
// TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts),
// preemption's AddPod/RemovePod on the ReadWriteOncePod count, and the queueing hints, through
// the runtime over a real Snapshot.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pkg/framework/cluster_objects.h"
#include "pkg/plugins/registry.h"
#include "pkg/plugins/volumerestrictions/volume_restrictions.h"
#include "tests/support/builders.h"

namespace berth::plugins::volumerestrictions {
namespace {

using framework::Code;
using framework::Status;
using test::MakeNode;
using test::MakePod;

constexpr std::string_view kPlugin = "VolumeRestrictions";

api::Volume disk(std::string source, std::string id, bool readOnly = false) {
  api::Volume v;
  v.name = "v-" + id;
  v.source = std::move(source);
  v.disk = std::move(id);
  v.readOnly = readOnly;
  return v;
}

api::Volume rbd(std::vector<std::string> monitors, std::string pool, std::string image,
                bool readOnly = false) {
  api::Volume v = disk("rbd", std::move(image), readOnly);
  v.rbdPool = std::move(pool);
  v.rbdMonitors = std::move(monitors);
  return v;
}

api::Volume claim(std::string name) {
  api::Volume v;
  v.name = "v-" + name;
  v.source = "persistentVolumeClaim";
  v.claimName = std::move(name);
  return v;
}

api::PodPtr podWith(std::string name, std::vector<api::Volume> volumes, std::string node = "") {
  auto w = MakePod().name(name).uid(name).mutate(
      [&](api::Pod& p) { p.spec.volumes = std::move(volumes); });
  if (!node.empty()) w.node(std::move(node));
  return w.obj();
}

api::PersistentVolumeClaimPtr pvc(std::string name, std::string mode) {
  auto c = std::make_shared<api::PersistentVolumeClaim>();
  c->metadata.name = std::move(name);
  c->metadata.namespace_ = "default";
  c->spec.accessModes = {std::move(mode)};
  return c;
}

// One plugin over a snapshot, as the scheduling cycle runs it.
class Cycle {
 public:
  Cycle(const std::vector<api::PodPtr>& existing, const framework::ClusterObjects* objects)
      : snapshot_(test::makeSnapshot({MakeNode().name("n1").obj(), MakeNode().name("n2").obj()},
                                     existing)) {
    static const framework::runtime::Registry registry = makeInTreeRegistry();
    framework::Handle handle;
    handle.objects = objects;
    auto fw = framework::runtime::Framework::create(
        registry, test::profileWith({test::plugin(kPlugin)}), handle);
    if (!fw.ok()) throw std::invalid_argument(fw.error().message);
    fw_ = std::move(*fw);
  }

  struct Run {
    Status preFilter;
    bool skipped = false;
    std::vector<Status> filter;  // n1, n2; empty when PreFilter failed or skipped
  };
  Run run(const api::PodPtr& pod) const {
    Run r;
    framework::CycleState state;
    state.setSnapshot(&snapshot_);
    framework::PodInfo info(pod);
    framework::PreFilterResult result;
    std::set<std::string> rejectedBy;
    r.preFilter = fw_->runPreFilterPlugins(state, info, result, rejectedBy);
    r.skipped = state.filterSkipped(kPlugin);
    if (!r.preFilter.isSuccess() || r.skipped) return r;
    for (const auto& n : snapshot_.nodeInfos()) {
      r.filter.push_back(fw_->runFilterPlugins(state, info, *n));
    }
    return r;
  }

  const framework::runtime::Framework& fw() const { return *fw_; }
  const framework::Snapshot& snapshot() const { return snapshot_; }

 private:
  framework::Snapshot snapshot_;
  framework::runtime::FrameworkPtr fw_;
};

// "ok", or "disk" / "rwop" (Unschedulable with that reason, from the plugin), per node.
std::vector<std::string> outcome(const std::vector<Status>& statuses) {
  std::vector<std::string> out;
  for (const Status& s : statuses) {
    if (s.isSuccess()) {
      out.emplace_back("ok");
    } else if (s.code() == Code::Unschedulable && s.plugin() == kPlugin &&
               s.message() == kErrReasonDiskConflict) {
      out.emplace_back("disk");
    } else if (s.code() == Code::Unschedulable && s.plugin() == kPlugin &&
               s.message() == kErrReasonReadWriteOncePodConflict) {
      out.emplace_back("rwop");
    } else {
      out.push_back("unexpected: " + s.message());
    }
  }
  return out;
}

using Outcome = std::vector<std::string>;

TEST(VolumeRestrictions, InTreeDiskConflictsOnTheNode) {
  struct Case {
    const char* name;
    std::vector<api::Volume> existing;  // of a pod on n1
    std::vector<api::Volume> incoming;
    Outcome want;
  };
  const std::vector<Case> cases = {
      {"GCE: nothing on the node", {}, {disk("gcePersistentDisk", "foo")}, {"ok", "ok"}},
      {"GCE: the same disk",
       {disk("gcePersistentDisk", "foo")},
       {disk("gcePersistentDisk", "foo")},
       {"disk", "ok"}},
      {"GCE: another disk",
       {disk("gcePersistentDisk", "bar")},
       {disk("gcePersistentDisk", "foo")},
       {"ok", "ok"}},
      {"GCE: both read-only",
       {disk("gcePersistentDisk", "foo", true)},
       {disk("gcePersistentDisk", "foo", true)},
       {"ok", "ok"}},
      {"GCE: only one read-only",
       {disk("gcePersistentDisk", "foo", true)},
       {disk("gcePersistentDisk", "foo")},
       {"disk", "ok"}},
      {"AWS: the same volume, even read-only",
       {disk("awsElasticBlockStore", "vol-1", true)},
       {disk("awsElasticBlockStore", "vol-1", true)},
       {"disk", "ok"}},
      {"AWS: another volume",
       {disk("awsElasticBlockStore", "vol-2")},
       {disk("awsElasticBlockStore", "vol-1")},
       {"ok", "ok"}},
      {"iSCSI: the same IQN", {disk("iscsi", "iqn.a")}, {disk("iscsi", "iqn.a")}, {"disk", "ok"}},
      {"iSCSI: both read-only",
       {disk("iscsi", "iqn.a", true)},
       {disk("iscsi", "iqn.a", true)},
       {"ok", "ok"}},
      {"iSCSI: another IQN", {disk("iscsi", "iqn.b")}, {disk("iscsi", "iqn.a")}, {"ok", "ok"}},
      {"RBD: a shared monitor, the same pool and image",
       {rbd({"a", "b"}, "pool", "image")},
       {rbd({"b", "c"}, "pool", "image")},
       {"disk", "ok"}},
      {"RBD: no shared monitor",
       {rbd({"a"}, "pool", "image")},
       {rbd({"c"}, "pool", "image")},
       {"ok", "ok"}},
      {"RBD: another pool",
       {rbd({"a"}, "pool2", "image")},
       {rbd({"a"}, "pool", "image")},
       {"ok", "ok"}},
      {"RBD: both read-only",
       {rbd({"a"}, "pool", "image", true)},
       {rbd({"a"}, "pool", "image", true)},
       {"ok", "ok"}},
      {"different kinds never conflict",
       {disk("awsElasticBlockStore", "foo")},
       {disk("gcePersistentDisk", "foo")},
       {"ok", "ok"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle({podWith("existing", c.existing, "n1")}, nullptr);
    Cycle::Run r = cycle.run(podWith("incoming", c.incoming));
    ASSERT_TRUE(r.preFilter.isSuccess()) << r.preFilter.message();
    ASSERT_FALSE(r.skipped);
    EXPECT_EQ(outcome(r.filter), c.want);
  }
}

TEST(VolumeRestrictions, ReadWriteOncePodClaimsAreUsedByOnePodOfTheCluster) {
  framework::ClusterObjectStore objects;
  objects.upsert(pvc("rwop", std::string(api::kReadWriteOncePod)));
  objects.upsert(pvc("rwo", std::string(api::kReadWriteOnce)));
  objects.upsert(pvc("rwop-free", std::string(api::kReadWriteOncePod)));
  const std::vector<api::PodPtr> existing = {podWith("user", {claim("rwop"), claim("rwo")}, "n2")};
  Cycle cycle(existing, &objects);

  // Used by a pod on n2: every node is rejected (Unschedulable, so preempting the user helps).
  Cycle::Run used = cycle.run(podWith("p", {claim("rwop")}));
  ASSERT_TRUE(used.preFilter.isSuccess());
  EXPECT_EQ(outcome(used.filter), (Outcome{"rwop", "rwop"}));

  // A ReadWriteOnce claim in use, or a free ReadWriteOncePod claim: nothing to check.
  EXPECT_TRUE(cycle.run(podWith("p", {claim("rwo")})).skipped);
  EXPECT_TRUE(cycle.run(podWith("p", {claim("rwop-free")})).skipped);
  // A pod without volumes at all.
  EXPECT_TRUE(cycle.run(podWith("p", {})).skipped);

  // The same claim name in another namespace is another claim.
  auto otherNs = MakePod()
                     .name("o")
                     .ns("other")
                     .mutate([](api::Pod& p) { p.spec.volumes = {claim("rwop")}; })
                     .obj();
  Cycle::Run missing = cycle.run(otherNs);
  EXPECT_EQ(missing.preFilter.code(), Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(missing.preFilter.message(), "persistentvolumeclaim \"rwop\" not found");
}

TEST(VolumeRestrictions, MissingClaimIsUnresolvableWithTheListersText) {
  framework::ClusterObjectStore objects;
  Cycle cycle({}, &objects);
  Cycle::Run r = cycle.run(podWith("p", {claim("gone")}));
  EXPECT_EQ(r.preFilter.code(), Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(r.preFilter.plugin(), kPlugin);
  EXPECT_EQ(r.preFilter.message(), "persistentvolumeclaim \"gone\" not found");
  // Without any cluster objects (no informers) the claim is just as absent.
  EXPECT_EQ(Cycle({}, nullptr).run(podWith("p", {claim("gone")})).preFilter.message(),
            "persistentvolumeclaim \"gone\" not found");
}

// Preemption's dry run removes the claim's user: the pod then fits; adding it back rejects again.
TEST(VolumeRestrictions, PreemptionDryRunsMoveTheReadWriteOncePodCount) {
  framework::ClusterObjectStore objects;
  objects.upsert(pvc("rwop", std::string(api::kReadWriteOncePod)));
  const api::PodPtr user = podWith("user", {claim("rwop")}, "n1");
  Cycle cycle({user}, &objects);
  framework::CycleState state;
  state.setSnapshot(&cycle.snapshot());
  framework::PodInfo pod(podWith("p", {claim("rwop")}));
  framework::PreFilterResult result;
  std::set<std::string> rejectedBy;
  ASSERT_TRUE(cycle.fw().runPreFilterPlugins(state, pod, result, rejectedBy).isSuccess());
  const framework::NodeInfo& n1 = *cycle.snapshot().nodeInfos()[0];
  EXPECT_EQ(outcome({cycle.fw().runFilterPlugins(state, pod, n1)}), (Outcome{"rwop"}));

  framework::PodInfo userInfo(user);
  ASSERT_TRUE(cycle.fw().runPreFilterExtensionRemovePod(state, pod, userInfo, n1).isSuccess());
  EXPECT_TRUE(cycle.fw().runFilterPlugins(state, pod, n1).isSuccess());
  ASSERT_TRUE(cycle.fw().runPreFilterExtensionAddPod(state, pod, userInfo, n1).isSuccess());
  EXPECT_EQ(outcome({cycle.fw().runFilterPlugins(state, pod, n1)}), (Outcome{"rwop"}));

  // A pod of another namespace with a claim of that name is not the claim's user.
  auto stranger = MakePod()
                      .name("s")
                      .ns("other")
                      .node("n1")
                      .mutate([](api::Pod& p) { p.spec.volumes = {claim("rwop")}; })
                      .obj();
  framework::PodInfo strangerInfo(stranger);
  ASSERT_TRUE(cycle.fw().runPreFilterExtensionRemovePod(state, pod, strangerInfo, n1).isSuccess());
  EXPECT_EQ(outcome({cycle.fw().runFilterPlugins(state, pod, n1)}), (Outcome{"rwop"}));
}

TEST(VolumeRestrictions, QueueingHintsAsUpstream) {
  Cycle cycle({}, nullptr);
  const auto& regs = cycle.fw().pluginEvents().at(std::string(kPlugin));
  auto queues = [&regs](const framework::ClusterEvent& e, const api::PodPtr& pod,
                        const framework::EventObjects& objects) {
    for (const auto& r : regs) {
      if (r.event.matches(e)) return r.hint(e, *pod, objects) == framework::QueueingHint::Queue;
    }
    return false;
  };
  namespace events = framework::events;
  const api::PodPtr pending = podWith("p", {disk("gcePersistentDisk", "foo"), claim("data")});
  const api::PodPtr holder = podWith("h", {disk("gcePersistentDisk", "foo")}, "n1");
  const api::PodPtr claimUser = podWith("c", {claim("data")}, "n1");
  const api::PodPtr unrelated = podWith("u", {disk("gcePersistentDisk", "bar")}, "n1");
  auto otherNsHolder =
      MakePod()
          .name("o")
          .ns("other")
          .node("n1")
          .mutate([](api::Pod& p) { p.spec.volumes = {disk("gcePersistentDisk", "foo")}; })
          .obj();
  const auto data = pvc("data", std::string(api::kReadWriteOncePod));
  const auto logs = pvc("logs", std::string(api::kReadWriteOncePod));

  EXPECT_TRUE(queues(events::kAssignedPodDelete, pending, {.oldPod = holder.get()}));
  EXPECT_TRUE(queues(events::kAssignedPodDelete, pending, {.oldPod = claimUser.get()}));
  EXPECT_FALSE(queues(events::kAssignedPodDelete, pending, {.oldPod = unrelated.get()}));
  EXPECT_FALSE(queues(events::kAssignedPodDelete, pending, {.oldPod = otherNsHolder.get()}));
  EXPECT_TRUE(queues(events::kNodeAdd, pending, {}));
  EXPECT_TRUE(queues(events::kPersistentVolumeClaimAdd, pending, {.newClaim = data.get()}));
  EXPECT_FALSE(queues(events::kPersistentVolumeClaimAdd, pending, {.newClaim = logs.get()}));
  // Pod updates cannot change spec.volumes; claim updates do not change the access modes checked.
  EXPECT_FALSE(queues(events::kAssignedPodUpdate, pending, {}));
  EXPECT_FALSE(queues(events::kPersistentVolumeClaimUpdate, pending, {}));
}

}  // namespace
}  // namespace berth::plugins::volumerestrictions
