#include "pkg/serving/auth.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <map>
#include <set>
#include <string>

#include "tests/support/certs.h"

namespace berth::serving {
namespace {

using namespace std::chrono_literals;

class FakeTokens final : public TokenReviewer {
 public:
  util::Result<TokenReviewStatus> review(const std::string& token) override {
    ++calls;
    if (down) return util::Error{util::ErrorCode::Unavailable, "connection refused"};
    auto it = users.find(token);
    if (it == users.end()) return TokenReviewStatus{};
    return TokenReviewStatus{true, it->second, ""};
  }
  std::map<std::string, UserInfo> users;
  bool down = false;
  int calls = 0;
};

class FakeAccess final : public AccessReviewer {
 public:
  util::Result<AccessReviewStatus> review(const UserInfo& user, std::string_view verb,
                                          std::string_view path) override {
    ++calls;
    lastUser = user;
    if (down) return util::Error{util::ErrorCode::Unavailable, "connection refused"};
    const bool allowed = allow.count(user.name + " " + std::string(verb) + " " + std::string(path));
    return AccessReviewStatus{allowed, false, allowed ? "" : reason};
  }
  std::set<std::string> allow;
  UserInfo lastUser;
  std::string reason;
  bool down = false;
  int calls = 0;
};

class DelegatedAuthTest : public ::testing::Test {
 protected:
  DelegatedAuthTest() {
    tokens_.users["good"] = UserInfo{"prometheus", "1", {"system:serviceaccounts"}, {}};
    tokens_.users["admin"] = UserInfo{"root", "2", {"system:masters"}, {}};
    access_.allow.insert("prometheus get /metrics");
  }

  DelegatedAuth make(std::vector<std::string> paths = {"/healthz", "/readyz", "/livez"}) {
    DelegatedAuthOptions o;
    o.tokenReviewer = &tokens_;
    o.accessReviewer = &access_;
    o.alwaysAllowPaths = *PathMatcher::create(paths);
    o.clock = &clock_;
    return DelegatedAuth(std::move(o));
  }

  static Request get(std::string_view target, std::string_view authorization = {}) {
    return Request{"GET", target, authorization, nullptr, "", {}};
  }

  // A request presenting `cert` (CN and O read as the server reads them) and `headers`.
  static Request withCertificate(const PeerCertificate& peer, std::vector<Header> headers = {},
                                 std::string_view authorization = {}) {
    return Request{"GET", "/metrics", authorization, &peer, "", std::move(headers)};
  }

  util::FakeClock clock_;
  FakeTokens tokens_;
  FakeAccess access_;
};

TEST_F(DelegatedAuthTest, HealthPathsNeedNoCredentials) {
  DelegatedAuth auth = make();
  EXPECT_EQ(auth.check(get("/healthz")), std::nullopt);
  EXPECT_EQ(auth.check(get("/readyz?verbose")), std::nullopt);
  EXPECT_EQ(auth.check(get("/livez")), std::nullopt);
  EXPECT_EQ(tokens_.calls + access_.calls, 0);
}

TEST_F(DelegatedAuthTest, AnonymousMetricsIsForbiddenAfterAReview) {
  DelegatedAuth auth = make();
  auto r = auth.check(get("/metrics"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(r->contentType, "application/json");
  EXPECT_EQ(r->body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("forbidden: User \"system:anonymous\" cannot get path \"/metrics\".",)"
            R"("reason":"Forbidden","details":{},"code":403})"
            "\n");
  EXPECT_EQ(access_.calls, 1);
}

TEST_F(DelegatedAuthTest, AnInvalidTokenIs401) {
  DelegatedAuth auth = make();
  auto r = auth.check(get("/metrics", "Bearer wrong"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->body, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                     R"("message":"Unauthorized","reason":"Unauthorized","code":401})"
                     "\n");
  // Even for a path everyone may read: presented credentials that fail are refused.
  EXPECT_EQ(auth.check(get("/healthz", "Bearer wrong"))->status, 401);
}

TEST_F(DelegatedAuthTest, AnAllowedTokenPassesAndADeniedOneIs403WithTheReason) {
  tokens_.users["other"] = UserInfo{"nobody", "3", {}, {}};
  access_.reason = "no RBAC policy matched";
  DelegatedAuth auth = make();
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good")), std::nullopt);
  auto denied = auth.check(get("/metrics", "Bearer other"));
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403);
  EXPECT_NE(denied->body.find(R"(cannot get path \"/metrics\".: \"no RBAC policy matched\")"),
            std::string::npos)
      << denied->body;
}

TEST_F(DelegatedAuthTest, SystemMastersIsAlwaysAllowed) {
  DelegatedAuth auth = make();
  EXPECT_EQ(auth.check(get("/configz", "Bearer admin")), std::nullopt);
  EXPECT_EQ(access_.calls, 0);
}

TEST_F(DelegatedAuthTest, AnswersAreCachedForTheirTtl) {
  DelegatedAuth auth = make();
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good")), std::nullopt);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good")), std::nullopt);
  EXPECT_EQ(tokens_.calls, 1);
  EXPECT_EQ(access_.calls, 1);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer wrong"))->status, 401);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer wrong"))->status, 401);
  EXPECT_EQ(tokens_.calls, 2);  // a failed authentication is cached too
  clock_.advance(11s);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good")), std::nullopt);
  EXPECT_EQ(tokens_.calls, 3);
  EXPECT_EQ(access_.calls, 2);
}

TEST_F(DelegatedAuthTest, TheApiServerDownFailsClosedAndIsNotCached) {
  DelegatedAuth auth = make();
  tokens_.down = true;
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good"))->status, 401);
  tokens_.down = false;
  access_.down = true;
  auto r = auth.check(get("/metrics", "Bearer good"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body, "Internal Server Error: \"/metrics\": connection refused\n");
  access_.down = false;
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good")), std::nullopt);
  EXPECT_EQ(tokens_.calls, 2);
  EXPECT_EQ(access_.calls, 2);
  // Health stays open while the API server is unreachable.
  access_.down = tokens_.down = true;
  EXPECT_EQ(auth.check(get("/readyz")), std::nullopt);
}

TEST_F(DelegatedAuthTest, ATokenThatIsNotUtf8Is400AndNotReviewed) {
  DelegatedAuth auth = make();
  auto r = auth.check(get("/metrics", "Bearer \xff\xfe"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(tokens_.calls, 0);
}

TEST_F(DelegatedAuthTest, AHeaderThatIsNotABearerTokenIsAnonymous) {
  DelegatedAuth auth = make();
  EXPECT_EQ(auth.check(get("/metrics", "Basic dXNlcjpwYXNz"))->status, 403);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer "))->status, 403);
  EXPECT_EQ(tokens_.calls, 0);
}

// What the server hands over for a client presenting `key`'s certificate.
PeerCertificate peerOf(const test::CertifiedKey& key, const std::string& cn,
                       std::vector<std::string> organizations = {}) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(key.certificatePem.data(), static_cast<int>(key.certificatePem.size())),
      BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert.get(), &der);
  PeerCertificate peer{{std::string(reinterpret_cast<const char*>(der), static_cast<size_t>(n))},
                       cn,
                       std::move(organizations)};
  OPENSSL_free(der);
  return peer;
}

CertificatePoolPtr poolOf(const test::CertifiedKey& ca) {
  auto pool = CertificatePool::fromPem(ca.certificatePem, "ca");
  if (!pool.ok()) throw std::runtime_error(pool.error().message);
  return *pool;
}

TEST_F(DelegatedAuthTest, ClientCertificatesAuthenticateAndFailedOnesAre401) {
  const test::TestPki pki = test::makeTestPki();
  DelegatedAuth auth = make();
  const PeerCertificate good =
      peerOf(test::issueClientCertificate(pki.ca, "prometheus", "monitoring"), "prometheus",
             {"monitoring"});
  const PeerCertificate bad =
      peerOf(test::issueClientCertificate(test::makeCa("other"), "prometheus", ""), "prometheus");
  // Without a client CA, certificates are not looked at: the caller is anonymous.
  EXPECT_EQ(auth.check(withCertificate(good))->status, 403);
  EXPECT_EQ(access_.calls, 1);

  auth.setCertificates(CertificateAuthentication{poolOf(pki.ca), {}});
  EXPECT_EQ(auth.check(withCertificate(good)), std::nullopt);
  EXPECT_EQ(auth.check(withCertificate(bad))->status, 401);
  // A server certificate cannot authenticate a client.
  EXPECT_EQ(auth.check(withCertificate(peerOf(pki.server, "prometheus")))->status, 401);
  // A failed certificate with a good token: the token authenticates.
  EXPECT_EQ(auth.check(withCertificate(bad, {}, "Bearer good")), std::nullopt);

  // A new CA applies to the next request.
  const test::CertifiedKey otherCa = test::makeCa("rotated");
  auth.setCertificates(CertificateAuthentication{poolOf(otherCa), {}});
  EXPECT_EQ(auth.check(withCertificate(good))->status, 401);
}

TEST_F(DelegatedAuthTest, AFrontProxyAssertsTheUserInItsHeaders) {
  const test::TestPki pki = test::makeTestPki();
  const test::CertifiedKey proxyCa = test::makeCa("front-proxy-ca");
  RequestHeaderConfig rh;
  rh.ca = poolOf(proxyCa);
  rh.allowedNames = {"front-proxy-client"};
  rh.usernameHeaders = {"X-Remote-User"};
  rh.groupHeaders = {"X-Remote-Group"};
  rh.extraHeaderPrefixes = {"X-Remote-Extra-"};
  DelegatedAuthOptions o;
  o.accessReviewer = &access_;
  o.alwaysAllowPaths = *PathMatcher::create({"/healthz"});
  o.clock = &clock_;
  o.certificates = CertificateAuthentication{poolOf(pki.ca), rh};
  DelegatedAuth auth(std::move(o));
  access_.allow.insert("alice get /metrics");
  const PeerCertificate proxy =
      peerOf(test::issueClientCertificate(proxyCa, "front-proxy-client", ""), "front-proxy-client");
  const std::vector<Header> alice{{"x-remote-user", "alice"},
                                  {"X-Remote-Group", "devs"},
                                  {"X-Remote-Group", "ops"},
                                  {"X-Remote-Extra-Scopes", "a"},
                                  {"x-remote-extra-acme.com%2Fproject", "p1"}};
  EXPECT_EQ(auth.check(withCertificate(proxy, alice)), std::nullopt);
  EXPECT_EQ(access_.lastUser.name, "alice");
  EXPECT_EQ(access_.lastUser.groups,
            (std::vector<std::string>{"devs", "ops", "system:authenticated"}));
  EXPECT_EQ(access_.lastUser.extra, (std::map<std::string, std::vector<std::string>>{
                                        {"acme.com/project", {"p1"}}, {"scopes", {"a"}}}));

  // A proxy certificate whose CN is not allowed, or from another CA, is refused; without a
  // username header the proxy's certificate is not a client certificate of the client CA either.
  const PeerCertificate stranger =
      peerOf(test::issueClientCertificate(proxyCa, "someone", ""), "someone");
  EXPECT_EQ(auth.check(withCertificate(stranger, alice))->status, 401);
  const PeerCertificate client =
      peerOf(test::issueClientCertificate(pki.ca, "front-proxy-client", ""), "front-proxy-client");
  EXPECT_EQ(auth.check(withCertificate(client, alice))->status, 403)
      << "a client certificate authenticates as its own CN, not as the headers' user";
  EXPECT_EQ(access_.lastUser.name, "front-proxy-client");
  EXPECT_EQ(auth.check(withCertificate(proxy, {}))->status, 401);
  const int reviews = access_.calls;
  EXPECT_EQ(auth.check(withCertificate(proxy, {{"X-Remote-User", "\xff\xfe"}}))->status, 400);
  EXPECT_EQ(auth.check(withCertificate(proxy, {{"X-Remote-User", "a"}, {"X-Remote-Group", "\xc0"}}))
                ->status,
            400);
  EXPECT_EQ(access_.calls, reviews) << "nothing that is not UTF-8 goes to the API server";
}

TEST_F(DelegatedAuthTest, WithoutAnAuthorizerOnlyTheAlwaysAllowedPass) {
  DelegatedAuthOptions o;
  o.tokenReviewer = &tokens_;
  o.alwaysAllowPaths = *PathMatcher::create({"/healthz"});
  o.clock = &clock_;
  DelegatedAuth auth(std::move(o));
  EXPECT_EQ(auth.check(get("/healthz")), std::nullopt);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer good"))->status, 403);
  EXPECT_EQ(auth.check(get("/metrics", "Bearer admin")), std::nullopt);
}

TEST(PathMatcher, MatchesExactPathsAndTrailingStarPrefixes) {
  struct Case {
    std::string_view path;
    bool matches;
  };
  const PathMatcher m = *PathMatcher::create({"/healthz", "/metrics/*", "livez"});
  for (const Case& c : std::initializer_list<Case>{{"/healthz", true},
                                                   {"/healthz/ping", false},
                                                   {"/metrics/resources", true},
                                                   {"/metrics/", true},
                                                   {"/metrics", false},
                                                   {"/livez", true},
                                                   {"/readyz", false}}) {
    SCOPED_TRACE(c.path);
    EXPECT_EQ(m.matches(c.path), c.matches);
  }
  auto bad = PathMatcher::create({"/a*b"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--authorization-always-allow-paths: only trailing * allowed in \"/a*b\"");
}

TEST(TtlCache, ExpiresEntriesAndStaysBounded) {
  util::FakeClock clock;
  TtlCache<int> cache(clock, 2);
  cache.put("a", 1, 10s);
  EXPECT_EQ(cache.get("a"), 1);
  clock.advance(10s);
  EXPECT_EQ(cache.get("a"), std::nullopt);
  cache.put("b", 2, 10s);
  cache.put("c", 3, 10s);
  cache.put("d", 4, 10s);  // full of live entries: everything goes
  EXPECT_EQ(cache.get("d"), 4);
  EXPECT_EQ(cache.get("b"), std::nullopt);
  cache.put("e", 5, 0s);  // a zero TTL caches nothing
  EXPECT_EQ(cache.get("e"), std::nullopt);
}

}  // namespace
}  // namespace berth::serving
