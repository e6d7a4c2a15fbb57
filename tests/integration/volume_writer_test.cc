// The REST VolumeWriter (cmd/berth/rest_adapters.h) against the embedded API server:
// VolumeBinding's PreBind UPDATEs of a PersistentVolume's claimRef and annotations and of a claim's
// annotations, conditional on the resourceVersion the plugin read, keeping every field berth does
// not decode.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd/berth/rest_adapters.h"
#include "pkg/api/decode.h"
#include "tests/support/api_server_fixture.h"

namespace berth {
namespace {

using apiserver::Resource;
using json = nlohmann::json;
using ::testing::HasSubstr;

class VolumeWriterTest : public test::ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(startServer());
    client::RestConfig config;
    config.server = server_->url();
    config.qps = -1;
    auto rest = client::RestClient::create(config, {});
    ASSERT_TRUE(rest.ok()) << rest.error().message;
    rest_ = *std::move(rest);
    writer_ = std::make_unique<cmd::RestVolumeWriter>(*rest_);
  }

  // The object as the plugin would have it: decoded from the server's copy.
  api::PersistentVolume readVolume(const std::string& name) {
    auto decoded = api::decodePersistentVolume(*store_.get(Resource::PersistentVolumes, "", name));
    EXPECT_TRUE(decoded.ok()) << decoded.error().message;
    return decoded.ok() ? *decoded : api::PersistentVolume{};
  }
  api::PersistentVolumeClaim readClaim(const std::string& name) {
    auto decoded = api::decodePersistentVolumeClaim(
        *store_.get(Resource::PersistentVolumeClaims, "default", name));
    EXPECT_TRUE(decoded.ok()) << decoded.error().message;
    return decoded.ok() ? *decoded : api::PersistentVolumeClaim{};
  }

  client::RestClientPtr rest_;
  std::unique_ptr<cmd::RestVolumeWriter> writer_;
};

// A local PV with fields berth does not decode (mountOptions, local).
json volume() {
  return json::parse(R"({
    "metadata": {"name": "pv1", "labels": {"topology.kubernetes.io/zone": "a"}},
    "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
             "storageClassName": "local", "mountOptions": ["noatime"],
             "local": {"path": "/mnt/disk1"},
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
               {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}})");
}

// A claim with a field berth does not decode (dataSourceRef).
json claim() {
  return json::parse(R"({
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
             "dataSourceRef": {"kind": "VolumeSnapshot", "name": "snap"},
             "resources": {"requests": {"storage": "1Gi"}}}})");
}

TEST_F(VolumeWriterTest, UpdatesAVolumesClaimRefAndAnnotationsKeepingTheRest) {
  create(Resource::PersistentVolumes, volume());
  api::PersistentVolume pv = readVolume("pv1");
  api::ObjectReference ref;
  ref.kind = "PersistentVolumeClaim";
  ref.namespace_ = "default";
  ref.name = "data";
  ref.uid = "u-1";
  pv.spec.claimRef = ref;
  pv.metadata.annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
  framework::Status status = writer_->updatePersistentVolume(pv);
  ASSERT_TRUE(status.isSuccess()) << status.message();

  json stored = *store_.get(Resource::PersistentVolumes, "", "pv1");
  EXPECT_EQ(stored["spec"]["claimRef"], json({{"kind", "PersistentVolumeClaim"},
                                              {"namespace", "default"},
                                              {"name", "data"},
                                              {"uid", "u-1"}}));
  EXPECT_EQ(stored["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"], "yes");
  EXPECT_EQ(stored["spec"]["mountOptions"], json({"noatime"}));
  EXPECT_EQ(stored["spec"]["local"]["path"], "/mnt/disk1");
  EXPECT_EQ(stored["metadata"]["labels"]["topology.kubernetes.io/zone"], "a");
  EXPECT_NE(stored["metadata"]["resourceVersion"], pv.metadata.resourceVersion);

  // Clearing the claimRef (Unreserve's revert) removes it.
  api::PersistentVolume cleared = readVolume("pv1");
  cleared.spec.claimRef.reset();
  ASSERT_TRUE(writer_->updatePersistentVolume(cleared).isSuccess());
  EXPECT_FALSE((*store_.get(Resource::PersistentVolumes, "", "pv1"))["spec"].contains("claimRef"));
}

TEST_F(VolumeWriterTest, UpdatesAClaimsAnnotationsKeepingTheRest) {
  create(Resource::PersistentVolumeClaims, claim());
  api::PersistentVolumeClaim pvc = readClaim("data");
  pvc.metadata.annotations["volume.kubernetes.io/selected-node"] = "n1";
  pvc.spec.volumeName = "ignored";  // only the annotations are the writer's
  framework::Status status = writer_->updatePersistentVolumeClaim(pvc);
  ASSERT_TRUE(status.isSuccess()) << status.message();
  json stored = *store_.get(Resource::PersistentVolumeClaims, "default", "data");
  EXPECT_EQ(stored["metadata"]["annotations"]["volume.kubernetes.io/selected-node"], "n1");
  EXPECT_EQ(stored["spec"]["dataSourceRef"]["name"], "snap");
  EXPECT_FALSE(stored["spec"].contains("volumeName"));
  EXPECT_EQ(stored["status"]["phase"], "Pending");
}

TEST_F(VolumeWriterTest, AStaleResourceVersionIsAConflictAndWritesNothing) {
  create(Resource::PersistentVolumeClaims, claim());
  api::PersistentVolumeClaim stale = readClaim("data");
  // Someone else writes the claim after the plugin read it.
  json other = *store_.get(Resource::PersistentVolumeClaims, "default", "data");
  other["metadata"]["labels"] = {{"by", "other"}};
  ASSERT_TRUE(store_.update(Resource::PersistentVolumeClaims, "default", "data", other).ok());

  stale.metadata.annotations["volume.kubernetes.io/selected-node"] = "n1";
  framework::Status status = writer_->updatePersistentVolumeClaim(stale);
  ASSERT_FALSE(status.isSuccess());
  EXPECT_THAT(status.message(),
              HasSubstr("Operation cannot be fulfilled on persistentvolumeclaims \"data\": the "
                        "object has been modified"));
  json stored = *store_.get(Resource::PersistentVolumeClaims, "default", "data");
  EXPECT_FALSE(stored["metadata"].contains("annotations"));
  EXPECT_EQ(stored["metadata"]["labels"]["by"], "other");
}

TEST_F(VolumeWriterTest, AMissingObjectIsAnErrorNamingIt) {
  api::PersistentVolume pv;
  pv.metadata.name = "gone";
  framework::Status status = writer_->updatePersistentVolume(pv);
  ASSERT_FALSE(status.isSuccess());
  EXPECT_THAT(status.message(), HasSubstr("\"gone\" not found"));
}

}  // namespace
}  // namespace berth
