// RestClient's unary transport against the embedded API server: keep-alive reuse, connections the
// server closed while idle, HTTPS verification, timeouts and cancellation.

#include "pkg/client/http_transport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"
#include "tests/support/certs.h"
#include "tests/support/loopback.h"
#include "tests/support/relay.h"

namespace berth {
namespace {

using apiserver::Resource;
using json = nlohmann::json;
using namespace std::chrono_literals;

json transportPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

json binding(const std::string& pod, const std::string& node) {
  return {{"metadata", {{"name", pod}}}, {"target", {{"kind", "Node"}, {"name", node}}}};
}

client::RestClientPtr makeClient(client::RestConfig config, int maxRetries = 0,
                                 client::Duration requestTimeout = 30s) {
  config.qps = -1;  // the tests measure the transport, not the limiter
  client::RestOptions options;
  options.retry.maxRetries = maxRetries;
  options.retry.backoff.initial = 10ms;
  options.retry.backoff.max = 100ms;
  options.requestTimeout = requestTimeout;
  auto c = client::RestClient::create(config, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? *std::move(c) : nullptr;
}

client::RestClientPtr makeClient(const std::string& url, int maxRetries = 0,
                                 client::Duration requestTimeout = 30s) {
  client::RestConfig config;
  config.server = url;
  return makeClient(config, maxRetries, requestTimeout);
}

std::string httpUrl(uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

class HttpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = apiserver::Server::start(store_, {});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *std::move(server);
    ASSERT_TRUE(store_.create(Resource::Pods, "default", transportPod("a")).ok());
  }

  int bindings() const {
    int n = 0;
    for (const auto& r : server_->requestLog()) {
      n += r.subresource == "binding" ? 1 : 0;
    }
    return n;
  }

  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
};

TEST(HttpTransport, ReusesOneConnectionForSequentialRequests) {
  apiserver::Store store;
  auto server = apiserver::Server::start(store, {});
  ASSERT_TRUE(server.ok()) << server.error().message;
  test::TcpRelay proxy((*server)->port());
  ASSERT_NE(proxy.port(), 0);
  auto c = makeClient(httpUrl(proxy.port()));
  for (int i = 0; i < 50; ++i) {
    auto created = c->create(client::kPods, "default", transportPod("p" + std::to_string(i)));
    ASSERT_TRUE(created.ok()) << created.error().toString();
    auto got = c->get(client::kPods, "default", "p" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << got.error().toString();
    // An error answer is read whole too, so the connection stays usable.
    auto missing = c->get(client::kPods, "default", "nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(missing.error().isNotFound());
  }
  auto list = c->list(client::kPods, "default");
  ASSERT_TRUE(list.ok()) << list.error().toString();
  EXPECT_EQ(list->items.size(), 50u);
  EXPECT_EQ(proxy.accepted(), 1);
}

TEST(HttpTransport, ConcurrentCallersShareABoundedSetOfConnections) {
  apiserver::Store store;
  auto server = apiserver::Server::start(store, {});
  ASSERT_TRUE(server.ok()) << server.error().message;
  ASSERT_TRUE(store.create(Resource::Pods, "default", transportPod("a")).ok());
  test::TcpRelay proxy((*server)->port());
  auto c = makeClient(httpUrl(proxy.port()));
  constexpr int kThreads = 6;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        failures += c->get(client::kPods, "default", "a").ok() ? 0 : 1;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(proxy.accepted(), 1);
  EXPECT_LE(proxy.accepted(), kThreads);
}

TEST_F(HttpTransportTest, IdleConnectionsClosedByTheServerAreNotUsed) {
  test::TcpRelay proxy(server_->port());
  auto c = makeClient(httpUrl(proxy.port()), /*maxRetries=*/0);
  ASSERT_TRUE(c->get(client::kPods, "default", "a").ok());

  // Without retries, a GET on the closed connection would fail.
  proxy.closeAll();
  auto got = c->get(client::kPods, "default", "a");
  ASSERT_TRUE(got.ok()) << got.error().toString();
  EXPECT_EQ(proxy.accepted(), 2);

  // A binding is never sent on a connection the server closed, nor sent twice.
  proxy.closeAll();
  server_->clearRequestLog();
  auto bound = c->post(client::kPods, "default", "a", "binding", binding("a", "n1"));
  ASSERT_TRUE(bound.ok()) << bound.error().toString();
  EXPECT_EQ(bindings(), 1);
  EXPECT_EQ(proxy.accepted(), 3);
}

TEST_F(HttpTransportTest, SurvivesARestartOfTheServer) {
  auto c = makeClient(server_->url(), /*maxRetries=*/0);
  ASSERT_TRUE(c->get(client::kPods, "default", "a").ok());
  server_->refuseConnectionsFor(0ms);
  // Listening again (the probe is a connection of its own, not the client's).
  const auto until = std::chrono::steady_clock::now() + 10s;
  for (bool listening = false; !listening && std::chrono::steady_clock::now() < until;) {
    const int fd = test::connectLoopback(server_->port());
    listening = fd >= 0;
    if (listening) ::close(fd);
    if (!listening) std::this_thread::sleep_for(10ms);
  }
  server_->clearRequestLog();
  auto bound = c->post(client::kPods, "default", "a", "binding", binding("a", "n1"));
  ASSERT_TRUE(bound.ok()) << bound.error().toString();
  EXPECT_EQ(bindings(), 1);
  EXPECT_TRUE(c->get(client::kPods, "default", "a").ok());
}

TEST_F(HttpTransportTest, APostIsNotRetriedAfterA5xxAndTheConnectionStaysUsable) {
  test::TcpRelay proxy(server_->port());
  auto c = makeClient(httpUrl(proxy.port()), /*maxRetries=*/3);
  server_->clearRequestLog();
  server_->failNextRequests(1, 500);
  auto bound = c->post(client::kPods, "default", "a", "binding", binding("a", "n1"));
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().status.code, 500);
  EXPECT_EQ(bindings(), 1);
  server_->failNextRequests(2, 503);
  EXPECT_TRUE(c->get(client::kPods, "default", "a").ok());
  EXPECT_EQ(proxy.accepted(), 1);
}

TEST_F(HttpTransportTest, AServerThatDoesNotAnswerTimesOut) {
  // Connections complete in the backlog; nothing ever reads or answers.
  test::LoopbackListener silent;
  ASSERT_NE(silent.port(), 0);
  auto c = makeClient(httpUrl(silent.port()), /*maxRetries=*/0, /*requestTimeout=*/300ms);
  const auto start = std::chrono::steady_clock::now();
  auto r = c->get(client::kPods, "default", "a");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_EQ(r.error().status.message, "reading the response: timed out after 300ms");
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
}

TEST_F(HttpTransportTest, AStopRequestAbortsAnInFlightRequest) {
  test::LoopbackListener silent;
  ASSERT_NE(silent.port(), 0);
  auto c = makeClient(httpUrl(silent.port()), /*maxRetries=*/0, /*requestTimeout=*/60s);
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  auto r = c->post(client::kPods, "default", "a", "binding", binding("a", "n1"), stop.get_token());
  const auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Cancelled);
  EXPECT_LT(took, 5s);

  // The client still works for other calls.
  auto other = makeClient(server_->url());
  EXPECT_TRUE(other->get(client::kPods, "default", "a").ok());
}

TEST_F(HttpTransportTest, AnAnswerOverTheBodyLimitFailsClearly) {
  auto transport = client::HttpTransport::create(server_->url(), std::nullopt, true,
                                                 {.timeout = 10s, .maxBodyBytes = 256});
  ASSERT_TRUE(transport.ok()) << transport.error().message;
  auto r = (*transport)->roundTrip({.method = "GET", .target = "/api/v1/pods"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::BadResponse);
  EXPECT_EQ(r.error().status.message,
            "GET /api/v1/pods: response body over the limit of 256 bytes");
  // Under the limit: the whole answer.
  auto small = (*transport)->roundTrip({.method = "GET", .target = "/healthz"});
  ASSERT_TRUE(small.ok()) << small.error().toString();
  EXPECT_EQ(small->status, 200);
  EXPECT_EQ(small->body, "ok");
}

TEST(HttpTransport, RejectsMalformedServerUrls) {
  for (const char* url :
       {"ftp://x", "https://", "http://h:0", "http://h:99999", "http://[::1", "http://user@h:80"}) {
    SCOPED_TRACE(url);
    EXPECT_FALSE(client::HttpTransport::create(url, std::nullopt, true).ok());
  }
}

class HttpsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { pki_ = test::makeTestPki(); }

  void startServer(const std::string& bindAddress = "127.0.0.1") {
    startServer(bindAddress, pki_.server);
  }
  void startServer(const std::string& bindAddress, const test::CertifiedKey& serving) {
    apiserver::ServerOptions options;
    options.bindAddress = bindAddress;
    options.tls = apiserver::TlsOptions{serving.certificatePem, serving.privateKeyPem, ""};
    auto server = apiserver::Server::start(store_, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *std::move(server);
  }

  client::RestConfig config(const std::string& server) const {
    client::RestConfig c;
    c.server = server;
    c.caPem = pki_.ca.certificatePem;
    return c;
  }

  test::TestPki pki_;
  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
};

TEST_F(HttpsTransportTest, VerifiesTheServerAndReusesTheConnection) {
  startServer();
  test::TcpRelay proxy(server_->port());
  auto c = makeClient(config("https://127.0.0.1:" + std::to_string(proxy.port())));
  for (int i = 0; i < 20; ++i) {
    auto r = c->create(client::kPods, "default", transportPod("p" + std::to_string(i)));
    ASSERT_TRUE(r.ok()) << r.error().toString();
  }
  EXPECT_EQ(proxy.accepted(), 1);
  // A TLS connection the server closed is not used either.
  proxy.closeAll();
  auto list = c->list(client::kPods, "default");
  ASSERT_TRUE(list.ok()) << list.error().toString();
  EXPECT_EQ(list->items.size(), 20u);
  EXPECT_EQ(proxy.accepted(), 2);
}

TEST_F(HttpsTransportTest, VerifiesAHostNameAndSendsIt) {
  startServer();
  auto c = makeClient(config("https://localhost:" + std::to_string(server_->port())));
  auto r = c->getPath("/version");
  EXPECT_TRUE(r.ok()) << r.error().toString();
}

TEST_F(HttpsTransportTest, AnotherCaFailsWithTheVerificationError) {
  startServer();
  client::RestConfig other = config(server_->url());
  other.caPem = test::makeCa("other").certificatePem;
  auto r = makeClient(other)->get(client::kPods, "default", "a");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_NE(r.error().status.message.find("TLS handshake with 127.0.0.1:"), std::string::npos)
      << r.error().status.message;
  EXPECT_NE(r.error().status.message.find("certificate verify failed"), std::string::npos)
      << r.error().status.message;
  EXPECT_NE(r.error().status.message.find("unable to get local issuer certificate"),
            std::string::npos)
      << r.error().status.message;
}

TEST_F(HttpsTransportTest, ACertificateForAnotherAddressFails) {
  // The serving certificate names 127.0.0.1 and localhost; Linux routes all of 127/8 to loopback.
  startServer("127.0.0.2");
  auto r = makeClient(config(server_->url()))->get(client::kPods, "default", "a");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_NE(r.error().status.message.find("IP address mismatch"), std::string::npos)
      << r.error().status.message;

  client::RestConfig insecure = config(server_->url());
  insecure.caPem.clear();
  insecure.insecureSkipTLSVerify = true;
  auto answered = makeClient(insecure)->get(client::kPods, "default", "a");
  ASSERT_FALSE(answered.ok());
  EXPECT_TRUE(answered.error().isNotFound()) << answered.error().toString();
}

// Opens a watch of pods: the watch stream's transport, not the unary one.
client::ApiResult<client::WatchStreamPtr> openWatch(client::RestClient& c) {
  return c.watch(client::kPods, "default", {}, {});
}

TEST_F(HttpsTransportTest, ACertificateNamingTheHostOnlyInItsCommonNameIsRefused) {
  // As Go since 1.15 (and so kubectl and client-go): the subjectAltName must name the host.
  startServer("127.0.0.1", test::issueServerCertificate(pki_.ca, "localhost", ""));
  auto c = makeClient(config("https://localhost:" + std::to_string(server_->port())));
  auto r = c->getPath("/version");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_NE(r.error().status.message.find("hostname mismatch"), std::string::npos)
      << r.error().status.message;
  auto watched = openWatch(*c);
  ASSERT_FALSE(watched.ok());
  EXPECT_EQ(watched.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_NE(watched.error().status.message.find("certificate verify failed"), std::string::npos)
      << watched.error().status.message;
  EXPECT_EQ(server_->requestLog().size(), 0u);  // nothing (no token) was sent
}

TEST_F(HttpsTransportTest, AServingCertificateGivenAsTheCaIsTrusted) {
  // A kubeconfig whose certificate-authority is the server's leaf certificate, as kubectl
  // accepts; the host is still checked.
  startServer();
  client::RestConfig leaf = config("https://localhost:" + std::to_string(server_->port()));
  leaf.caPem = pki_.server.certificatePem;
  auto c = makeClient(leaf);
  auto r = c->getPath("/version");
  EXPECT_TRUE(r.ok()) << r.error().toString();
  auto watched = openWatch(*c);
  EXPECT_TRUE(watched.ok()) << watched.error().toString();

  client::RestConfig other = leaf;
  other.caPem = test::issueServerCertificate(pki_.ca, "other", "DNS:localhost").certificatePem;
  auto refused = makeClient(other)->getPath("/version");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().status.message.find("certificate verify failed"), std::string::npos)
      << refused.error().status.message;
}

}  // namespace
}  // namespace berth
