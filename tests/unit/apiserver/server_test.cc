#include "pkg/apiserver/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/builders.h"
#include "tests/support/certs.h"
#include "tests/support/eventually.h"
#include "tests/support/test_client.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using test::ClientTls;
using test::eventually;
using test::MakeNode;
using test::Response;
using test::TestClient;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

// A pod without namespace or status: the server fills both in (from the path, and phase Pending),
// which the tests check, and the same body is created in several namespaces.
json pod(const std::string& name, json labels = json::object()) {
  json meta = {{"name", name}};
  if (!labels.empty()) {
    meta["labels"] = std::move(labels);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

class HttpServerTest : public ::testing::Test {
 protected:
  void startServer(ServerOptions options = {}) {
    auto started = Server::start(store_, std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  void SetUp() override { startServer(); }

  Response call(const std::string& method, const std::string& target, const json& body = nullptr,
                const std::map<std::string, std::string>& headers = {}) {
    return client_->request(method, target, body.is_null() ? "" : body.dump(), headers);
  }

  Store store_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<TestClient> client_;
};

// --- Routing, discovery and errors ------------------------------------------------------------

TEST_F(HttpServerTest, ServesHealthVersionAndDiscovery) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    Response r = call("GET", path);
    EXPECT_EQ(r.code, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
  json version = call("GET", "/version").json();
  EXPECT_EQ(version["major"], "1");
  EXPECT_THAT(version["gitVersion"].get<std::string>(), StartsWith("v1.35."));

  json api = call("GET", "/api").json();
  EXPECT_EQ(api["kind"], "APIVersions");
  EXPECT_EQ(api["versions"], json::array({"v1"}));

  json core = call("GET", "/api/v1").json();
  EXPECT_EQ(core["kind"], "APIResourceList");
  std::map<std::string, json> byName;
  for (const json& r : core["resources"]) {
    byName[r["name"]] = r;
  }
  EXPECT_EQ(byName["pods"]["shortNames"], json::array({"po"}));
  EXPECT_EQ(byName["nodes"]["namespaced"], false);
  EXPECT_EQ(byName["events"]["shortNames"], json::array({"ev"}));
  EXPECT_EQ(byName["pods/binding"]["verbs"], json::array({"create"}));
  EXPECT_EQ(byName["pods/status"]["verbs"], json::array({"get", "patch", "update"}));

  json groups = call("GET", "/apis").json();
  ASSERT_EQ(groups["kind"], "APIGroupList");
  std::vector<std::string> names;
  for (const json& g : groups["groups"]) {
    names.push_back(g["name"]);
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("apps", "events.k8s.io", "coordination.k8s.io",
                                                     "policy", "storage.k8s.io"));
  json leases = call("GET", "/apis/coordination.k8s.io/v1").json();
  EXPECT_EQ(leases["groupVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(leases["resources"][0]["name"], "leases");
  EXPECT_EQ(call("GET", "/apis/events.k8s.io").json()["preferredVersion"]["version"], "v1");
}

TEST_F(HttpServerTest, UnservedPathsAndVerbsAnswerGoRestfulStatuses) {
  const json notFound = {{"kind", "Status"},
                         {"apiVersion", "v1"},
                         {"metadata", json::object()},
                         {"status", "Failure"},
                         {"message", "the server could not find the requested resource"},
                         {"reason", "NotFound"},
                         {"details", json::object()},
                         {"code", 404}};
  json notAllowed = notFound;
  notAllowed["message"] = "the server does not allow this method on the requested resource";
  notAllowed["reason"] = "MethodNotAllowed";
  notAllowed["code"] = 405;
  struct Case {
    const char* method;
    const char* path;
    json want;
  };
  const Case cases[] = {
      {"GET", "/api/v1/foos", notFound},
      {"GET", "/api/v2/pods", notFound},
      {"GET", "/apis/apps/v1/deployments", notFound},
      {"GET", "/api/v1/namespaces/default/nodes", notFound},
      {"GET", "/api/v1/pods/web", notFound},
      {"GET", "/api/v1/namespaces/default/pods/web/log", notFound},
      {"GET", "/apis/coordination.k8s.io/v1/namespaces/x/leases/l/status", notFound},
      {"GET", "/nothing/here", notFound},
      {"PUT", "/api/v1/namespaces/default/pods", notAllowed},
      {"POST", "/api/v1/pods", notAllowed},
      {"DELETE", "/api/v1/namespaces/default/pods", notAllowed},
      {"POST", "/api/v1/nodes/n1", notAllowed},
      {"GET", "/api/v1/namespaces/default/pods/web/binding", notAllowed},
      {"DELETE", "/api/v1/nodes/n1/status", notAllowed},
      {"POST", "/version", notAllowed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path);
    Response r = call(c.method, c.path);
    EXPECT_EQ(r.code, c.want["code"]);
    EXPECT_EQ(r.json(), c.want);
    EXPECT_EQ(r.headers["Content-Type"], "application/json");
  }
}

TEST_F(HttpServerTest, CrudAnswersKubeApiserverCodesAndBodies) {
  Response created = call("POST", "/api/v1/namespaces/default/pods", pod("web"));
  ASSERT_EQ(created.code, 201) << created.body;
  json web = created.json();
  EXPECT_EQ(web["metadata"]["namespace"], "default");
  EXPECT_EQ(web["status"]["phase"], "Pending");

  Response again = call("POST", "/api/v1/namespaces/default/pods", pod("web"));
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(again.json()["reason"], "AlreadyExists");
  EXPECT_EQ(again.json()["message"], "pods \"web\" already exists");

  Response got = call("GET", "/api/v1/namespaces/default/pods/web");
  EXPECT_EQ(got.code, 200);
  EXPECT_EQ(got.json(), web);

  Response missing = call("GET", "/api/v1/namespaces/default/pods/nope");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.json()["message"], "pods \"nope\" not found");
  EXPECT_EQ(missing.json()["details"], json({{"name", "nope"}, {"kind", "pods"}}));

  json changed = web;
  changed["metadata"]["labels"] = {{"app", "web"}};
  Response updated = call("PUT", "/api/v1/namespaces/default/pods/web", changed);
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_EQ(updated.json()["metadata"]["labels"]["app"], "web");
  Response stale = call("PUT", "/api/v1/namespaces/default/pods/web", changed);
  EXPECT_EQ(stale.code, 409);
  EXPECT_EQ(stale.json()["reason"], "Conflict");

  json status = updated.json();
  status["status"]["phase"] = "Running";
  Response statusUpdated = call("PUT", "/api/v1/namespaces/default/pods/web/status", status);
  ASSERT_EQ(statusUpdated.code, 200) << statusUpdated.body;
  EXPECT_EQ(statusUpdated.json()["status"]["phase"], "Running");
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/web/status").json()["status"]["phase"],
            "Running");

  Response badRv = call("DELETE", "/api/v1/namespaces/default/pods/web",
                        {{"kind", "DeleteOptions"},
                         {"apiVersion", "v1"},
                         {"preconditions", {{"uid", "not-the-uid"}}}});
  EXPECT_EQ(badRv.code, 409);
  EXPECT_THAT(badRv.json()["message"].get<std::string>(), HasSubstr("Precondition failed: UID"));
  Response deleted = call("DELETE", "/api/v1/namespaces/default/pods/web");
  ASSERT_EQ(deleted.code, 200);
  EXPECT_EQ(deleted.json()["kind"], "Pod");  // pods return the deleted object
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/web").code, 404);

  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  json uid = call("GET", "/api/v1/nodes/n1").json()["metadata"]["uid"];
  Response nodeDeleted = call("DELETE", "/api/v1/nodes/n1");
  EXPECT_EQ(nodeDeleted.code, 200);
  EXPECT_EQ(nodeDeleted.json(),
            json({{"kind", "Status"},
                  {"apiVersion", "v1"},
                  {"metadata", json::object()},
                  {"status", "Success"},
                  {"details", {{"name", "n1"}, {"kind", "nodes"}, {"uid", uid}}}}));
}

TEST_F(HttpServerTest, MalformedBodiesAreBadRequests) {
  Response r = client_->request("POST", "/api/v1/namespaces/default/pods", "{\"metadata\": {");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(r.json()["reason"], "BadRequest");
  EXPECT_THAT(r.json()["message"].get<std::string>(),
              StartsWith("the object provided is unrecognized (must be of type Pod): couldn't get "
                         "version/kind; json parse error: "));
  Response lease = client_->request(
      "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", "not json");
  EXPECT_EQ(lease.code, 400);
  EXPECT_THAT(lease.json()["message"].get<std::string>(), HasSubstr("must be of type Lease"));
  Response options = client_->request("DELETE", "/api/v1/namespaces/default/pods/web", "{oops");
  EXPECT_EQ(options.code, 400);
}

TEST_F(HttpServerTest, PatchesByContentTypeAndRejectsOtherMediaTypes) {
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("web")).code, 201);
  const std::string path = "/api/v1/namespaces/default/pods/web";
  Response merge = call("PATCH", path, {{"metadata", {{"labels", {{"a", "1"}}}}}},
                        {{"Content-Type", "application/merge-patch+json"}});
  ASSERT_EQ(merge.code, 200) << merge.body;
  EXPECT_EQ(merge.json()["metadata"]["labels"]["a"], "1");
  Response jsonPatch = call(
      "PATCH", path, json::array({{{"op", "add"}, {"path", "/metadata/labels/b"}, {"value", "2"}}}),
      {{"Content-Type", "application/json-patch+json"}});
  ASSERT_EQ(jsonPatch.code, 200) << jsonPatch.body;
  EXPECT_EQ(jsonPatch.json()["metadata"]["labels"]["b"], "2");
  Response strategic = call("PATCH", path, {{"metadata", {{"labels", {{"c", "3"}}}}}},
                            {{"Content-Type", "application/strategic-merge-patch+json"}});
  ASSERT_EQ(strategic.code, 200) << strategic.body;
  EXPECT_EQ(strategic.json()["metadata"]["labels"], json({{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  Response status = call("PATCH", path + "/status", {{"status", {{"phase", "Running"}}}},
                         {{"Content-Type", "application/merge-patch+json"}});
  ASSERT_EQ(status.code, 200) << status.body;
  EXPECT_EQ(status.json()["status"]["phase"], "Running");

  Response unsupported =
      call("PATCH", path, {{"metadata", json::object()}}, {{"Content-Type", "text/plain"}});
  EXPECT_EQ(unsupported.code, 415);
  EXPECT_EQ(unsupported.json()["message"],
            "the server responded with the status code 415 but did not return more information");
  Response missing = call("PATCH", "/api/v1/namespaces/default/pods/nope", json::object(),
                          {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(missing.code, 404);
}

TEST_F(HttpServerTest, BindingAnswersCreatedWithSuccessStatus) {
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("web")).code, 201);
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("db")).code, 201);
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "web"}}},
                  {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  Response bound = call("POST", "/api/v1/namespaces/default/pods/web/binding", binding);
  EXPECT_EQ(bound.code, 201);
  EXPECT_EQ(bound.json(), successStatus(201));
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/web").json()["spec"]["nodeName"], "n1");

  Response twice = call("POST", "/api/v1/namespaces/default/pods/web/binding", binding);
  EXPECT_EQ(twice.code, 409);
  EXPECT_EQ(twice.json()["message"],
            "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned "
            "to node \"n1\"");

  binding["metadata"]["name"] = "db";
  Response legacy = call("POST", "/api/v1/namespaces/default/bindings", binding);
  EXPECT_EQ(legacy.code, 201);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/db").json()["spec"]["nodeName"], "n1");
}

TEST_F(HttpServerTest, ListsWithSelectorsAndPages) {
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods",
                   pod(name, {{"tier", std::string(name) == "c" ? "db" : "web"}}))
                  .code,
              201);
  }
  ASSERT_EQ(call("POST", "/api/v1/namespaces/other/pods", pod("d")).code, 201);
  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const json& item : list["items"]) {
      out.push_back(item["metadata"]["name"]);
    }
    return out;
  };
  json all = call("GET", "/api/v1/pods").json();
  EXPECT_EQ(all["kind"], "PodList");
  EXPECT_EQ(names(all), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(names(call("GET", "/api/v1/namespaces/default/pods?labelSelector=tier%3Dweb").json()),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(call("GET", "/api/v1/pods?fieldSelector=metadata.namespace!%3Ddefault").json()),
            (std::vector<std::string>{"d"}));
  Response bad = call("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx");
  EXPECT_EQ(bad.code, 400);
  EXPECT_EQ(bad.json()["message"], "field label not supported: spec.bogus");

  json page = call("GET", "/api/v1/pods?limit=3").json();
  EXPECT_EQ(names(page), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(page["metadata"].contains("continue"));
  json rest = call("GET", "/api/v1/pods?limit=3&continue=" +
                              page["metadata"]["continue"].get<std::string>())
                  .json();
  EXPECT_EQ(names(rest), (std::vector<std::string>{"d"}));
  EXPECT_EQ(call("GET", "/api/v1/pods?limit=x").code, 400);
}

// --- Watches ------------------------------------------------------------------------------------

TEST_F(HttpServerTest, StreamsWatchEventsChunkedOnePerLine) {
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("a")).code, 201);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/namespaces/default/pods?watch=true"), 200);
  EXPECT_EQ(watcher.watchHeaders().at("Transfer-Encoding"), "chunked");
  EXPECT_EQ(watcher.watchHeaders().at("Content-Type"), "application/json");
  auto first = watcher.nextLine();
  ASSERT_TRUE(first);
  json added = json::parse(*first);
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "a");

  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("b")).code, 201);
  ASSERT_EQ(call("DELETE", "/api/v1/namespaces/default/pods/a").code, 200);
  auto second = watcher.nextLine();
  auto third = watcher.nextLine();
  ASSERT_TRUE(second && third);
  EXPECT_EQ(json::parse(*second)["type"], "ADDED");
  EXPECT_EQ(json::parse(*second)["object"]["metadata"]["name"], "b");
  EXPECT_EQ(json::parse(*third)["type"], "DELETED");
  EXPECT_EQ(json::parse(*third)["object"]["metadata"]["name"], "a");
}

// Found by fuzz/apiserver_request_fuzz.cc: a namespace in the path that is not UTF-8 made the
// created pod's JSON throw, which ended the process from the watch's connection thread. Go's
// encoding/json writes such bytes as U+FFFD, and so does the server now. (Such a namespace is
// refused since names are validated; the refusal quotes it.)
TEST_F(HttpServerTest, WritesBytesThatAreNotUtf8AsReplacementCharacters) {
  Response created = call("POST", "/api/v1/namespaces/defau\xd9t/pods", pod("a"));
  EXPECT_EQ(created.code, 422);
  EXPECT_THAT(created.json()["message"].get<std::string>(),
              HasSubstr("metadata.namespace: Invalid value: \"defau\\xd9t\""));
  EXPECT_FALSE(store_.create(Resource::Pods, "default", pod("\xd9")).ok());
  Response missing = call("GET", "/api/v1/namespaces/default/pods/\xff");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.json()["message"], "pods \"\xef\xbf\xbd\" not found");
}

TEST_F(HttpServerTest, WatchesFromResourceVersionAndByName) {
  json a = call("POST", "/api/v1/namespaces/default/pods", pod("a")).json();
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("b")).code, 201);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" +
                              a["metadata"]["resourceVersion"].get<std::string>()),
            200);
  auto line = watcher.nextLine();
  ASSERT_TRUE(line);
  EXPECT_EQ(json::parse(*line)["object"]["metadata"]["name"], "b");

  TestClient byName(server_->port());
  ASSERT_EQ(byName.openWatch("/api/v1/namespaces/default/pods/a?watch=true"), 200);
  auto only = byName.nextLine();
  ASSERT_TRUE(only);
  EXPECT_EQ(json::parse(*only)["object"]["metadata"]["name"], "a");
}

TEST_F(HttpServerTest, EventsSentTogetherAreStillOneChunkEach) {
  // A watch from an old resourceVersion gets its whole replay at once: the server writes the
  // queued events together, each still framed as its own chunk, as kube-apiserver frames them.
  json first = call("POST", "/api/v1/namespaces/default/pods", pod("p0")).json();
  for (int i = 1; i < 20; ++i) {
    ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("p" + std::to_string(i))).code,
              201);
  }
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&"
                              "resourceVersion=" +
                              first["metadata"]["resourceVersion"].get<std::string>()),
            200);
  for (int i = 1; i < 20; ++i) {
    auto line = watcher.nextLine();
    ASSERT_TRUE(line) << i;
    EXPECT_EQ(json::parse(*line)["object"]["metadata"]["name"], "p" + std::to_string(i));
  }
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.ended());
  ASSERT_EQ(watcher.chunks().size(), 20u);  // 19 events and the final chunk
  for (size_t i = 0; i + 1 < watcher.chunks().size(); ++i) {
    const std::string& chunk = watcher.chunks()[i];
    EXPECT_EQ(chunk.find('\n'), chunk.size() - 1) << "chunk " << i << ": " << chunk;
  }
  EXPECT_EQ(watcher.chunks().back(), "");
}

TEST_F(HttpServerTest, SendsBookmarksWhenAllowed) {
  server_.reset();
  ServerOptions options;
  options.bookmarkInterval = 50ms;
  startServer(options);
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/nodes?watch=true&allowWatchBookmarks=true"), 200);
  auto added = watcher.nextLine();
  auto bookmark = watcher.nextLine();
  ASSERT_TRUE(added && bookmark);
  json event = json::parse(*bookmark);
  EXPECT_EQ(event["type"], "BOOKMARK");
  EXPECT_EQ(event["object"]["kind"], "Node");
  EXPECT_EQ(event["object"]["metadata"]["resourceVersion"], store_.resourceVersion());
}

TEST_F(HttpServerTest, TimeoutSecondsEndsTheStreamAndKeepsTheConnection) {
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/nodes?watch=true&timeoutSeconds=1"), 200);
  ASSERT_TRUE(watcher.nextLine());
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.ended());  // the final chunk, not a closed connection
  EXPECT_FALSE(watcher.closedByPeer());
  EXPECT_EQ(watcher.request("GET", "/api/v1/nodes/n1").code, 200);  // same connection
  EXPECT_TRUE(eventually([&] { return server_->activeWatches() == 0; }));
}

TEST_F(HttpServerTest, TooOldResourceVersionIsAnExpiredErrorEvent) {
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n2").json()).code, 201);
  store_.expireHistory();
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/nodes?watch=true&resourceVersion=1"), 200);
  auto line = watcher.nextLine();
  ASSERT_TRUE(line);
  json event = json::parse(*line);
  EXPECT_EQ(event["type"], "ERROR");
  EXPECT_EQ(event["object"]["kind"], "Status");
  EXPECT_EQ(event["object"]["code"], 410);
  EXPECT_EQ(event["object"]["reason"], "Expired");
  EXPECT_EQ(event["object"]["message"], "too old resource version: 1 (2)");
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.ended());

  EXPECT_EQ(call("GET", "/api/v1/nodes?watch=true&resourceVersion=abc").code, 400);
  Response initial = call("GET", "/api/v1/nodes?watch=true&sendInitialEvents=true");
  EXPECT_EQ(initial.code, 422);
  EXPECT_EQ(initial.json()["reason"], "Invalid");
}

TEST_F(HttpServerTest, NoticesAWatchClientThatDisconnects) {
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true"), 200);
  ASSERT_TRUE(eventually([&] { return server_->activeWatches() == 1; }));
  watcher.close();
  EXPECT_TRUE(eventually([&] { return server_->activeWatches() == 0; }, 5s));
}

TEST_F(HttpServerTest, ReusesKeepAliveConnections) {
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  for (int i = 0; i < 5; ++i) {
    Response r = call("GET", "/api/v1/nodes/n1");
    ASSERT_EQ(r.code, 200);
    EXPECT_EQ(r.headers.count("Connection"), 0u);  // HTTP/1.1 keep-alive is implicit
    EXPECT_TRUE(client_->connected());
  }
  // HTTP/1.0 style close is honoured.
  Response closing = call("GET", "/api/v1/nodes/n1", nullptr, {{"Connection", "close"}});
  EXPECT_EQ(closing.code, 200);
  EXPECT_FALSE(client_->connected());
}

TEST_F(HttpServerTest, StopEndsEveryConnection) {
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true"), 200);
  ASSERT_EQ(call("GET", "/healthz").code, 200);  // an idle keep-alive connection
  server_->stop();
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.closedByPeer());
  EXPECT_EQ(call("GET", "/healthz").code, 0);
  EXPECT_NE(TestClient(server_->port()).connect(), "");
}

// --- Authentication -----------------------------------------------------------------------------

class HttpsServerTest : public HttpServerTest {
 protected:
  void SetUp() override {
    pki_ = test::makeTestPki();
    ServerOptions options;
    options.tls =
        TlsOptions{pki_.server.certificatePem, pki_.server.privateKeyPem, pki_.ca.certificatePem};
    options.token = "s3cret";
    startServer(options);
  }
  TestClient client(const test::CertifiedKey* cert = nullptr) {
    ClientTls tls{pki_.ca.certificatePem, "", ""};
    if (cert != nullptr) {
      tls.certificatePem = cert->certificatePem;
      tls.privateKeyPem = cert->privateKeyPem;
    }
    return TestClient(server_->port(), tls);
  }
  test::TestPki pki_;
};

TEST_F(HttpsServerTest, AuthenticatesByTokenOrClientCertificate) {
  EXPECT_THAT(server_->url(), StartsWith("https://127.0.0.1:"));
  TestClient anonymous = client();
  Response none = anonymous.request("GET", "/api/v1/pods");
  EXPECT_EQ(none.code, 401);
  EXPECT_EQ(none.json(), json({{"kind", "Status"},
                               {"apiVersion", "v1"},
                               {"metadata", json::object()},
                               {"status", "Failure"},
                               {"message", "Unauthorized"},
                               {"reason", "Unauthorized"},
                               {"code", 401}}));
  EXPECT_EQ(anonymous.request("GET", "/api/v1/pods", "", {{"Authorization", "Bearer nope"}}).code,
            401);
  EXPECT_EQ(anonymous.request("GET", "/healthz").code, 200);  // public to anonymous users
  EXPECT_EQ(anonymous.request("GET", "/version", "", {{"Authorization", "Bearer nope"}}).code, 401);
  EXPECT_EQ(anonymous.request("GET", "/api/v1/pods", "", {{"Authorization", "Bearer s3cret"}}).code,
            200);

  TestClient withCert = client(&pki_.client);
  ASSERT_EQ(withCert.connect(), "");
  EXPECT_EQ(withCert.request("GET", "/api/v1/pods").code, 200);
  EXPECT_EQ(withCert.openWatch("/api/v1/pods?watch=true"), 200);

  // A certificate from a CA the server does not trust fails the handshake.
  test::CertifiedKey otherCa = test::makeCa("other-ca");
  test::CertifiedKey stranger = test::issueClientCertificate(otherCa, "mallory", "system:masters");
  TestClient rejected = client(&stranger);
  EXPECT_NE(rejected.connect(), "");
}

TEST_F(HttpServerTest, TokenIsRequiredOverPlainHttpWhenConfigured) {
  server_.reset();
  ServerOptions options;
  options.token = "t";
  startServer(options);
  EXPECT_EQ(call("GET", "/api/v1/nodes").code, 401);
  EXPECT_EQ(call("GET", "/api/v1/nodes", nullptr, {{"Authorization", "Bearer t"}}).code, 200);
}

TEST(HttpServer, StartFailsWithAClearError) {
  Store store;
  ServerOptions bad;
  bad.bindAddress = "not-an-ip";
  auto result = Server::start(store, bad);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "invalid bind address \"not-an-ip\"");

  ServerOptions tls;
  tls.tls = TlsOptions{"garbage", "garbage", ""};
  auto noCert = Server::start(store, tls);
  ASSERT_FALSE(noCert.ok());
  EXPECT_THAT(noCert.error().message, StartsWith("invalid TLS serving certificate"));

  auto first = Server::start(store, {});
  ASSERT_TRUE(first.ok());
  ServerOptions taken;
  taken.port = (*first)->port();
  auto second = Server::start(store, taken);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message,
              HasSubstr("listen tcp 127.0.0.1:" + std::to_string(taken.port)));
}

// --- Fault hooks --------------------------------------------------------------------------------

TEST_F(HttpServerTest, FailsTheNextRequestsWithTheGivenCode) {
  server_->failNextRequests(2, 503);
  for (int i = 0; i < 2; ++i) {
    Response r = call("GET", "/api/v1/pods");
    EXPECT_EQ(r.code, 503);
    EXPECT_EQ(r.json()["reason"], "ServiceUnavailable");
  }
  EXPECT_EQ(call("GET", "/api/v1/pods").code, 200);

  server_->failRequestsFor(1h, 500);
  Response r = call("GET", "/api/v1/nodes");
  EXPECT_EQ(r.code, 500);
  EXPECT_EQ(r.json()["reason"], "InternalError");
  EXPECT_EQ(call("GET", "/healthz").code, 500);
  server_->failRequestsFor(0ms, 500);
  EXPECT_EQ(call("GET", "/api/v1/nodes").code, 200);
}

TEST_F(HttpServerTest, ExpiresTheNextWatches) {
  server_->expireNextWatches(1);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true&resourceVersion=0"), 200);
  auto line = watcher.nextLine();
  ASSERT_TRUE(line);
  EXPECT_EQ(json::parse(*line)["type"], "ERROR");
  EXPECT_EQ(json::parse(*line)["object"]["code"], 410);
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.ended());

  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true"), 200);  // the next one is normal
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("a")).code, 201);
  auto added = watcher.nextLine();
  ASSERT_TRUE(added);
  EXPECT_EQ(json::parse(*added)["type"], "ADDED");
}

TEST_F(HttpServerTest, ClosesOpenWatchesCleanly) {
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true"), 200);
  ASSERT_TRUE(eventually([&] { return server_->activeWatches() == 1; }));
  server_->closeWatches();
  EXPECT_FALSE(watcher.nextLine());
  EXPECT_TRUE(watcher.ended());
  EXPECT_EQ(watcher.request("GET", "/healthz").code, 200);
}

TEST_F(HttpServerTest, InjectsAMalformedLineIntoOpenWatches) {
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=true"), 200);
  ASSERT_TRUE(eventually([&] { return server_->activeWatches() == 1; }));
  server_->injectMalformedWatchLine();
  auto line = watcher.nextLine();
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "{\"type\":\"MODIFIED\",\"object\":{");
  EXPECT_TRUE(json::parse(*line, nullptr, false).is_discarded());
}

TEST_F(HttpServerTest, RefusesConnectionsThenListensAgainOnTheSamePort) {
  ASSERT_EQ(call("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  const uint16_t port = server_->port();
  TestClient watcher(port);
  ASSERT_EQ(watcher.openWatch("/api/v1/nodes?watch=true"), 200);
  ASSERT_TRUE(watcher.nextLine());
  server_->refuseConnectionsFor(1500ms);
  EXPECT_FALSE(watcher.nextLine());  // open connections are dropped, as by a restart
  EXPECT_TRUE(watcher.closedByPeer());
  EXPECT_TRUE(eventually([&] { return TestClient(port).connect() != ""; }));
  EXPECT_TRUE(eventually([&] { return TestClient(port).connect().empty(); }));
  EXPECT_EQ(server_->port(), port);
  TestClient after(port);
  EXPECT_EQ(after.request("GET", "/api/v1/nodes/n1").code, 200);  // same store
}

TEST_F(HttpServerTest, DelaysBindings) {
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("web")).code, 201);
  server_->delayBindings(300ms);
  const auto start = std::chrono::steady_clock::now();
  Response r = call("POST", "/api/v1/namespaces/default/pods/web/binding",
                    {{"metadata", {{"name", "web"}}}, {"target", {{"name", "n1"}}}});
  EXPECT_EQ(r.code, 201);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);  // a lower bound cannot flake
}

TEST_F(HttpServerTest, RecordsEveryRequest) {
  server_->clearRequestLog();
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/pods", pod("web")).code, 201);
  ASSERT_EQ(call("GET", "/api/v1/namespaces/default/pods/web/status").code, 200);
  ASSERT_EQ(call("GET", "/api/v1/pods?limit=5").code, 200);
  ASSERT_EQ(call("GET", "/api/v1/nodes/missing").code, 404);
  ASSERT_EQ(call("GET", "/version").code, 200);
  std::vector<RequestRecord> log = server_->requestLog();
  ASSERT_EQ(log.size(), 5u);
  auto row = [](const RequestRecord& r) {
    return r.method + " " + r.verb + " " + r.resource + "/" + r.subresource + " " + r.ns + "/" +
           r.name + " " + std::to_string(r.code);
  };
  EXPECT_EQ(row(log[0]), "POST create pods/ default/ 201");
  EXPECT_EQ(row(log[1]), "GET get pods/status default/web 200");
  EXPECT_EQ(row(log[2]), "GET list pods/ / 200");
  EXPECT_EQ(log[2].query, "limit=5");
  EXPECT_EQ(row(log[3]), "GET get nodes/ /missing 404");
  EXPECT_EQ(row(log[4]), "GET get / / 200");
  EXPECT_EQ(log[4].path, "/version");
  server_->clearRequestLog();
  EXPECT_TRUE(server_->requestLog().empty());
}

}  // namespace
}  // namespace berth::apiserver
