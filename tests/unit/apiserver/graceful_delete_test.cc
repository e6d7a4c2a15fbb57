// The embedded API server's pod deletion as kube-apiserver's (graceful for a running pod, at once
// otherwise), the kubelet stand-in's part, strategic-merge status patches of pod conditions, and
// policy/v1 PodDisruptionBudgets.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "pkg/apiserver/store.h"
#include "pkg/util/clock.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class GracefulDeleteTest : public ::testing::Test {
 protected:
  GracefulDeleteTest() {
    StoreOptions options;
    options.clock = &clock_;
    store_ = std::make_unique<Store>(std::move(options));
  }

  json createPod(const std::string& name, const std::string& node, json spec = json::object()) {
    spec["containers"] = json::array({{{"name", "c"}, {"image", "busybox"}}});
    if (!node.empty()) spec["nodeName"] = node;
    auto r = store_->create(Resource::Pods, "default",
                            {{"apiVersion", "v1"},
                             {"kind", "Pod"},
                             {"metadata", {{"name", name}}},
                             {"spec", std::move(spec)}});
    EXPECT_TRUE(r.ok()) << r.error().status.message;
    return r.ok() ? *r : json();
  }
  bool exists(const std::string& name) { return store_->get(Resource::Pods, "default", name).ok(); }

  // 2026-11-30T08:00:00Z
  util::FakeClock clock_{util::SystemTime(std::chrono::seconds(1796025600))};
  std::unique_ptr<Store> store_;
};

TEST_F(GracefulDeleteTest, UnboundPodIsDeletedAtOnce) {
  createPod("pending", "");
  auto r = store_->remove(Resource::Pods, "default", "pending");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(exists("pending"));
}

TEST_F(GracefulDeleteTest, RunningPodTerminatesForItsGracePeriodThenTheKubeletFinalizesIt) {
  createPod("web", "n1");
  auto watch = store_->watch(Resource::Pods, "default", {});
  ASSERT_TRUE(watch.ok());
  auto r = store_->remove(Resource::Pods, "default", "web");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["metadata"]["deletionTimestamp"], "2026-11-30T08:00:30Z");
  EXPECT_EQ((*r)["metadata"]["deletionGracePeriodSeconds"], 30);
  ASSERT_TRUE(exists("web"));
  EXPECT_EQ(store_->finalizeGracefulDeletions(), 0u);

  clock_.advance(30s);
  EXPECT_EQ(store_->finalizeGracefulDeletions(), 1u);
  EXPECT_FALSE(exists("web"));
  auto events = (*watch)->drain();  // after the initial ADDED
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].typeName(), "MODIFIED");
  EXPECT_EQ(events[2].typeName(), "DELETED");
}

TEST_F(GracefulDeleteTest, GracePeriodComesFromTheRequestElseThePodAndOnlyShrinks) {
  struct Case {
    const char* name;
    json spec;
    std::optional<int64_t> first, second;
    int64_t want;  // deletionGracePeriodSeconds after both DELETEs (0: deleted)
  };
  const Case cases[] = {
      {"the pod's terminationGracePeriodSeconds",
       {{"terminationGracePeriodSeconds", 5}},
       {},
       {},
       5},
      {"the request's period wins", {{"terminationGracePeriodSeconds", 5}}, 2, {}, 2},
      {"a second DELETE shortens it", json::object(), {}, 10, 10},
      {"a second DELETE cannot extend it", json::object(), 10, 60, 10},
      {"a period of 0 deletes at once", json::object(), 0, {}, 0},
      {"a second DELETE with 0 deletes at once", json::object(), {}, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    createPod("p", "n1", c.spec);
    ASSERT_TRUE(store_->remove(Resource::Pods, "default", "p", {}, c.first).ok());
    if (exists("p") && c.second) {
      ASSERT_TRUE(store_->remove(Resource::Pods, "default", "p", {}, c.second).ok());
    }
    if (c.want == 0) {
      EXPECT_FALSE(exists("p"));
      continue;
    }
    auto got = store_->get(Resource::Pods, "default", "p");
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)["metadata"]["deletionGracePeriodSeconds"], c.want);
    ASSERT_TRUE(store_->remove(Resource::Pods, "default", "p", {}, 0).ok());
  }
}

TEST_F(GracefulDeleteTest, UidPreconditionGuardsTheDelete) {
  createPod("web", "n1");
  auto r = store_->remove(Resource::Pods, "default", "web", Preconditions{.uid = "someone-else"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status.code, 409);
  EXPECT_FALSE(
      store_->get(Resource::Pods, "default", "web")->at("metadata").contains("deletionTimestamp"));
}

TEST_F(GracefulDeleteTest, ABoundFinalizesSoonerAndUpdatesKeepTheDeletion) {
  createPod("web", "n1");
  ASSERT_TRUE(store_->remove(Resource::Pods, "default", "web").ok());
  json p = *store_->get(Resource::Pods, "default", "web");
  p["metadata"].erase("deletionTimestamp");
  p["metadata"]["labels"] = {{"a", "b"}};
  auto updated = store_->update(Resource::Pods, "default", "web", p);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["metadata"]["deletionTimestamp"], "2026-11-30T08:00:30Z");

  clock_.advance(1s);
  EXPECT_EQ(store_->finalizeGracefulDeletions(2s), 0u);
  clock_.advance(1s);
  EXPECT_EQ(store_->finalizeGracefulDeletions(2s), 1u);
  EXPECT_FALSE(exists("web"));
}

TEST_F(GracefulDeleteTest, StatusPatchMergesConditionsByType) {
  createPod("victim", "n1");
  ASSERT_TRUE(
      store_
          ->patch(
              Resource::Pods, "default", "victim", api::PatchType::StrategicMerge,
              {{"status",
                {{"conditions", json::array({{{"type", "PodScheduled"}, {"status", "True"}}})}}}},
              /*statusOnly=*/true)
          .ok());
  auto r =
      store_->patch(Resource::Pods, "default", "victim", api::PatchType::StrategicMerge,
                    {{"status",
                      {{"conditions", json::array({{{"type", "DisruptionTarget"},
                                                    {"status", "True"},
                                                    {"reason", "PreemptionByScheduler"},
                                                    {"message",
                                                     "berth: preempting to accommodate a higher "
                                                     "priority pod"}}})}}}},
                    /*statusOnly=*/true);
  ASSERT_TRUE(r.ok()) << r.error().status.message;
  std::map<std::string, json> byType;
  for (const json& c : (*r)["status"]["conditions"]) byType[c["type"]] = c;
  ASSERT_EQ(byType.size(), 2u);
  EXPECT_EQ(byType["PodScheduled"]["status"], "True");
  EXPECT_EQ(byType["DisruptionTarget"]["reason"], "PreemptionByScheduler");
}

TEST_F(GracefulDeleteTest, PodDisruptionBudgetsAreServedWithAStatus) {
  auto created = store_->create(
      Resource::PodDisruptionBudgets, "default",
      {{"apiVersion", "policy/v1"},
       {"kind", "PodDisruptionBudget"},
       {"metadata", {{"name", "web"}}},
       {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "web"}}}}}}}});
  ASSERT_TRUE(created.ok()) << created.error().status.message;
  EXPECT_EQ((*created)["metadata"]["generation"], 1);
  EXPECT_EQ((*created)["status"]["disruptionsAllowed"], 0);

  json status = *created;
  status["status"]["disruptionsAllowed"] = 1;
  ASSERT_TRUE(store_->updateStatus(Resource::PodDisruptionBudgets, "default", "web", status).ok());
  auto listed = store_->list(Resource::PodDisruptionBudgets, "");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0]["status"]["disruptionsAllowed"], 1);
  EXPECT_EQ(listed->toJson(Resource::PodDisruptionBudgets)["kind"], "PodDisruptionBudgetList");
}

}  // namespace
}  // namespace berth::apiserver
