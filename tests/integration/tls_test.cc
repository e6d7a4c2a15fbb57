// The REST client over HTTPS: only the configured CA is trusted, client certificates and bearer
// tokens authenticate, a rotated token file is picked up, and informers stream over TLS.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "pkg/api/decode.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"
#include "pkg/informer/informer.h"
#include "tests/support/builders.h"
#include "tests/support/certs.h"

namespace berth {
namespace {

using json = nlohmann::json;
using test::MakePod;
using namespace std::chrono_literals;

class TlsIntegration : public ::testing::Test {
 protected:
  void SetUp() override { pki_ = test::makeTestPki(); }

  void startServer(bool clientCerts, std::string token = {}) {
    apiserver::ServerOptions options;
    options.tls = apiserver::TlsOptions{pki_.server.certificatePem, pki_.server.privateKeyPem,
                                        clientCerts ? pki_.ca.certificatePem : ""};
    options.token = std::move(token);
    auto server = apiserver::Server::start(store_, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *std::move(server);
  }

  client::RestConfig config() const {
    client::RestConfig c;
    c.server = server_->url();
    c.caPem = pki_.ca.certificatePem;
    return c;
  }

  static client::RestClientPtr makeClient(const client::RestConfig& config) {
    client::RestOptions options;
    options.retry.maxRetries = 0;
    auto c = client::RestClient::create(config, options);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? *std::move(c) : nullptr;
  }

  // The outcome of listing pods: "ok", "401", or the failure kind.
  static std::string tryList(client::RestClient& c) {
    auto r = c.list(client::kPods, "default");
    if (r.ok()) {
      return "ok";
    }
    if (r.error().kind == client::ApiFailure::Kind::Connection) {
      return "connection";
    }
    return std::to_string(r.error().status.code);
  }

  test::TestPki pki_;
  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
};

TEST_F(TlsIntegration, ClientCertificateSignedByTheCa) {
  startServer(/*clientCerts=*/true);
  client::RestConfig c = config();
  c.clientCertPem = pki_.client.certificatePem;
  c.clientKeyPem = pki_.client.privateKeyPem;
  EXPECT_EQ(tryList(*makeClient(c)), "ok");
  // Without a certificate the server does not know who we are.
  EXPECT_EQ(tryList(*makeClient(config())), "401");
}

TEST_F(TlsIntegration, TrustsOnlyTheConfiguredCa) {
  startServer(/*clientCerts=*/false);
  EXPECT_EQ(tryList(*makeClient(config())), "ok");

  client::RestConfig otherCa = config();
  otherCa.caPem = test::makeCa("other").certificatePem;
  auto c = makeClient(otherCa);
  auto r = c->list(client::kPods, "default");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_EQ(r.error().status.code, 0);

  client::RestConfig systemRoots = config();
  systemRoots.caPem.clear();
  EXPECT_EQ(tryList(*makeClient(systemRoots)), "connection");

  client::RestConfig insecure = systemRoots;
  insecure.insecureSkipTLSVerify = true;
  EXPECT_EQ(tryList(*makeClient(insecure)), "ok");
}

TEST_F(TlsIntegration, RejectsUnloadableTlsMaterial) {
  startServer(/*clientCerts=*/false);
  client::RestConfig c = config();
  c.clientCertPem = pki_.client.certificatePem;
  c.clientKeyPem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  auto r = client::RestClient::create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("client key: ", 0), 0u) << r.error().message;
}

TEST_F(TlsIntegration, BearerTokenAndItsRotation) {
  startServer(/*clientCerts=*/false, "token-2");
  const std::string dir = ::testing::TempDir() + "berth-tls-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/token";
  std::ofstream(file) << "token-1\n";

  client::RestConfig c = config();
  c.bearerToken = "token-1";
  c.tokenFile = file;
  auto rest = makeClient(c);
  EXPECT_EQ(tryList(*rest), "401");
  {
    std::ofstream out(file);
    out << "token-2\n";
  }
  // The 401 made the client look at the file again.
  EXPECT_EQ(tryList(*rest), "ok");
  std::filesystem::remove_all(dir);
}

TEST_F(TlsIntegration, InformerStreamsOverTls) {
  startServer(/*clientCerts=*/true, "s3cr3t");
  ASSERT_TRUE(store_.create(apiserver::Resource::Pods, "default", MakePod().name("a").json()).ok());
  client::RestConfig c = config();
  c.clientCertPem = pki_.client.certificatePem;
  c.clientKeyPem = pki_.client.privateKeyPem;
  c.bearerToken = "s3cr3t";
  auto rest = makeClient(c);
  informer::Informer<api::Pod> inf(informer::makeListerWatcher(*rest, client::kPods),
                                   api::decodePod);
  inf.start();
  ASSERT_TRUE(inf.waitForSync(60s));
  ASSERT_TRUE(store_.create(apiserver::Resource::Pods, "default", MakePod().name("b").json()).ok());
  for (auto until = std::chrono::steady_clock::now() + 60s;
       inf.store().size() < 2 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_NE(inf.store().get("default/b"), nullptr);
  inf.stop();
}

// Exec credential plugins as small scripts: the credential authenticates, a 401 runs the plugin
// again, and a client certificate from the plugin is presented in the TLS handshake.
class ExecPluginIntegration : public TlsIntegration {
 protected:
  void SetUp() override {
    TlsIntegration::SetUp();
    dir_ = ::testing::TempDir() + "berth-tls-exec-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A plugin that counts its runs and prints `status` (a JSON object's text, which may name
  // files with $(cat ...)).
  client::ExecConfig plugin(const std::string& statusShell) {
    const std::string path = dir_ + "/plugin";
    std::ofstream(path) << "#!/bin/sh\necho run >> " << dir_ << "/runs\n"
                        << "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                           "\"kind\":\"ExecCredential\",\"status\":%s}' \""
                        << statusShell << "\"\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    client::ExecConfig e;
    e.user = "ops";
    e.apiVersion = "client.authentication.k8s.io/v1";
    e.command = path;
    e.interactiveMode = client::InteractiveMode::Never;
    return e;
  }
  int runs() const {
    std::ifstream in(dir_ + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  std::string dir_;
};

TEST_F(ExecPluginIntegration, TokenIsRunAgainAfterA401) {
  startServer(/*clientCerts=*/false, "token-2");
  std::ofstream(dir_ + "/next") << "token-1";
  client::RestConfig c = config();
  c.exec = plugin(R"({\"token\":\"$(cat )" + dir_ + R"(/next)\"})");
  auto rest = makeClient(c);
  ASSERT_NE(rest, nullptr);
  EXPECT_EQ(runs(), 1);  // at creation, so a broken plugin is reported before the first call
  EXPECT_EQ(tryList(*rest), "401");
  std::ofstream(dir_ + "/next") << "token-2";
  EXPECT_EQ(tryList(*rest), "ok");
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(tryList(*rest), "ok");
  EXPECT_EQ(runs(), 2);  // cached: no expiry, no 401
}

TEST_F(ExecPluginIntegration, ClientCertificateFromThePlugin) {
  startServer(/*clientCerts=*/true);
  // The PEMs as JSON strings.
  std::ofstream(dir_ + "/cert") << json(pki_.client.certificatePem).dump();
  std::ofstream(dir_ + "/key") << json(pki_.client.privateKeyPem).dump();
  client::RestConfig c = config();
  c.exec = plugin(R"({\"clientCertificateData\":$(cat )" + dir_ +
                  R"(/cert),\"clientKeyData\":$(cat )" + dir_ + R"(/key)})");
  auto rest = makeClient(c);
  ASSERT_NE(rest, nullptr);
  EXPECT_EQ(tryList(*rest), "ok");
}

TEST_F(ExecPluginIntegration, MissingPluginFailsTheClientNamingTheUser) {
  startServer(/*clientCerts=*/false);
  client::RestConfig c = config();
  c.exec = plugin("{}");
  c.exec->command = dir_ + "/not-installed";
  c.exec->installHint = "install not-installed";
  auto r = client::RestClient::create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().message.starts_with("user \"ops\": getting credentials: exec: executable " +
                                            dir_ + "/not-installed not found"))
      << r.error().message;
  EXPECT_TRUE(r.error().message.ends_with("install not-installed")) << r.error().message;
}

}  // namespace
}  // namespace berth
