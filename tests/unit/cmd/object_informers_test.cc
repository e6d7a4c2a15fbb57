// The daemon's ObjectsFeed against the embedded API server: its ClusterObjectStore follows every
// create, update and delete of the kinds plugins read, skips what does not decode, and reports
// namespace and storage changes after the store has them.

#include "cmd/berth/object_informers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"
#include "tests/support/eventually.h"

namespace berth::cmd {
namespace {

using apiserver::Resource;
using json = nlohmann::json;
using test::eventually;
using namespace std::chrono_literals;

class ObjectInformersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = apiserver::Server::start(store_, {});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *std::move(server);
    client::RestConfig config;
    config.server = server_->url();
    config.qps = -1;
    auto rest = client::RestClient::create(config, {});
    ASSERT_TRUE(rest.ok()) << rest.error().message;
    rest_ = *std::move(rest);
  }
  void TearDown() override {
    if (feed_) feed_->stop();
  }

  void startFeed() {
    feed_ = objectInformers(*rest_);
    feed_->onNamespaceUpdate([this](const api::NamespacePtr&, const api::NamespacePtr& newNs) {
      // The store already holds the new namespace when the handler runs.
      auto seen = feed_->objects().getNamespace(newNs->metadata.name);
      std::lock_guard lock(mu_);
      updates_.push_back(newNs->metadata.name + ":" +
                         (seen && seen->metadata.labels.count("team")
                              ? seen->metadata.labels.at("team")
                              : std::string("missing")));
    });
    feed_->start();
    ASSERT_TRUE(feed_->waitForSync(30s));
  }
  std::vector<std::string> updates() {
    std::lock_guard lock(mu_);
    return updates_;
  }

  static json named(const std::string& name, json spec = json::object()) {
    return {{"metadata", {{"name", name}}}, {"spec", std::move(spec)}};
  }

  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
  client::RestClientPtr rest_;
  std::unique_ptr<scheduler::ObjectsFeed> feed_;
  std::mutex mu_;
  std::vector<std::string> updates_;
};

TEST_F(ObjectInformersTest, FirstListFillsTheStoreBeforeItReportsSynced) {
  store_.createSystemNamespaces();
  ASSERT_TRUE(
      store_.create(Resource::Services, "default", named("web", {{"selector", {{"app", "web"}}}}))
          .ok());
  ASSERT_TRUE(store_
                  .create(Resource::ReplicaSets, "default",
                          named("web-1", {{"selector", {{"matchLabels", {{"app", "web"}}}}}}))
                  .ok());
  startFeed();
  const framework::ClusterObjects& objects = feed_->objects();
  EXPECT_EQ(objects.listNamespaces().size(), 4u);
  auto services = objects.listServices("default");
  ASSERT_EQ(services.size(), 1u);
  EXPECT_EQ(services[0]->selector.at("app"), "web");
  auto rs = objects.getReplicaSet("default", "web-1");
  ASSERT_NE(rs, nullptr);
  ASSERT_TRUE(rs->selector.has_value());
}

TEST_F(ObjectInformersTest, StoreFollowsCreatesUpdatesAndDeletesOfEveryKind) {
  startFeed();
  const framework::ClusterObjects& objects = feed_->objects();
  ASSERT_TRUE(store_.create(Resource::Namespaces, "", named("team")).ok());
  ASSERT_TRUE(
      store_.create(Resource::Services, "a", named("svc", {{"selector", {{"app", "x"}}}})).ok());
  ASSERT_TRUE(store_.create(Resource::ReplicaSets, "a", named("rs")).ok());
  ASSERT_TRUE(store_.create(Resource::StatefulSets, "a", named("sts")).ok());
  ASSERT_TRUE(store_
                  .create(Resource::ReplicationControllers, "a",
                          named("rc", {{"selector", {{"app", "x"}}}}))
                  .ok());
  ASSERT_TRUE(store_
                  .create(Resource::PodDisruptionBudgets, "a",
                          named("pdb", {{"selector", {{"matchLabels", {{"app", "x"}}}}}}))
                  .ok());
  ASSERT_TRUE(eventually([&] {
    return objects.getNamespace("team") && objects.listServices("a").size() == 1 &&
           objects.getReplicaSet("a", "rs") && objects.getStatefulSet("a", "sts") &&
           objects.getReplicationController("a", "rc") &&
           objects.listPodDisruptionBudgets("a").size() == 1;
  }));
  json allowed = *store_.get(Resource::PodDisruptionBudgets, "a", "pdb");
  allowed["status"]["disruptionsAllowed"] = 2;
  ASSERT_TRUE(store_.updateStatus(Resource::PodDisruptionBudgets, "a", "pdb", allowed).ok());
  ASSERT_TRUE(eventually([&] {
    auto pdbs = objects.listPodDisruptionBudgets("a");
    return pdbs.size() == 1 && pdbs[0]->disruptionsAllowed == 2;
  }));

  json relabelled = named("svc", {{"selector", {{"app", "y"}}}});
  ASSERT_TRUE(store_.update(Resource::Services, "a", "svc", relabelled).ok());
  ASSERT_TRUE(eventually([&] {
    auto services = objects.listServices("a");
    return services.size() == 1 && services[0]->selector.at("app") == "y";
  }));

  ASSERT_TRUE(store_.remove(Resource::Namespaces, "", "team").ok());
  ASSERT_TRUE(store_.remove(Resource::Services, "a", "svc").ok());
  ASSERT_TRUE(store_.remove(Resource::ReplicaSets, "a", "rs").ok());
  ASSERT_TRUE(store_.remove(Resource::StatefulSets, "a", "sts").ok());
  ASSERT_TRUE(store_.remove(Resource::ReplicationControllers, "a", "rc").ok());
  ASSERT_TRUE(store_.remove(Resource::PodDisruptionBudgets, "a", "pdb").ok());
  EXPECT_TRUE(eventually([&] {
    return !objects.getNamespace("team") && objects.listServices("a").empty() &&
           !objects.getReplicaSet("a", "rs") && !objects.getStatefulSet("a", "sts") &&
           !objects.getReplicationController("a", "rc") &&
           objects.listPodDisruptionBudgets("a").empty();
  }));
}

TEST_F(ObjectInformersTest, AnObjectThatDoesNotDecodeIsSkippedAndTheRestFlows) {
  startFeed();
  const framework::ClusterObjects& objects = feed_->objects();
  // spec.selector of a service is a map of strings.
  ASSERT_TRUE(store_.create(Resource::Services, "a", named("bad", {{"selector", "app=x"}})).ok());
  ASSERT_TRUE(store_.create(Resource::Services, "a", named("good")).ok());
  ASSERT_TRUE(eventually([&] { return objects.listServices("a").size() == 1; }));
  EXPECT_EQ(objects.listServices("a")[0]->metadata.name, "good");
}

TEST_F(ObjectInformersTest, NamespaceUpdatesAreReportedAfterTheStoreHasThem) {
  ASSERT_TRUE(store_.create(Resource::Namespaces, "", named("a")).ok());
  startFeed();
  json labelled = named("a");
  labelled["metadata"]["labels"] = {{"team", "blue"}};
  ASSERT_TRUE(store_.update(Resource::Namespaces, "", "a", labelled).ok());
  ASSERT_TRUE(eventually([&] { return !updates().empty(); }));
  EXPECT_EQ(updates(), std::vector<std::string>{"a:blue"});
}

TEST_F(ObjectInformersTest, StorageKindsFillTheStoreAndReportTheirEventsAfterIt) {
  feed_ = objectInformers(*rest_);
  std::vector<std::string> seen;
  feed_->onStorageEvent([&](const framework::ClusterEvent& event,
                            const framework::EventObjects& objects) {
    std::string line(event.label);
    if (event.resource == framework::EventResource::PersistentVolumeClaim) {
      // The handler runs after the store holds the claim as the event has it.
      auto stored = feed_->objects().getPersistentVolumeClaim("a", "data");
      line += std::string(" old=") + (objects.oldClaim ? objects.oldClaim->spec.volumeName : "-") +
              " new=" + (objects.newClaim ? objects.newClaim->spec.volumeName : "-") +
              " stored=" + (stored ? stored->spec.volumeName : "-");
    } else {
      EXPECT_EQ(objects.oldClaim, nullptr);
      EXPECT_EQ(objects.newClaim, nullptr);
    }
    std::lock_guard lock(mu_);
    seen.push_back(line);
  });
  feed_->start();
  ASSERT_TRUE(feed_->waitForSync(30s));
  const framework::ClusterObjects& objects = feed_->objects();
  const json claim = {{"metadata", {{"name", "data"}}},
                      {"spec",
                       {{"accessModes", {"ReadWriteOnce"}},
                        {"storageClassName", "fast"},
                        {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  ASSERT_TRUE(store_.create(Resource::PersistentVolumeClaims, "a", claim).ok());
  ASSERT_TRUE(store_
                  .create(Resource::PersistentVolumes, "",
                          {{"metadata", {{"name", "pv1"}}},
                           {"spec",
                            {{"capacity", {{"storage", "1Gi"}}},
                             {"accessModes", {"ReadWriteOnce"}},
                             {"storageClassName", "fast"}}}})
                  .ok());
  ASSERT_TRUE(store_
                  .create(Resource::StorageClasses, "",
                          {{"metadata", {{"name", "fast"}}}, {"provisioner", "p.csi"}})
                  .ok());
  ASSERT_TRUE(
      store_
          .create(Resource::CSINodes, "",
                  {{"metadata", {{"name", "n1"}}},
                   {"spec",
                    {{"drivers",
                      {{{"name", "p.csi"}, {"nodeID", "n1"}, {"allocatable", {{"count", 3}}}}}}}}})
          .ok());
  ASSERT_TRUE(store_
                  .create(Resource::CSIDrivers, "",
                          {{"metadata", {{"name", "p.csi"}}}, {"spec", json::object()}})
                  .ok());
  ASSERT_TRUE(
      store_
          .create(
              Resource::CSIStorageCapacities, "a",
              {{"metadata", {{"name", "cap"}}}, {"storageClassName", "fast"}, {"capacity", "10Gi"}})
          .ok());
  ASSERT_TRUE(eventually([&] {
    return objects.getPersistentVolumeClaim("a", "data") && objects.getPersistentVolume("pv1") &&
           objects.getStorageClass("fast") && objects.getCSINode("n1") &&
           objects.getCSIDriver("p.csi") && objects.listCSIStorageCapacities().size() == 1;
  }));
  // As the API server defaulted them.
  EXPECT_EQ(objects.getStorageClass("fast")->volumeBindingMode, "Immediate");
  EXPECT_EQ(objects.getCSIDriver("p.csi")->attachRequired, true);
  EXPECT_EQ(objects.getCSINode("n1")->drivers.at(0).allocatableCount, 3);

  // The claim is bound (as the PV controller would): an update with the claim before and after.
  json bound = *store_.get(Resource::PersistentVolumeClaims, "a", "data");
  bound["spec"]["volumeName"] = "pv1";
  ASSERT_TRUE(store_.update(Resource::PersistentVolumeClaims, "a", "data", bound).ok());
  json relabelled = *store_.get(Resource::StorageClasses, "", "fast");
  relabelled["metadata"]["labels"] = {{"tier", "1"}};
  ASSERT_TRUE(store_.update(Resource::StorageClasses, "", "fast", relabelled).ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mu_);
    return seen.size() == 8;
  }));
  feed_->stop();  // the handler writes to `seen`
  // Each kind has its own informer thread: the order holds within a kind only.
  EXPECT_THAT(seen, ::testing::UnorderedElementsAreArray(std::vector<std::string>{
                        "PersistentVolumeClaimAdd old=- new= stored=",
                        "PersistentVolumeAdd",
                        "StorageClassAdd",
                        "CSINodeAdd",
                        "CSIDriverAdd",
                        "CSIStorageCapacityAdd",
                        "PersistentVolumeClaimUpdate old= new=pv1 stored=pv1",
                        "StorageClassUpdate",
                    }));
  const auto claimAdd =
      std::find(seen.begin(), seen.end(), "PersistentVolumeClaimAdd old=- new= stored=");
  const auto claimUpdate =
      std::find(seen.begin(), seen.end(), "PersistentVolumeClaimUpdate old= new=pv1 stored=pv1");
  EXPECT_LT(claimAdd, claimUpdate);
}

}  // namespace
}  // namespace berth::cmd
