// The namespaces, services, replication controllers, replica sets, stateful sets and config maps
// over HTTP:
// their paths, discovery and delete answers, as kubectl and client libraries see them.

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

class ServerKindsTest : public ::testing::Test {
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

TEST_F(ServerKindsTest, DiscoveryListsTheKindsWithTheirScopeAndShortNames) {
  struct Case {
    std::string groupVersion;  // "/api/v1" or "/apis/apps/v1"
    std::string name;
    bool namespaced;
    std::string kind;
    std::string shortName;
  };
  const Case cases[] = {
      {"/api/v1", "namespaces", false, "Namespace", "ns"},
      {"/api/v1", "persistentvolumeclaims", true, "PersistentVolumeClaim", "pvc"},
      {"/api/v1", "persistentvolumes", false, "PersistentVolume", "pv"},
      {"/api/v1", "services", true, "Service", "svc"},
      {"/api/v1", "replicationcontrollers", true, "ReplicationController", "rc"},
      {"/apis/apps/v1", "replicasets", true, "ReplicaSet", "rs"},
      {"/apis/apps/v1", "statefulsets", true, "StatefulSet", "sts"},
  };
  for (const Case& c : cases) {
    json list = send("GET", c.groupVersion).json();
    std::map<std::string, json> byName;
    for (const json& r : list["resources"]) {
      byName[r["name"]] = r;
    }
    ASSERT_TRUE(byName.count(c.name)) << c.name << " in " << list;
    const json& r = byName[c.name];
    EXPECT_EQ(r["namespaced"], c.namespaced) << c.name;
    EXPECT_EQ(r["kind"], c.kind) << c.name;
    EXPECT_EQ(r["shortNames"], json::array({c.shortName})) << c.name;
    EXPECT_EQ(r["verbs"],
              json::array({"create", "delete", "get", "list", "patch", "update", "watch"}))
        << c.name;
    EXPECT_EQ(byName[c.name + "/status"]["verbs"], json::array({"get", "patch", "update"}))
        << c.name;
  }
  json apps = send("GET", "/apis/apps").json();
  EXPECT_EQ(apps["kind"], "APIGroup");
  EXPECT_EQ(apps["preferredVersion"]["groupVersion"], "apps/v1");
}

TEST_F(ServerKindsTest, NamespacesAreClusterScoped) {
  Response created = send("POST", "/api/v1/namespaces", {{"metadata", {{"name", "team-a"}}}});
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(send("GET", "/api/v1/namespaces/team-a").json()["status"]["phase"], "Active");
  // A namespaced path to a namespace does not exist.
  EXPECT_EQ(send("GET", "/api/v1/namespaces/team-a/namespaces/team-a").code, 404);
  json list = send("GET", "/api/v1/namespaces").json();
  EXPECT_EQ(list["kind"], "NamespaceList");
  ASSERT_EQ(list["items"].size(), 1u);
}

TEST_F(ServerKindsTest, WorkloadsLiveUnderTheirGroupAndListAcrossNamespaces) {
  const json rs = {{"metadata", {{"name", "web"}}},
                   {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}}}};
  ASSERT_EQ(send("POST", "/apis/apps/v1/namespaces/a/replicasets", rs).code, 201);
  ASSERT_EQ(send("POST", "/apis/apps/v1/namespaces/b/replicasets", rs).code, 201);
  EXPECT_EQ(send("POST", "/api/v1/namespaces/a/replicasets", rs).code, 404);
  json all = send("GET", "/apis/apps/v1/replicasets").json();
  EXPECT_EQ(all["kind"], "ReplicaSetList");
  EXPECT_EQ(all["apiVersion"], "apps/v1");
  ASSERT_EQ(all["items"].size(), 2u);
  EXPECT_EQ(all["items"][1]["metadata"]["namespace"], "b");
  Response missing = send("GET", "/apis/apps/v1/namespaces/a/statefulsets/db");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.json()["message"], "statefulsets.apps \"db\" not found");
}

TEST_F(ServerKindsTest, DeleteAnswersAsEachRegistryDoes) {
  ASSERT_EQ(send("POST", "/api/v1/namespaces", {{"metadata", {{"name", "gone"}}}}).code, 201);
  ASSERT_EQ(send("POST", "/api/v1/namespaces/a/services", {{"metadata", {{"name", "svc"}}}}).code,
            201);
  ASSERT_EQ(
      send("POST", "/api/v1/namespaces/a/replicationcontrollers", {{"metadata", {{"name", "rc"}}}})
          .code,
      201);
  // Services and namespaces return the deleted object, the others a Success Status.
  EXPECT_EQ(send("DELETE", "/api/v1/namespaces/gone").json()["kind"], "Namespace");
  EXPECT_EQ(send("DELETE", "/api/v1/namespaces/a/services/svc").json()["kind"], "Service");
  json status = send("DELETE", "/api/v1/namespaces/a/replicationcontrollers/rc").json();
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["details"]["kind"], "replicationcontrollers");

  store_.createSystemNamespaces();
  Response refused = send("DELETE", "/api/v1/namespaces/kube-system");
  EXPECT_EQ(refused.code, 403);
  EXPECT_EQ(refused.json()["reason"], "Forbidden");
}

// core/v1 ConfigMaps, as the serving port reads kube-system/extension-apiserver-authentication:
// no status, metadata.name as the only field selector besides the namespace.
TEST_F(ServerKindsTest, ConfigMapsAreNamespacedWithoutStatus) {
  json discovery = send("GET", "/api/v1").json();
  std::map<std::string, json> byName;
  for (const json& r : discovery["resources"]) byName[r["name"]] = r;
  ASSERT_TRUE(byName.count("configmaps")) << discovery;
  EXPECT_EQ(byName["configmaps"]["kind"], "ConfigMap");
  EXPECT_EQ(byName["configmaps"]["namespaced"], true);
  EXPECT_EQ(byName["configmaps"]["shortNames"], json::array({"cm"}));
  EXPECT_FALSE(byName.count("configmaps/status"));

  const std::string path = "/api/v1/namespaces/kube-system/configmaps";
  const json cm = {{"metadata", {{"name", "extension-apiserver-authentication"}}},
                   {"data", {{"client-ca-file", "pem"}}}};
  ASSERT_EQ(send("POST", path, cm).code, 201);
  ASSERT_EQ(send("POST", path, {{"metadata", {{"name", "other"}}}}).code, 201);
  EXPECT_EQ(send("POST", path, cm).code, 409);
  const json got = send("GET", path + "/extension-apiserver-authentication").json();
  EXPECT_EQ(got["kind"], "ConfigMap");
  EXPECT_EQ(got["data"]["client-ca-file"], "pem");
  EXPECT_FALSE(got.contains("status"));

  json list =
      send("GET", path + "?fieldSelector=metadata.name%3Dextension-apiserver-authentication")
          .json();
  EXPECT_EQ(list["kind"], "ConfigMapList");
  ASSERT_EQ(list["items"].size(), 1u);
  Response badSelector = send("GET", path + "?fieldSelector=data.x%3Dy");
  EXPECT_EQ(badSelector.code, 400);
  EXPECT_EQ(badSelector.json()["message"],
            "\"data.x\" is not a known field selector: only \"metadata.name\", "
            "\"metadata.namespace\"");
  EXPECT_EQ(send("GET", "/api/v1/configmaps").json()["items"].size(), 2u);

  Response patched =
      client_->request("PATCH", path + "/extension-apiserver-authentication",
                       R"({"data":{"requestheader-username-headers":"[\"X-Remote-User\"]"}})",
                       {{"Content-Type", "application/merge-patch+json"}});
  ASSERT_EQ(patched.code, 200) << patched.body;
  EXPECT_EQ(patched.json()["data"].size(), 2u);
  json updated = patched.json();
  updated["data"] = {{"client-ca-file", "new"}};
  Response put = send("PUT", path + "/extension-apiserver-authentication", updated);
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(put.json()["data"], json({{"client-ca-file", "new"}}));

  json status = send("DELETE", path + "/other").json();
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["details"]["kind"], "configmaps");
  EXPECT_EQ(send("GET", path + "/other").code, 404);
}

}  // namespace
}  // namespace berth::apiserver
