// End-to-end check that berth never writes its credentials to the log: the real `berth run --v 10`
// against the embedded API server over HTTPS with a bearer token and a client certificate, through
// retries, refused requests and a rejected token. Every line berth writes at the highest verbosity
// is searched for the token and for each line of the private key's PEM body.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/api_server_fixture.h"
#include "tests/support/berth_process.h"
#include "tests/support/certs.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::Resource;
using test::eventually;
using test::nodeJson;
using test::podJson;
using namespace std::chrono_literals;

// Distinctive enough that a match in the log can only be a leak.
constexpr const char* kToken = "berth-e2e-secret-token-3f9c1a7b5e2d4086";
constexpr const char* kWrongToken = "berth-e2e-wrong-token-8d41b0c6e7f25a93";

// The base64 lines between a PEM block's BEGIN and END lines.
std::vector<std::string> pemBodyLines(const std::string& pem) {
  std::vector<std::string> lines;
  std::istringstream in(pem);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && !line.starts_with("-----")) lines.push_back(line);
  }
  return lines;
}

class SecretsInLogs : public test::ApiServerTest {
 protected:
  void SetUp() override {
    pki_ = test::makeTestPki();
    apiserver::ServerOptions options;
    options.tls = apiserver::TlsOptions{pki_.server.certificatePem, pki_.server.privateKeyPem,
                                        pki_.ca.certificatePem};
    options.token = kToken;
    ASSERT_NO_FATAL_FAILURE(startServer(options));
    dir_ = testing::TempDir() + "berth-e2e-secrets-" + std::to_string(getpid()) + "-";
    writeFile("ca.crt", pki_.ca.certificatePem);
    writeFile("client.crt", pki_.client.certificatePem);
    writeFile("client.key", pki_.client.privateKeyPem);
    writeFile("wrong-token", std::string(kWrongToken) + "\n");
  }

  void TearDown() override {
    if (berth_ && HasFailure()) {
      std::cerr << "--- berth log (tail) ---\n" << berth_->logTail() << "\n";
    }
    berth_.reset();
    ApiServerTest::TearDown();
    for (const std::string& file : files_) std::remove(file.c_str());
  }

  void writeFile(const std::string& name, const std::string& content) {
    files_.push_back(dir_ + name);
    std::ofstream out(dir_ + name, std::ios::trunc);
    out << content;
    out.close();
    ASSERT_TRUE(out) << "writing " << dir_ + name;
  }

  // A kubeconfig for the HTTPS server whose user is `user` (token, tokenFile, client-*).
  std::string writeKubeconfig(const std::string& name, const json& user) {
    const json config = {
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters",
         {{{"name", "e2e"},
           {"cluster", {{"server", server_->url()}, {"certificate-authority", dir_ + "ca.crt"}}}}}},
        {"users", {{{"name", "e2e"}, {"user", user}}}},
        {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"user", "e2e"}}}}}},
        {"current-context", "e2e"}};
    writeFile(name, config.dump());
    return dir_ + name;
  }

  void startBerth(const std::string& kubeconfig, const std::string& logName,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run", "--kubeconfig", kubeconfig, "--v",
                                     "10",  "--port",       "0",        "--leader-elect=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string log = dir_ + logName;
    std::remove(log.c_str());
    files_.push_back(log);
    auto spawned = test::BerthProcess::spawn(BERTH_BINARY, args, log);
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    berth_ = std::move(*spawned);
  }

  // No secret of this fixture appears in `log`.
  void expectNoSecrets(const std::string& log) {
    EXPECT_EQ(log.find(kToken), std::string::npos) << "the bearer token is in the log";
    EXPECT_EQ(log.find(kWrongToken), std::string::npos) << "the rejected token is in the log";
    const std::vector<std::string> keyLines = pemBodyLines(pki_.client.privateKeyPem);
    ASSERT_FALSE(keyLines.empty());
    for (const std::string& line : keyLines) {
      EXPECT_EQ(log.find(line), std::string::npos) << "a line of the private key is in the log";
    }
    EXPECT_EQ(log.find("PRIVATE KEY"), std::string::npos);
  }

  test::TestPki pki_;
  std::string dir_;  // a per-process prefix of every file this test writes
  std::vector<std::string> files_;
  test::BerthProcessPtr berth_;
};

TEST_F(SecretsInLogs, TokenAndKeyNeverLoggedThroughRetriesAndRefusals) {
  ASSERT_TRUE(store_.create(Resource::Nodes, "", nodeJson("n1")).ok());
  ASSERT_TRUE(store_.create(Resource::Pods, "default", podJson("first")).ok());
  const std::string kubeconfig =
      writeKubeconfig("kubeconfig", {{"token", kToken},
                                     {"client-certificate", dir_ + "client.crt"},
                                     {"client-key", dir_ + "client.key"}});
  // The first requests (the initial lists) are answered 503 and retried, which berth logs at V(4)
  // with the request and the server's answer.
  server_->failNextRequests(3, 503);
  startBerth(kubeconfig, "berth.log");
  ASSERT_TRUE(eventually([&] { return nodeOf("first") == "n1"; }));

  // A refused binding (403) and a 401, which makes the client re-read its credentials.
  server_->failNextRequests(1, 403);
  ASSERT_TRUE(store_.create(Resource::Pods, "default", podJson("second")).ok());
  ASSERT_TRUE(eventually([&] { return nodeOf("second") == "n1"; }));
  server_->failNextRequests(2, 401);
  ASSERT_TRUE(store_.create(Resource::Pods, "default", podJson("third")).ok());
  ASSERT_TRUE(eventually([&] { return nodeOf("third") == "n1"; }));
  EXPECT_EQ(berth_->terminate(), 0);

  const std::string log = berth_->log();
  // The failures were taken and logged, so the search below covers their lines.
  EXPECT_NE(log.find("Retrying request"), std::string::npos);
  EXPECT_NE(log.find("Successfully bound pod to node"), std::string::npos);
  expectNoSecrets(log);
}

TEST_F(SecretsInLogs, RejectedTokenFromFileNeverLogged) {
  // A wrong token and no client certificate: every request is answered 401 Unauthorized.
  const std::string kubeconfig =
      writeKubeconfig("kubeconfig-wrong", {{"tokenFile", dir_ + "wrong-token"}});
  startBerth(kubeconfig, "berth-wrong.log", {"--log-format", "json"});
  ASSERT_TRUE(berth_->waitForLogLine({"Failed to list", "401"}, 30s).has_value());
  EXPECT_EQ(berth_->terminate(), 0);
  expectNoSecrets(berth_->log());
}

}  // namespace
}  // namespace berth
