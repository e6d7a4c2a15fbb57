// End-to-end test of the secure port: the real `berth run` against the embedded API server, which
// answers its TokenReviews and SubjectAccessReviews. HTTPS with the self-signed certificate,
// health without credentials, /metrics for authorized callers only, the review caches, an
// unreachable reviewer failing closed while scheduling goes on, certificate reloads and bad input.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
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

using apiserver::Resource;
using test::nodeJson;
using test::podJson;
using namespace std::chrono_literals;

constexpr const char* kDenied = "Bearer denied-token";

class SecureServing : public test::ApiServerTest {
 protected:
  void SetUp() override {
    apiserver::ServerOptions options;
    options.reviews = test::scraperReviews();
    options.reviews.tokens.push_back({"denied-token", "nobody", "2", {}});
    ASSERT_NO_FATAL_FAILURE(startServer(std::move(options)));
    prefix_ = testing::TempDir() + "berth-secure-" + std::to_string(getpid()) + "-" +
              testing::UnitTest::GetInstance()->current_test_info()->name();
    kubeconfig_ = prefix_ + ".kubeconfig";
    ASSERT_TRUE(test::writeKubeconfig(kubeconfig_, server_->url()).ok());
    std::remove((prefix_ + ".log").c_str());
  }

  void TearDown() override {
    if (berth_) berth_->terminate();
    std::filesystem::remove_all(prefix_ + ".d");
    test::ApiServerTest::TearDown();
  }

  void startBerth(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
        "run",       "--kubeconfig",         kubeconfig_, "--port", "0", "--bind-address",
        "127.0.0.1", "--leader-elect=false", "--v",       "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto spawned = test::BerthProcess::spawn(BERTH_BINARY, args, prefix_ + ".log");
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    berth_ = std::move(*spawned);
    auto line = berth_->waitForLogLine({"Serving securely"}, 20s);
    ASSERT_TRUE(line) << berth_->logTail();
    const std::string address = test::logField(*line, "address").value_or("");
    port_ = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  }

  test::HttpReply get(const std::string& path, const std::string& authorization = {}) {
    auto reply = test::httpsGet(port_, path, authorization);
    if (!reply.ok()) {
      ADD_FAILURE() << reply.error().message;
      return {};
    }
    return *reply;
  }

  // How many reviews of each kind the API server has answered.
  size_t reviews(const std::string& resource) {
    size_t n = 0;
    for (const auto& r : server_->requestLog()) {
      n += r.method == "POST" && r.path.ends_with("/" + resource) ? 1 : 0;
    }
    return n;
  }

  std::string prefix_;
  std::string kubeconfig_;
  test::BerthProcessPtr berth_;
  uint16_t port_ = 0;
};

TEST_F(SecureServing, ServesHttpsWithASelfSignedCertificateAndHealthWithoutCredentials) {
  startBerth();
  ASSERT_TRUE(test::eventually([&] { return get("/readyz").code == 200; }, 20s));
  const test::HttpReply healthz = get("/healthz");
  EXPECT_EQ(healthz.code, 200);
  EXPECT_EQ(healthz.body, "ok");
  EXPECT_TRUE(healthz.peerCommonName.starts_with("localhost@")) << healthz.peerCommonName;
  EXPECT_EQ(get("/livez").code, 200);
  EXPECT_EQ(
      get("/readyz?exclude=sched-handler-sync&verbose").body,
      "[+]ping ok\n[+]shutdown ok\n[+]sched-handler-sync excluded: ok\nreadyz check passed\n");
  EXPECT_EQ(reviews("tokenreviews") + reviews("subjectaccessreviews"), 0U);
}

TEST_F(SecureServing, MetricsNeedsAnAuthorizedCallerAndReviewsAreCached) {
  startBerth();
  const test::HttpReply anonymous = get("/metrics");
  EXPECT_EQ(anonymous.code, 403);
  EXPECT_NE(
      anonymous.body.find(R"(forbidden: User \"system:anonymous\" cannot get path \"/metrics\".)"),
      std::string::npos)
      << anonymous.body;
  const test::HttpReply invalid = get("/metrics", "Bearer no-such-token");
  EXPECT_EQ(invalid.code, 401);
  EXPECT_NE(invalid.body.find(R"("reason":"Unauthorized")"), std::string::npos) << invalid.body;
  const test::HttpReply denied = get("/metrics", kDenied);
  EXPECT_EQ(denied.code, 403);
  EXPECT_NE(denied.body.find(R"(User \"nobody\" cannot get path \"/metrics\".)"), std::string::npos)
      << denied.body;
  const test::HttpReply allowed = get("/metrics", test::kScraperAuthorization);
  EXPECT_EQ(allowed.code, 200);
  EXPECT_NE(allowed.body.find("rest_client_requests_total{code=\"201\""), std::string::npos)
      << "the reviews are REST calls of berth's";

  // Within the TTL, the same callers cost the API server nothing more.
  const size_t tokenReviews = reviews("tokenreviews");
  const size_t accessReviews = reviews("subjectaccessreviews");
  EXPECT_EQ(tokenReviews, 3U);   // no-such-token, denied, scraper
  EXPECT_EQ(accessReviews, 3U);  // anonymous, nobody, scraper
  EXPECT_EQ(get("/metrics", test::kScraperAuthorization).code, 200);
  EXPECT_EQ(get("/metrics", kDenied).code, 403);
  EXPECT_EQ(get("/metrics", "Bearer no-such-token").code, 401);
  EXPECT_EQ(reviews("tokenreviews"), tokenReviews);
  EXPECT_EQ(reviews("subjectaccessreviews"), accessReviews);
}

// The line of `text` that holds every one of `parts`, or "".
std::string lineWith(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (std::all_of(parts.begin(), parts.end(),
                    [&](const std::string& p) { return line.find(p) != std::string::npos; })) {
      return line;
    }
  }
  return "";
}

// The value of flag `name` in a /flagz page ("name<delimiter>value" lines, the delimiter one of
// upstream's), or nullopt.
std::optional<std::string> flagValue(const std::string& page, const std::string& name) {
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name)) continue;
    for (const std::string delimiter : {": ", ":", "=", " "}) {
      if (line.compare(name.size(), delimiter.size(), delimiter) == 0) {
        return line.substr(name.size() + delimiter.size());
      }
    }
  }
  return std::nullopt;
}

TEST_F(SecureServing, ServesConfigzFlagzStatuszAndPodResourcesToAuthorizedCallersOnly) {
  create(Resource::Nodes, nodeJson("n1", "4"));
  startBerth();
  for (const char* path : {"/configz", "/flagz", "/statusz", "/metrics/resources"}) {
    EXPECT_EQ(get(path).code, 403) << path;
    EXPECT_EQ(get(path, kDenied).code, 403) << path;
    EXPECT_EQ(get(path, "Bearer no-such-token").code, 401) << path;
  }

  const test::HttpReply configz = get("/configz", test::kScraperAuthorization);
  ASSERT_EQ(configz.code, 200) << configz.body;
  const nlohmann::json doc = nlohmann::json::parse(configz.body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << configz.body;
  const nlohmann::json& cfg = doc["componentconfig"];
  EXPECT_EQ(cfg.value("apiVersion", ""), "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(cfg.value("kind", ""), "KubeSchedulerConfiguration");
  EXPECT_EQ(cfg["leaderElection"].value("leaseDuration", ""), "15s");
  EXPECT_EQ(cfg["leaderElection"].value("leaderElect", true), false);  // --leader-elect=false
  ASSERT_EQ(cfg["profiles"].size(), 1U);
  EXPECT_EQ(cfg["profiles"][0].value("schedulerName", ""), "berth");
  EXPECT_FALSE(cfg["profiles"][0]["plugins"]["multiPoint"]["enabled"].empty()) << cfg.dump();

  // A z-page is for people: it answers only a client that takes text/plain.
  EXPECT_EQ(get("/statusz", test::kScraperAuthorization).code, 406);
  auto statusz =
      test::httpsGet(port_, "/statusz", test::kScraperAuthorization, 10s, {"Accept: text/plain"});
  ASSERT_TRUE(statusz.ok()) << statusz.error().message;
  EXPECT_EQ(statusz->code, 200);
  EXPECT_TRUE(statusz->body.starts_with("\nberth statusz\nWarning: ")) << statusz->body;
  EXPECT_NE(statusz->body.find("Binary version"), std::string::npos) << statusz->body;
  EXPECT_NE(statusz->body.find(" /metrics/resources"), std::string::npos) << statusz->body;
  EXPECT_NE(statusz->body.find(" /flagz"), std::string::npos) << statusz->body;

  // /flagz: every flag of the command line with its parsed value, defaults included.
  EXPECT_EQ(get("/flagz", test::kScraperAuthorization).code, 406);
  auto flagz =
      test::httpsGet(port_, "/flagz", test::kScraperAuthorization, 10s, {"Accept: text/plain"});
  ASSERT_TRUE(flagz.ok()) << flagz.error().message;
  EXPECT_EQ(flagz->code, 200);
  EXPECT_TRUE(flagz->body.starts_with("\nberth flags\nWarning: ")) << flagz->body;
  EXPECT_EQ(flagValue(flagz->body, "bind-address"), "127.0.0.1") << flagz->body;
  EXPECT_EQ(flagValue(flagz->body, "leader-elect"), "false") << flagz->body;
  EXPECT_EQ(flagValue(flagz->body, "v"), "2") << flagz->body;
  EXPECT_EQ(flagValue(flagz->body, "kubeconfig"), kubeconfig_) << flagz->body;
  EXPECT_EQ(flagValue(flagz->body, "authentication-token-webhook-cache-ttl"), "10s") << flagz->body;

  create(Resource::Pods, podJson("web", "1500m"));
  ASSERT_TRUE(test::eventually([&] { return nodeOf("web") == "n1"; }, 20s)) << berth_->logTail();
  std::string series;
  EXPECT_TRUE(test::eventually(
      [&] {
        series = lineWith(
            get("/metrics/resources", test::kScraperAuthorization).body,
            {"kube_pod_resource_request{", R"(namespace="default")", R"(node="n1")", R"(pod="web")",
             R"(resource="cpu")", R"(scheduler="berth")", R"(unit="cores")"});
        return !series.empty();
      },
      20s));
  EXPECT_TRUE(series.ends_with("} 1.5")) << series;
}

TEST_F(SecureServing, AnUnreachableReviewerFailsClosedWhileSchedulingContinues) {
  // The reviews go to an API server that is down; scheduling uses the live one.
  const std::string dead = prefix_ + ".dead.kubeconfig";
  ASSERT_TRUE(test::writeKubeconfig(dead, "http://127.0.0.1:1").ok());
  create(Resource::Nodes, nodeJson("n1", "4"));
  startBerth({"--authentication-kubeconfig", dead, "--authorization-kubeconfig", dead});
  EXPECT_EQ(get("/metrics", test::kScraperAuthorization).code, 401);
  EXPECT_EQ(get("/metrics").code, 500);  // anonymous: the SubjectAccessReview cannot be made
  EXPECT_EQ(get("/healthz").code, 200);
  create(Resource::Pods, podJson("web", "1"));
  EXPECT_TRUE(test::eventually([&] { return nodeOf("web") == "n1"; }, 20s)) << berth_->logTail();
  EXPECT_EQ(get("/metrics", test::kScraperAuthorization).code, 401);
}

TEST_F(SecureServing, ReloadsRotatedCertificatesAndKeepsTheOldOneOnABadRotation) {
  std::filesystem::create_directories(prefix_ + ".d");
  const std::string cert = prefix_ + ".d/tls.crt";
  const std::string key = prefix_ + ".d/tls.key";
  const test::TestPki first = test::makeTestPki();
  std::ofstream(cert, std::ios::trunc) << first.server.certificatePem;
  std::ofstream(key, std::ios::trunc) << first.server.privateKeyPem;
  startBerth({"--tls-cert-file", cert, "--tls-private-key-file", key});
  EXPECT_EQ(get("/healthz").peerFingerprint,
            test::certificateFingerprint(first.server.certificatePem));

  const test::TestPki second = test::makeTestPki();
  std::ofstream(cert, std::ios::trunc) << second.server.certificatePem;
  std::ofstream(key, std::ios::trunc) << second.server.privateKeyPem;
  EXPECT_TRUE(test::eventually(
      [&] {
        return get("/healthz").peerFingerprint ==
               test::certificateFingerprint(second.server.certificatePem);
      },
      10s));

  std::ofstream(cert, std::ios::trunc) << "not a certificate";
  EXPECT_EQ(get("/healthz").peerFingerprint,
            test::certificateFingerprint(second.server.certificatePem));
  EXPECT_TRUE(berth_->waitForLogLine({"Keeping the previous serving certificate", cert}, 10s))
      << berth_->logTail();
}

TEST_F(SecureServing, ACertificateFileThatCannotBeReadOrParsedAtStartExitsNamingIt) {
  std::filesystem::create_directories(prefix_ + ".d");
  const std::string garbage = prefix_ + ".d/garbage.crt";
  std::ofstream(garbage) << "not a certificate";
  const test::TestPki pki = test::makeTestPki();
  const std::string key = prefix_ + ".d/tls.key";
  std::ofstream(key) << pki.server.privateKeyPem;
  for (const std::string& certFile : {prefix_ + ".d/missing.crt", garbage}) {
    SCOPED_TRACE(certFile);
    std::remove((prefix_ + ".log").c_str());
    auto spawned = test::BerthProcess::spawn(
        BERTH_BINARY,
        {"run", "--kubeconfig", kubeconfig_, "--port", "0", "--leader-elect=false",
         "--tls-cert-file", certFile, "--tls-private-key-file", key},
        prefix_ + ".log");
    ASSERT_TRUE(spawned.ok());
    EXPECT_NE((*spawned)->waitForExit(20s).value_or(0), 0);
    EXPECT_NE((*spawned)->log().find("--tls-cert-file " + certFile), std::string::npos)
        << (*spawned)->logTail();
  }
}

// kube-system/extension-apiserver-authentication as kube-apiserver publishes it.
nlohmann::json authenticationConfigMap(const std::string& clientCa, const std::string& proxyCa) {
  nlohmann::json data = {{"client-ca-file", clientCa}};
  if (!proxyCa.empty()) {
    data["requestheader-client-ca-file"] = proxyCa;
    data["requestheader-allowed-names"] = R"(["front-proxy-client"])";
    data["requestheader-username-headers"] = R"(["X-Remote-User"])";
    data["requestheader-group-headers"] = R"(["X-Remote-Group"])";
    data["requestheader-extra-headers-prefix"] = R"(["X-Remote-Extra-"])";
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "extension-apiserver-authentication"}, {"namespace", "kube-system"}}},
      {"data", data}};
}

TEST_F(SecureServing, ClientCertificatesAndFrontProxiesAreVerifiedAgainstTheWatchedConfigMap) {
  const test::CertifiedKey firstCa = test::makeCa("client-ca-1");
  const test::CertifiedKey secondCa = test::makeCa("client-ca-2");
  const test::CertifiedKey proxyCa = test::makeCa("front-proxy-ca");
  create(Resource::ConfigMaps, authenticationConfigMap(firstCa.certificatePem, ""));
  startBerth();
  const test::CertifiedKey first = test::issueClientCertificate(firstCa, "scraper", "monitoring");
  const test::CertifiedKey second = test::issueClientCertificate(secondCa, "scraper", "monitoring");
  auto getAs = [&](const test::CertifiedKey& cert, const std::vector<std::string>& headers = {}) {
    auto reply = test::httpsGet(port_, "/metrics", "", 10s, headers, &cert);
    return reply.ok() ? reply->code : -1;
  };
  EXPECT_EQ(getAs(first), 200);
  EXPECT_EQ(getAs(second), 401);
  EXPECT_EQ(get("/metrics").code, 403) << "no certificate: anonymous";

  // A new CA in the ConfigMap replaces the old one without a restart.
  auto stored =
      store_.get(Resource::ConfigMaps, "kube-system", "extension-apiserver-authentication");
  ASSERT_TRUE(stored.ok());
  nlohmann::json next = authenticationConfigMap(secondCa.certificatePem, proxyCa.certificatePem);
  next["metadata"]["resourceVersion"] = (*stored)["metadata"]["resourceVersion"];
  ASSERT_TRUE(
      store_.update(Resource::ConfigMaps, "kube-system", "extension-apiserver-authentication", next)
          .ok());
  EXPECT_TRUE(test::eventually([&] { return getAs(second) == 200; }, 20s)) << berth_->logTail();
  EXPECT_EQ(getAs(first), 401);

  // The front proxy's certificate lets its headers name the user the SubjectAccessReview asks
  // about: "scraper" may read /metrics, "nobody" may not.
  const test::CertifiedKey proxy = test::issueClientCertificate(proxyCa, "front-proxy-client", "");
  EXPECT_EQ(getAs(proxy, {"X-Remote-User: scraper", "X-Remote-Group: monitoring"}), 200);
  EXPECT_EQ(getAs(proxy, {"X-Remote-User: nobody"}), 403);
  const test::CertifiedKey intruder = test::issueClientCertificate(proxyCa, "intruder", "");
  EXPECT_EQ(getAs(intruder, {"X-Remote-User: scraper"}), 401) << "not an allowed name";
  EXPECT_EQ(getAs(second, {"X-Remote-User: nobody"}), 200)
      << "a client certificate is its own CN, whatever the headers say";

  // A ConfigMap that does not parse keeps the CAs berth has.
  stored = store_.get(Resource::ConfigMaps, "kube-system", "extension-apiserver-authentication");
  ASSERT_TRUE(stored.ok());
  nlohmann::json bad = *stored;
  bad["data"]["client-ca-file"] = "not a certificate";
  ASSERT_TRUE(
      store_.update(Resource::ConfigMaps, "kube-system", "extension-apiserver-authentication", bad)
          .ok());
  EXPECT_TRUE(berth_->waitForLogLine({"Keeping the previous CA bundle", "client-ca-file"}, 20s))
      << berth_->logTail();
  EXPECT_EQ(getAs(second), 200);
}

TEST_F(SecureServing, AConfigMapLookupFailureIsFatalOnlyWhenNotTolerated) {
  nlohmann::json cm = authenticationConfigMap(test::makeCa("ca").certificatePem, "");
  cm["data"]["requestheader-username-headers"] = "X-Remote-User";  // not a JSON list
  create(Resource::ConfigMaps, cm);
  std::remove((prefix_ + ".log").c_str());
  auto spawned = test::BerthProcess::spawn(
      BERTH_BINARY,
      {"run", "--kubeconfig", kubeconfig_, "--port", "0", "--leader-elect=false",
       "--authentication-tolerate-lookup-failure=false"},
      prefix_ + ".log");
  ASSERT_TRUE(spawned.ok());
  EXPECT_NE((*spawned)->waitForExit(20s).value_or(0), 0);
  EXPECT_NE((*spawned)->log().find("configmap kube-system/extension-apiserver-authentication: "
                                   "data.requestheader-username-headers: not a JSON array"),
            std::string::npos)
      << (*spawned)->logTail();

  // Tolerated (kube-scheduler's default): berth serves, trusting no certificate.
  startBerth();
  EXPECT_TRUE(
      berth_->waitForLogLine({"Error looking up in-cluster authentication configuration"}, 10s))
      << berth_->logTail();
  EXPECT_EQ(get("/metrics", test::kScraperAuthorization).code, 200);
}

TEST_F(SecureServing, ANonUtf8TokenOrAHugeHeaderIsRefusedWithoutAReview) {
  startBerth();
  EXPECT_EQ(get("/metrics", "Bearer \xff\xfe\xfd").code, 400);
  EXPECT_EQ(get("/metrics", "Bearer " + std::string(1024 * 1024, 'a')).code, 431);
  EXPECT_EQ(reviews("tokenreviews"), 0U);
  EXPECT_EQ(reviews("subjectaccessreviews"), 0U);
  EXPECT_EQ(get("/healthz").code, 200);
}

}  // namespace
}  // namespace berth
