// The storage kinds (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities): their defaults, status handling and validation in the store,
// and their routes over HTTP.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "pkg/apiserver/server.h"
#include "tests/support/test_client.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using test::Response;
using test::TestClient;
using ::testing::HasSubstr;

json claim(const std::string& name) {
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", "fast"},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

json volume(const std::string& name) {
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"capacity", {{"storage", "5Gi"}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", "fast"},
            {"csi", {{"driver", "disk.csi.example.com"}, {"volumeHandle", "vol-1"}}}}}};
}

TEST(StoreStorage, ClaimsAndVolumesStartPendingWithTheServersDefaults) {
  Store store;
  json pvc = claim("data");
  pvc["status"] = {{"phase", "Bound"}};  // a create resets the status
  auto created = store.create(Resource::PersistentVolumeClaims, "default", pvc);
  ASSERT_TRUE(created.ok()) << created.error().status.message;
  EXPECT_EQ((*created)["apiVersion"], "v1");
  EXPECT_EQ((*created)["kind"], "PersistentVolumeClaim");
  EXPECT_EQ((*created)["status"], json({{"phase", "Pending"}}));
  EXPECT_EQ((*created)["spec"]["volumeMode"], "Filesystem");

  auto pv = store.create(Resource::PersistentVolumes, "", volume("pv1"));
  ASSERT_TRUE(pv.ok()) << pv.error().status.message;
  EXPECT_FALSE((*pv)["metadata"].contains("namespace"));
  EXPECT_EQ((*pv)["status"]["phase"], "Pending");
  EXPECT_TRUE((*pv)["status"]["lastPhaseTransitionTime"].is_string());
  EXPECT_EQ((*pv)["spec"]["persistentVolumeReclaimPolicy"], "Retain");
  EXPECT_EQ((*pv)["spec"]["volumeMode"], "Filesystem");

  // A set field is kept.
  json block = volume("pv2");
  block["spec"]["volumeMode"] = "Block";
  block["spec"]["persistentVolumeReclaimPolicy"] = "Delete";
  auto kept = store.create(Resource::PersistentVolumes, "", block);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["spec"]["volumeMode"], "Block");
  EXPECT_EQ((*kept)["spec"]["persistentVolumeReclaimPolicy"], "Delete");
}

TEST(StoreStorage, StorageClassesAndCSIDriversGetTheirDefaults) {
  Store store;
  auto sc =
      store.create(Resource::StorageClasses, "",
                   {{"metadata", {{"name", "fast"}}}, {"provisioner", "disk.csi.example.com"}});
  ASSERT_TRUE(sc.ok()) << sc.error().status.message;
  EXPECT_EQ((*sc)["apiVersion"], "storage.k8s.io/v1");
  EXPECT_EQ((*sc)["reclaimPolicy"], "Delete");
  EXPECT_EQ((*sc)["volumeBindingMode"], "Immediate");
  EXPECT_FALSE(sc->contains("status"));
  auto wffc = store.create(Resource::StorageClasses, "",
                           {{"metadata", {{"name", "local"}}},
                            {"provisioner", "kubernetes.io/no-provisioner"},
                            {"volumeBindingMode", "WaitForFirstConsumer"}});
  ASSERT_TRUE(wffc.ok());
  EXPECT_EQ((*wffc)["volumeBindingMode"], "WaitForFirstConsumer");

  auto driver = store.create(
      Resource::CSIDrivers, "",
      {{"metadata", {{"name", "disk.csi.example.com"}}}, {"spec", {{"attachRequired", false}}}});
  ASSERT_TRUE(driver.ok()) << driver.error().status.message;
  EXPECT_EQ((*driver)["spec"], json({{"attachRequired", false},
                                     {"podInfoOnMount", false},
                                     {"storageCapacity", false},
                                     {"fsGroupPolicy", "ReadWriteOnceWithFSType"},
                                     {"volumeLifecycleModes", {"Persistent"}},
                                     {"requiresRepublish", false},
                                     {"seLinuxMount", false}}));
}

TEST(StoreStorage, UpdateKeepsTheStatusAndTheStatusSubresourceChangesOnlyIt) {
  Store store;
  ASSERT_TRUE(store.create(Resource::PersistentVolumes, "", volume("pv1")).ok());
  auto current = store.get(Resource::PersistentVolumes, "", "pv1");
  ASSERT_TRUE(current.ok());

  json next = *current;
  next["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "data"}};
  next["status"] = {{"phase", "Bound"}};
  next["spec"].erase("volumeMode");  // defaulted again
  auto updated = store.update(Resource::PersistentVolumes, "", "pv1", next);
  ASSERT_TRUE(updated.ok()) << updated.error().status.message;
  EXPECT_EQ((*updated)["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ((*updated)["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ((*updated)["status"]["phase"], "Pending") << "an update keeps the status";

  json status = *updated;
  status["status"] = {{"phase", "Bound"}};
  status["spec"].erase("claimRef");  // a status update keeps the spec
  auto bound = store.updateStatus(Resource::PersistentVolumes, "", "pv1", status);
  ASSERT_TRUE(bound.ok()) << bound.error().status.message;
  EXPECT_EQ((*bound)["status"]["phase"], "Bound");
  EXPECT_EQ((*bound)["spec"]["claimRef"]["name"], "data");
  EXPECT_TRUE((*bound)["status"]["lastPhaseTransitionTime"].is_string())
      << "a phase change is stamped";

  // A stale resourceVersion conflicts.
  next["metadata"]["resourceVersion"] = (*current)["metadata"]["resourceVersion"];
  auto stale = store.update(Resource::PersistentVolumes, "", "pv1", next);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().status.code, 409);
}

TEST(StoreStorage, ObjectsThatDoNotDecodeAreRefusedNamingTheField) {
  Store store;
  json bad = claim("data");
  bad["spec"]["resources"]["requests"]["storage"] = "lots";
  auto refused = store.create(Resource::PersistentVolumeClaims, "default", bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().status.code, 400);
  EXPECT_THAT(refused.error().status.message,
              HasSubstr("PersistentVolumeClaim in version \"v1\" cannot be handled as a "
                        "PersistentVolumeClaim"));
  EXPECT_THAT(refused.error().status.message, HasSubstr("storage"));

  ASSERT_TRUE(store
                  .create(Resource::CSINodes, "",
                          {{"metadata", {{"name", "n1"}}},
                           {"spec",
                            {{"drivers",
                              {{{"name", "disk.csi.example.com"},
                                {"nodeID", "n1"},
                                {"allocatable", {{"count", 2}}}}}}}}})
                  .ok());
  auto node = store.get(Resource::CSINodes, "", "n1");
  ASSERT_TRUE(node.ok());
  json negative = *node;
  negative["spec"]["drivers"][0]["allocatable"]["count"] = "two";
  auto update = store.update(Resource::CSINodes, "", "n1", negative);
  ASSERT_FALSE(update.ok());
  EXPECT_EQ(update.error().status.code, 400);
}

TEST(StoreStorage, CSINodeDriversMergeByName) {
  Store store;
  const json driver = {{"name", "a.csi"}, {"nodeID", "n1"}};
  ASSERT_TRUE(store
                  .create(Resource::CSINodes, "",
                          {{"metadata", {{"name", "n1"}}}, {"spec", {{"drivers", {driver}}}}})
                  .ok());
  auto patched =
      store.patch(Resource::CSINodes, "", "n1", PatchType::StrategicMerge,
                  {{"spec", {{"drivers", {{{"name", "b.csi"}, {"nodeID", "n1"}}}}}}}, false);
  ASSERT_TRUE(patched.ok()) << patched.error().status.message;
  // The patch's drivers first, then the server's others (strategicpatch's element order).
  ASSERT_EQ((*patched)["spec"]["drivers"].size(), 2u);
  EXPECT_EQ((*patched)["spec"]["drivers"][0]["name"], "b.csi");
  EXPECT_EQ((*patched)["spec"]["drivers"][1]["name"], "a.csi");
}

class StorageRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = Server::start(store_, {});
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  Response send(const std::string& method, const std::string& target, const json& body = nullptr) {
    return client_->request(method, target, body.is_null() ? "" : body.dump(), {});
  }

  Store store_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(StorageRoutesTest, EachKindIsServedAtItsPathAndScope) {
  EXPECT_EQ(send("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim("data")).code,
            201);
  EXPECT_EQ(send("POST", "/api/v1/persistentvolumes", volume("pv1")).code, 201);
  EXPECT_EQ(send("POST", "/apis/storage.k8s.io/v1/storageclasses",
                 {{"metadata", {{"name", "fast"}}}, {"provisioner", "p"}})
                .code,
            201);
  EXPECT_EQ(send("POST", "/apis/storage.k8s.io/v1/csidrivers",
                 {{"metadata", {{"name", "p"}}}, {"spec", json::object()}})
                .code,
            201);
  EXPECT_EQ(send("POST", "/apis/storage.k8s.io/v1/csinodes",
                 {{"metadata", {{"name", "n1"}}}, {"spec", {{"drivers", json::array()}}}})
                .code,
            201);
  EXPECT_EQ(
      send("POST", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
           {{"metadata", {{"name", "cap"}}}, {"storageClassName", "fast"}, {"capacity", "10Gi"}})
          .code,
      201);

  // Claims list across namespaces; a volume has no namespaced route.
  json claims = send("GET", "/api/v1/persistentvolumeclaims").json();
  EXPECT_EQ(claims["kind"], "PersistentVolumeClaimList");
  EXPECT_EQ(claims["items"].size(), 1u);
  EXPECT_EQ(send("GET", "/api/v1/namespaces/default/persistentvolumes/pv1").code, 404);
  EXPECT_EQ(send("GET", "/apis/storage.k8s.io/v1/storageclasses/fast").code, 200);
  EXPECT_EQ(send("GET", "/apis/storage.k8s.io/v1/csistoragecapacities").json()["kind"],
            "CSIStorageCapacityList");

  // Claims and volumes have a status subresource; the storage.k8s.io kinds none.
  json pvc = send("GET", "/api/v1/namespaces/default/persistentvolumeclaims/data").json();
  pvc["status"] = {{"phase", "Bound"}};
  Response status =
      send("PUT", "/api/v1/namespaces/default/persistentvolumeclaims/data/status", pvc);
  EXPECT_EQ(status.code, 200) << status.body;
  EXPECT_EQ(status.json()["status"]["phase"], "Bound");
  EXPECT_EQ(send("GET", "/apis/storage.k8s.io/v1/storageclasses/fast/status").code, 404);

  // A storage.k8s.io kind has no field labels of its own.
  Response selector =
      send("GET", "/apis/storage.k8s.io/v1/storageclasses?fieldSelector=provisioner%3Dp");
  EXPECT_EQ(selector.code, 400);
  EXPECT_THAT(selector.json()["message"].get<std::string>(),
              HasSubstr("\"provisioner\" is not a known field selector"));

  // Deleting a claim or a StorageClass answers the deleted object (ReturnDeletedObject); a
  // CSIStorageCapacity a Success status.
  EXPECT_EQ(send("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data").json()["kind"],
            "PersistentVolumeClaim");
  EXPECT_EQ(send("DELETE", "/apis/storage.k8s.io/v1/storageclasses/fast").json()["kind"],
            "StorageClass");
  json success =
      send("DELETE", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities/cap").json();
  EXPECT_EQ(success["kind"], "Status");
  EXPECT_EQ(success["details"]["kind"], "csistoragecapacities");

  // Discovery: the group, and each kind with its scope.
  std::map<std::string, json> byName;
  const json storage = send("GET", "/apis/storage.k8s.io/v1").json();
  for (const json& r : storage["resources"]) {
    byName[r["name"]] = r;
  }
  EXPECT_EQ(byName["storageclasses"]["shortNames"], json::array({"sc"}));
  EXPECT_EQ(byName["storageclasses"]["namespaced"], false);
  EXPECT_EQ(byName["csistoragecapacities"]["namespaced"], true);
  EXPECT_EQ(byName["csinodes"]["kind"], "CSINode");
  EXPECT_EQ(byName["csidrivers"]["kind"], "CSIDriver");
  EXPECT_EQ(send("GET", "/apis/storage.k8s.io").json()["preferredVersion"]["groupVersion"],
            "storage.k8s.io/v1");
}

}  // namespace
}  // namespace berth::apiserver
