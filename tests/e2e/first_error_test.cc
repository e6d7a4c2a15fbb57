// End-to-end checks that an operator sees why berth cannot reach the API server at once, at the
// default verbosity, as client-go shows it: the real `berth run --v 0` with a kubeconfig whose CA
// is wrong, and with a server that refuses connections. The first error line must name the
// problem; the retries after it are not logged at V(0).

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/apiserver/server.h"
#include "tests/support/api_server_fixture.h"
#include "tests/support/berth_process.h"
#include "tests/support/certs.h"

namespace berth {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// The lines of `log` that start with `severity` (klog's first header letter).
std::vector<std::string> linesOf(const std::string& log, char severity) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == severity) out.push_back(line);
  }
  return out;
}

// A loopback port nothing listens on (bound, then closed).
uint16_t closedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

class FirstError : public test::ApiServerTest {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "berth-e2e-first-error-" + std::to_string(getpid()) + "-";
  }

  void TearDown() override {
    if (berth_ && HasFailure()) {
      std::cerr << "--- berth log (tail) ---\n" << berth_->logTail() << "\n";
    }
    berth_.reset();
    ApiServerTest::TearDown();
    for (const std::string& file : files_) std::remove(file.c_str());
  }

  std::string writeFile(const std::string& name, const std::string& content) {
    files_.push_back(dir_ + name);
    std::ofstream(dir_ + name, std::ios::trunc) << content;
    return dir_ + name;
  }

  std::string writeKubeconfig(const std::string& server, const std::string& caPath) {
    json cluster = {{"server", server}};
    if (!caPath.empty()) cluster["certificate-authority"] = caPath;
    return writeFile(
        "kubeconfig",
        json{{"apiVersion", "v1"},
             {"kind", "Config"},
             {"clusters", {{{"name", "e2e"}, {"cluster", cluster}}}},
             {"users", {{{"name", "e2e"}, {"user", {{"token", "t"}}}}}},
             {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"user", "e2e"}}}}}},
             {"current-context", "e2e"}}
            .dump());
  }

  // `berth run --v 0` with `kubeconfig`; the time from spawning it to the first line containing
  // every needle (that line must exist within a generous limit).
  std::chrono::milliseconds runUntilLine(const std::string& kubeconfig,
                                         const std::vector<std::string>& needles) {
    const std::string log = dir_ + "berth.log";
    std::remove(log.c_str());
    files_.push_back(log);
    const auto start = std::chrono::steady_clock::now();
    auto spawned = test::BerthProcess::spawn(
        BERTH_BINARY, {"run", "--kubeconfig", kubeconfig, "--v", "0", "--port", "0"}, log);
    EXPECT_TRUE(spawned.ok()) << spawned.error().message;
    if (!spawned.ok()) return {};
    berth_ = std::move(*spawned);
    const auto line = berth_->waitForLogLine(needles, 60s);
    EXPECT_TRUE(line.has_value()) << "no line with the needles";
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  }

  std::string dir_;
  std::vector<std::string> files_;
  test::BerthProcessPtr berth_;
};

TEST_F(FirstError, WrongCaIsNamedInTheFirstErrorLine) {
  const test::TestPki pki = test::makeTestPki();
  apiserver::ServerOptions options;
  options.tls = apiserver::TlsOptions{pki.server.certificatePem, pki.server.privateKeyPem,
                                      pki.ca.certificatePem};
  ASSERT_NO_FATAL_FAILURE(startServer(options));
  // A CA that did not sign the server's certificate.
  const std::string ca =
      writeFile("other-ca.crt", test::makeCa("not-the-cluster-ca").certificatePem);
  const auto took =
      runUntilLine(writeKubeconfig(server_->url(), ca), {"certificate verify failed"});
  ASSERT_FALSE(HasFailure());
  const std::vector<std::string> errors = linesOf(berth_->log(), 'E');
  ASSERT_FALSE(errors.empty()) << berth_->log();
  // The first error says what is wrong with the certificate, not just that a call failed.
  EXPECT_NE(errors.front().find("certificate verify failed"), std::string::npos) << errors.front();
  EXPECT_NE(errors.front().find(server_->url()), std::string::npos) << errors.front();
  // Logged at the first failure, not after the retries.
  EXPECT_NE(errors.front().find(" attempt=1 "), std::string::npos) << errors.front();
  std::cout << "first certificate error after " << took.count() << " ms\n";
  // Retries after the first failure stay below the default verbosity.
  EXPECT_EQ(berth_->log().find("\"Retrying request\""), std::string::npos) << berth_->log();
}

TEST_F(FirstError, RefusedConnectionIsTheFirstErrorLine) {
  const uint16_t port = closedPort();
  ASSERT_NE(port, 0);
  const std::string url = "https://127.0.0.1:" + std::to_string(port);
  const auto took = runUntilLine(writeKubeconfig(url, ""), {"Connection refused"});
  ASSERT_FALSE(HasFailure());
  const std::vector<std::string> errors = linesOf(berth_->log(), 'E');
  ASSERT_FALSE(errors.empty()) << berth_->log();
  EXPECT_NE(errors.front().find("Connection refused"), std::string::npos) << errors.front();
  EXPECT_NE(errors.front().find(url), std::string::npos) << errors.front();
  EXPECT_NE(errors.front().find(" attempt=1 "), std::string::npos) << errors.front();
  std::cout << "first connection error after " << took.count() << " ms\n";
}

TEST_F(FirstError, ForbiddenListNamesTheResource) {
  ASSERT_NO_FATAL_FAILURE(startServer());
  server_->failRequestsFor(std::chrono::minutes(5), 403);
  runUntilLine(writeKubeconfig(server_->url(), ""),
               {"Failed to list", "resource=\"pods\"", "(403 "});
  ASSERT_FALSE(HasFailure());
  // Not retried by the client: a 403 does not go away by itself.
  EXPECT_EQ(berth_->log().find("Request failed; retrying"), std::string::npos) << berth_->log();
}

}  // namespace
}  // namespace berth
