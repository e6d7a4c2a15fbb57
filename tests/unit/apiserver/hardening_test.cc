// The embedded API server against hostile or careless clients (reliability probe 2, issue 21):
// deep JSON, silent and idle connections, connection floods, stalled watchers, future
// resourceVersions, updates that would bind a pod, invalid names, long headers and the bearer
// scheme's case.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/token_file.h"
#include "tests/support/builders.h"
#include "tests/support/eventually.h"
#include "tests/support/test_client.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using test::eventually;
using test::MakeNode;
using test::Response;
using test::TestClient;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

json namedPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

// A plain socket for what TestClient will not do: stay silent, dribble, read raw bytes.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  bool send(std::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads what arrives until the peer closes or `limit` passes; true when it closed.
  bool readUntilClosed(std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
      received_.append(buf, static_cast<size_t>(n));
    }
    return false;
  }
  // Reads until `text` has arrived (or the peer closes, or `limit` passes).
  bool readUntil(std::string_view text, std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[65536];
    while (received_.find(text) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_.find(text) != std::string::npos;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_;
  bool connected_ = false;
  std::string received_;
};

class HardeningTest : public ::testing::Test {
 protected:
  void startServer(ServerOptions options = {}) {
    server_.reset();
    auto started = Server::start(store_, std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  void SetUp() override { startServer(); }

  Response call(const std::string& method, const std::string& target, const std::string& body = "",
                const std::map<std::string, std::string>& headers = {}) {
    return client_->request(method, target, body, headers);
  }
  Response callJson(const std::string& method, const std::string& target, const json& body,
                    const std::map<std::string, std::string>& headers = {}) {
    return client_->request(method, target, body.dump(), headers);
  }

  Store store_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<TestClient> client_;
};

// --- R3: deep JSON ------------------------------------------------------------------------------

TEST_F(HardeningTest, DeepJsonIsRefusedOnEveryWritePathAndTheServerLives) {
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("web")).code, 201);
  constexpr int kDepth = 100000;
  const std::string deep = std::string(kDepth, '[') + std::string(kDepth, ']');
  const std::string deepPod =
      R"({"metadata":{"name":"deep"},"spec":{"containers":[{"name":"c","image":"x"}]},"x":)" +
      deep + "}";
  struct Case {
    const char* name;
    const char* method;
    std::string path;
    std::string contentType;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"create", "POST", "/api/v1/namespaces/default/pods", "application/json", deepPod},
      {"update", "PUT", "/api/v1/namespaces/default/pods/web", "application/json", deepPod},
      {"merge patch", "PATCH", "/api/v1/namespaces/default/pods/web",
       "application/merge-patch+json", R"({"x":)" + deep + "}"},
      {"strategic merge patch", "PATCH", "/api/v1/namespaces/default/pods/web",
       "application/strategic-merge-patch+json", R"({"x":)" + deep + "}"},
      {"JSON patch", "PATCH", "/api/v1/namespaces/default/pods/web", "application/json-patch+json",
       R"([{"op":"add","path":"/x","value":)" + deep + "}]"},
      {"lease", "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
       "application/json", R"({"metadata":{"name":"l"},"spec":{"x":)" + deep + "}}"},
      {"binding", "POST", "/api/v1/namespaces/default/pods/web/binding", "application/json",
       R"({"metadata":{"name":"web"},"target":{"kind":"Node","name":"n1"},"x":)" + deep + "}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Response r = call(c.method, c.path, c.body, {{"Content-Type", c.contentType}});
    EXPECT_EQ(r.code, 400);
    EXPECT_THAT(r.body, HasSubstr("exceeded max depth"));
    ASSERT_EQ(call("GET", "/healthz").code, 200) << "the server is alive";
  }
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/deep").code, 404);
}

// --- R4: timeouts and the connection bound -----------------------------------------------------

TEST_F(HardeningTest, ASilentConnectionIsClosedAtTheHeaderTimeout) {
  ServerOptions options;
  options.headerTimeout = 300ms;
  startServer(options);
  RawConnection silent(server_->port());
  ASSERT_TRUE(silent.connected());
  EXPECT_TRUE(silent.readUntilClosed());
  EXPECT_EQ(silent.received(), "");
}

TEST_F(HardeningTest, HeadersSentByteByByteAreCutOffAtTheHeaderTimeout) {
  ServerOptions options;
  options.headerTimeout = 500ms;
  options.idleTimeout = 60s;
  startServer(options);
  RawConnection slow(server_->port());
  ASSERT_TRUE(slow.connected());
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(200, 'a') + "\r\n\r\n";
  bool cut = false;
  for (char c : request) {
    if (!slow.send(std::string_view(&c, 1))) {
      cut = true;
      break;
    }
    std::this_thread::sleep_for(20ms);  // about 120 ms a byte: far beyond the timeout
    if (slow.readUntilClosed(1ms)) {
      cut = true;
      break;
    }
  }
  EXPECT_TRUE(cut) << "the server waited for the whole request";
  EXPECT_THAT(slow.received(), ::testing::Not(HasSubstr("200 OK")));
}

TEST_F(HardeningTest, AnIdleKeepAliveConnectionIsClosedAtTheIdleTimeout) {
  ServerOptions options;
  options.idleTimeout = 300ms;
  startServer(options);
  RawConnection keepAlive(server_->port());
  ASSERT_TRUE(keepAlive.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(keepAlive.readUntil("\r\n\r\nok"));
  EXPECT_TRUE(keepAlive.readUntilClosed());
}

TEST_F(HardeningTest, AWatchOutlivesTheIdleAndHeaderTimeouts) {
  ServerOptions options;
  options.headerTimeout = 200ms;
  options.idleTimeout = 200ms;
  startServer(options);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/namespaces/default/pods?watch=true"), 200);
  std::this_thread::sleep_for(1s);  // several timeouts' worth of silence on the stream
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("late")).code, 201);
  auto line = watcher.nextLine();
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line, HasSubstr("\"late\""));
}

TEST_F(HardeningTest, ConnectionsBeyondTheBoundAreAnsweredTooManyRequests) {
  ServerOptions options;
  options.maxConnections = 2;
  startServer(options);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(held.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_TRUE(held.back()->readUntil("\r\n\r\nok")) << "held connection " << i << " is served";
  }
  RawConnection extra(server_->port());
  ASSERT_TRUE(extra.readUntilClosed());
  EXPECT_THAT(extra.received(), StartsWith("HTTP/1.1 429 Too Many Requests\r\n"));
  EXPECT_THAT(extra.received(), HasSubstr("Retry-After: 1\r\n"));
  EXPECT_THAT(extra.received(), HasSubstr(R"("reason":"TooManyRequests")"));
  held.pop_back();  // a slot frees once that connection ends
  EXPECT_TRUE(eventually(
      [&] { return TestClient(server_->port()).request("GET", "/healthz").code == 200; }));
}

// --- R9: shared events, stalled watchers ---------------------------------------------------------

TEST(WatchSharing, EveryWatcherHoldsTheSameEventObject) {
  Store store;
  auto a = store.watch(Resource::Nodes, "", {});
  auto b = store.watch(Resource::Nodes, "", {});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(store.create(Resource::Nodes, "", MakeNode().name("n1").json()).ok());
  auto ea = (*a)->nextShared(1s);
  auto eb = (*b)->nextShared(1s);
  ASSERT_TRUE(ea && eb);
  EXPECT_EQ(ea->object.get(), eb->object.get()) << "one object per write, not a copy per watcher";
  EXPECT_EQ(ea->line(), toJsonText(WatchEvent{ea->type, *ea->object}.toJson()));
}

TEST(WatchSharing, TheInitialStateDoesNotCountTowardsTheStallBound) {
  StoreOptions options;
  options.watchQueueLimit = 2;
  Store store(options);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        store.create(Resource::Nodes, "", MakeNode().name("n" + std::to_string(i)).json()).ok());
  }
  auto w = store.watch(Resource::Nodes, "", {});
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE((*w)->closed()) << "five ADDED events of the initial state";
  ASSERT_TRUE(store.create(Resource::Nodes, "", MakeNode().name("x1").json()).ok());
  ASSERT_TRUE(store.create(Resource::Nodes, "", MakeNode().name("x2").json()).ok());
  EXPECT_FALSE((*w)->closed());
  ASSERT_TRUE(store.create(Resource::Nodes, "", MakeNode().name("x3").json()).ok());
  EXPECT_TRUE((*w)->closed()) << "three writes behind a bound of two";
  EXPECT_EQ((*w)->drain().size(), 7u);
}

TEST(WatchSharing, AStalledWatcherIsClosedWhileAReaderKeepsUp) {
  StoreOptions options;
  options.watchQueueLimit = 100;
  Store store(options);
  auto stalled = store.watch(Resource::Pods, "", {});
  auto reader = store.watch(Resource::Pods, "", {});
  ASSERT_TRUE(stalled.ok() && reader.ok());
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(store.create(Resource::Pods, "default", namedPod("p" + std::to_string(i))).ok());
    static_cast<void>((*reader)->drainShared());
  }
  EXPECT_TRUE((*stalled)->closed());
  EXPECT_EQ((*stalled)->drainShared().size(), 100u) << "memory stays bounded by the limit";
  EXPECT_FALSE((*reader)->closed());
}

// --- R19a: future resourceVersions ---------------------------------------------------------------

const json kTooLarge = json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
  "status":"Failure","message":"Timeout: Too large resource version: 999999999, current: 1",
  "reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge",
  "message":"Too large resource version"}],"retryAfterSeconds":1},"code":504})");

TEST_F(HardeningTest, AWatchFromAFutureResourceVersionEndsWithTooLargeResourceVersion) {
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("web")).code, 201);
  TestClient watcher(server_->port());
  ASSERT_EQ(watcher.openWatch("/api/v1/pods?watch=1&resourceVersion=999999999"), 200);
  auto line = watcher.nextLine();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(json::parse(*line), json({{"type", "ERROR"}, {"object", kTooLarge}}));
  EXPECT_FALSE(watcher.nextLine().has_value());
  EXPECT_TRUE(watcher.ended());
}

TEST_F(HardeningTest, AWatchFromTheNextResourceVersionWaitsForIt) {
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("web")).code, 201);
  const std::string next = std::to_string(std::stoull(store_.resourceVersion()) + 1);
  std::thread writer([&] {
    std::this_thread::sleep_for(200ms);
    // The watch starts after the first of these: it sees the second.
    ASSERT_TRUE(store_.create(Resource::Pods, "default", namedPod("reached")).ok());
    ASSERT_TRUE(store_.create(Resource::Pods, "default", namedPod("later")).ok());
  });
  TestClient watcher(server_->port());
  EXPECT_EQ(watcher.openWatch("/api/v1/pods?watch=1&resourceVersion=" + next), 200);
  writer.join();
  auto line = watcher.nextLine();
  ASSERT_TRUE(line.has_value());
  const json event = json::parse(*line);
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["object"]["metadata"]["name"], "later");
}

TEST_F(HardeningTest, ListHonoursResourceVersionAndResourceVersionMatch) {
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("a")).code, 201);
  const std::string first = store_.resourceVersion();
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("b")).code, 201);
  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const json& item : list["items"]) out.push_back(item["metadata"]["name"]);
    return out;
  };
  for (const char* rv : {"", "0", "1", "2"}) {
    Response r = call("GET", std::string("/api/v1/pods?resourceVersion=") + rv);
    ASSERT_EQ(r.code, 200) << rv;
    EXPECT_EQ(names(r.json()), (std::vector<std::string>{"a", "b"})) << rv;
    EXPECT_EQ(r.json()["metadata"]["resourceVersion"], "2") << rv;
  }
  Response exact =
      call("GET", "/api/v1/pods?resourceVersion=" + first + "&resourceVersionMatch=Exact");
  ASSERT_EQ(exact.code, 200);
  EXPECT_EQ(names(exact.json()), std::vector<std::string>{"a"});
  EXPECT_EQ(exact.json()["metadata"]["resourceVersion"], first);

  json tooLarge = kTooLarge;
  tooLarge["message"] = "Timeout: Too large resource version: 999999999, current: 2";
  Response future = call("GET", "/api/v1/pods?resourceVersion=999999999");
  EXPECT_EQ(future.code, 504);
  EXPECT_EQ(future.json(), tooLarge);

  store_.expireHistory();
  Response old = call("GET", "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact");
  EXPECT_EQ(old.code, 410);
  EXPECT_EQ(old.json()["message"], "The resourceVersion for the provided list is too old.");

  struct Invalid {
    std::string query;
    std::string message;
  };
  for (const Invalid& c : std::vector<Invalid>{
           {"resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden unless resourceVersion is provided"},
           {"resourceVersion=0&resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""},
           {"resourceVersion=1&resourceVersionMatch=Newest",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: "
            "\"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""},
           {"watch=1&resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden for watch"},
       }) {
    Response r = call("GET", "/api/v1/pods?" + c.query);
    EXPECT_EQ(r.code, 422) << c.query;
    EXPECT_EQ(r.json()["message"], c.message) << c.query;
  }
}

// --- R19b: pod updates -------------------------------------------------------------------------

TEST_F(HardeningTest, PodUpdatesCannotBindOrGutThePod) {
  ASSERT_EQ(callJson("POST", "/api/v1/nodes", MakeNode().name("n1").json()).code, 201);
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("web")).code, 201);
  const std::string path = "/api/v1/namespaces/default/pods/web";
  const std::string forbidden =
      "Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than "
      "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
      "`spec.tolerations` (only additions to existing tolerations),"
      "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
      "negative)";
  const std::string containers =
      "Pod \"web\" is invalid: spec.containers: Forbidden: pod updates may not add or remove "
      "containers";
  struct Case {
    const char* name;
    const char* method;
    std::string contentType;
    std::string body;
    int code;
    std::string message;
  };
  json put = *store_.get(Resource::Pods, "default", "web");
  put["spec"]["nodeName"] = "n1";
  const std::vector<Case> cases = {
      {"merge patch of nodeName", "PATCH", "application/merge-patch+json",
       R"({"spec":{"nodeName":"n1"}})", 422, forbidden},
      {"put with nodeName", "PUT", "application/json", put.dump(), 422, forbidden},
      {"remove /spec", "PATCH", "application/json-patch+json",
       R"([{"op":"remove","path":"/spec"}])", 422, containers},
      {"containers replaced by nothing", "PATCH", "application/strategic-merge-patch+json",
       R"({"spec":{"containers":[{"$patch":"replace"}]}})", 422, containers},
      {"add under a string", "PATCH", "application/json-patch+json",
       R"([{"op":"add","path":"/metadata/name/x","value":1}])", 422, ""},
      {"a new image", "PATCH", "application/strategic-merge-patch+json",
       R"({"spec":{"containers":[{"name":"c","image":"busybox:2"}]}})", 200, ""},
      {"a new toleration", "PATCH", "application/merge-patch+json",
       R"({"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}})", 200, ""},
      {"labels", "PATCH", "application/merge-patch+json", R"({"metadata":{"labels":{"a":"b"}}})",
       200, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Response r = call(c.method, path, c.body, {{"Content-Type", c.contentType}});
    EXPECT_EQ(r.code, c.code) << r.body;
    if (c.code == 422 && !c.message.empty()) {
      EXPECT_EQ(r.json()["message"], c.message);
      EXPECT_EQ(r.json()["reason"], "Invalid");
    }
  }
  json stored = *store_.get(Resource::Pods, "default", "web");
  EXPECT_FALSE(stored["spec"].contains("nodeName")) << "still unbound";
  EXPECT_EQ(stored["spec"]["containers"][0]["image"], "busybox:2");
  EXPECT_EQ(callJson("POST", path + "/binding",
                     json{{"metadata", {{"name", "web"}}},
                          {"target", {{"kind", "Node"}, {"name", "n1"}}}})
                .code,
            201)
      << "a Binding still binds";
  EXPECT_EQ((*store_.get(Resource::Pods, "default", "web"))["spec"]["nodeName"], "n1");
}

// --- R19c: names, namespaces, paths --------------------------------------------------------------

TEST_F(HardeningTest, NamesAndNamespacesAreValidatedAsKubeApiserverDoes) {
  const std::string subdomain =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
      "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
      "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  const std::string label =
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
      "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
      "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  Response traversal =
      callJson("POST", "/api/v1/namespaces/default/pods", namedPod("../../etc/passwd"));
  EXPECT_EQ(traversal.code, 422);
  EXPECT_EQ(traversal.json()["message"],
            "Pod \"../../etc/passwd\" is invalid: metadata.name: Invalid value: "
            "\"../../etc/passwd\": " +
                subdomain);
  EXPECT_EQ(traversal.json()["details"]["causes"][0]["field"], "metadata.name");

  Response escape = callJson("POST", "/api/v1/namespaces/default/pods", namedPod("evil\n\x1b[31m"));
  EXPECT_EQ(escape.code, 422);
  EXPECT_THAT(escape.json()["message"].get<std::string>(), HasSubstr(R"("evil\n\x1b[31m")"));

  Response longName =
      callJson("POST", "/api/v1/namespaces/default/pods", namedPod(std::string(10000, 'x')));
  EXPECT_EQ(longName.code, 422);
  EXPECT_THAT(longName.json()["message"].get<std::string>(),
              HasSubstr("must be no more than 253 characters"));

  Response upper = callJson("POST", "/api/v1/namespaces/UPPER/pods", namedPod("web"));
  EXPECT_EQ(upper.code, 422);
  EXPECT_EQ(upper.json()["message"],
            "Pod \"web\" is invalid: metadata.namespace: Invalid value: \"UPPER\": " + label);

  Response dotted = callJson("POST", "/api/v1/namespaces", json{{"metadata", {{"name", "a.b"}}}});
  EXPECT_EQ(dotted.code, 422);
  EXPECT_EQ(dotted.json()["message"],
            "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain "
            "dots");

  Response service = callJson("POST", "/api/v1/namespaces/default/services",
                              json{{"metadata", {{"name", "1web"}}}, {"spec", json::object()}});
  EXPECT_EQ(service.code, 422);
  EXPECT_THAT(service.json()["message"].get<std::string>(),
              HasSubstr("a DNS-1035 label must consist of lower case alphanumeric characters"));

  EXPECT_EQ((*store_.list(Resource::Pods, "")).items.size(), 0u) << "nothing was stored";
  ASSERT_EQ(callJson("POST", "/api/v1/namespaces/default/pods", namedPod("web.v1-a")).code, 201);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/%77eb.v1-a").code, 200)
      << "the path is percent-decoded";
}

// --- R19d, R19e: headers ------------------------------------------------------------------------

TEST_F(HardeningTest, HeadersUpToOneMebibyteAreReadAndLongerOnesAnswered431) {
  std::string selector = "app%20in%20(";
  for (int i = 0; i < 1500; ++i)
    selector += (i ? "%2C" : "") + std::string("v") + std::to_string(i);
  selector += ")";
  ASSERT_GT(selector.size(), 9000u);
  Response r = call("GET", "/api/v1/pods?labelSelector=" + selector);
  EXPECT_EQ(r.code, 200) << r.body;

  RawConnection huge(server_->port());
  ASSERT_TRUE(huge.send(
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1100 * 1024, 'a') + "\r\n\r\n"));
  ASSERT_TRUE(huge.readUntilClosed());
  EXPECT_EQ(huge.received(),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; "
            "charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large");
  EXPECT_EQ(call("GET", "/healthz").code, 200);
}

TEST_F(HardeningTest, TheBearerSchemeIsMatchedCaseInsensitively) {
  ServerOptions options;
  options.token = "s3cret";
  options.tokens = {"from-file"};
  startServer(options);
  struct Case {
    std::string header;
    int code;
  };
  for (const Case& c : std::vector<Case>{{"Bearer s3cret", 200},
                                         {"bearer s3cret", 200},
                                         {"BEARER s3cret", 200},
                                         {"  Bearer s3cret  ", 200},
                                         {"Bearer s3cret extra", 200},
                                         {"Bearer from-file", 200},
                                         {"Bearer  s3cret", 401},
                                         {"Bearers3cret", 401},
                                         {"Basic s3cret", 401},
                                         {"Bearer s3cre", 401},
                                         {"Bearer", 401}}) {
    EXPECT_EQ(call("GET", "/api/v1/nodes", "", {{"Authorization", c.header}}).code, c.code)
        << c.header;
  }
}

// --- R15: --token-auth-file ----------------------------------------------------------------------

TEST(TokenFile, ReadsKubeApiserversCsv) {
  auto tokens = parseTokenFile(
      "t1,alice,uid-1\n"
      "\n"
      "t2,bob,uid-2,\"system:masters,dev\"\r\n"
      ",nobody,uid-3\n"
      "\"t,3\",carol,uid-4,solo\n"
      "t1,alice2,uid-5\n",
      "tokens.csv");
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  ASSERT_EQ(tokens->size(), 3u);
  EXPECT_EQ((*tokens)[0].token, "t2");
  EXPECT_EQ((*tokens)[0].groups, (std::vector<std::string>{"system:masters", "dev"}));
  EXPECT_EQ((*tokens)[1].token, "t,3");
  EXPECT_EQ((*tokens)[1].groups, std::vector<std::string>{"solo"});
  EXPECT_EQ((*tokens)[2].token, "t1");
  EXPECT_EQ((*tokens)[2].user, "alice2") << "a later duplicate wins";

  auto short_record = parseTokenFile("t1,alice\n", "tokens.csv");
  ASSERT_FALSE(short_record.ok());
  EXPECT_EQ(short_record.error().message,
            "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), "
            "found 2");
  auto bare = parseTokenFile("t\"1,alice,uid\n", "tokens.csv");
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.error().message, HasSubstr("tokens.csv: parse error on line 1"));
}

}  // namespace
}  // namespace berth::apiserver
