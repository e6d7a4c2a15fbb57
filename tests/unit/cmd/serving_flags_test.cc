#include "cmd/berth/serving_flags.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

namespace berth::cmd {
namespace {

util::Result<ServingSettings> parse(const std::vector<std::string>& args) {
  ServingSettings s;
  FlagSet flags;
  addServingFlags(flags, &s);
  auto rest = flags.parse(args);
  if (!rest.ok()) return rest.error();
  if (auto r = resolveServingFlags(flags, s); !r.ok()) return r.error();
  return s;
}

TEST(ServingFlags, DefaultsAreKubeSchedulers) {
  auto s = parse({});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->serve);
  EXPECT_EQ(s->port, 10259);
  EXPECT_EQ(s->bindAddress, "0.0.0.0");
  EXPECT_EQ(s->tls.minVersion, TLS1_2_VERSION);
  EXPECT_EQ(s->tls.cipherList, "");
  EXPECT_TRUE(s->alwaysAllow.matches("/healthz"));
  EXPECT_TRUE(s->alwaysAllow.matches("/readyz"));
  EXPECT_TRUE(s->alwaysAllow.matches("/livez"));
  EXPECT_FALSE(s->alwaysAllow.matches("/metrics"));
  EXPECT_EQ(s->tokenCacheTtl, std::chrono::seconds(10));
  EXPECT_EQ(s->authorizedTtl, std::chrono::seconds(10));
  EXPECT_EQ(s->unauthorizedTtl, std::chrono::seconds(10));
  EXPECT_TRUE(s->authenticationTolerateLookupFailure);
  EXPECT_TRUE(s->warnings.empty());
}

TEST(ServingFlags, SecurePortZeroTurnsServingOffAndTheDeprecatedPortZeroPicksAFreeOne) {
  auto off = parse({"--secure-port=0"});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->serve);
  auto free = parse({"--port=0"});
  ASSERT_TRUE(free.ok());
  EXPECT_TRUE(free->serve);
  EXPECT_EQ(free->port, 0);
  ASSERT_EQ(free->warnings.size(), 1U);
  auto both = parse({"--port=1234", "--secure-port=4321"});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->port, 4321);
  auto bad = parse({"--secure-port=70000"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--secure-port 70000 must be between 0 and 65535, inclusive. 0 for turning off "
            "secure port");
}

TEST(ServingFlags, TlsAndAuthorizationValuesAreChecked) {
  auto s = parse({"--tls-min-version=VersionTLS13",
                  "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                  "--authorization-always-allow-paths=/healthz,/metrics/*",
                  "--authentication-token-webhook-cache-ttl=1m"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->tls.minVersion, TLS1_3_VERSION);
  EXPECT_EQ(s->tls.cipherList, "ECDHE-ECDSA-AES256-GCM-SHA384");
  EXPECT_TRUE(s->alwaysAllow.matches("/metrics/resources"));
  EXPECT_FALSE(s->alwaysAllow.matches("/readyz"));
  EXPECT_EQ(s->tokenCacheTtl, std::chrono::minutes(1));
  EXPECT_FALSE(parse({"--tls-min-version=SSLv3"}).ok());
  EXPECT_FALSE(parse({"--tls-cipher-suites=NOPE"}).ok());
  EXPECT_FALSE(parse({"--authorization-always-allow-paths=/a*b"}).ok());
  auto half = parse({"--tls-cert-file=/x.crt"});
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().message,
            "--tls-cert-file and --tls-private-key-file must be given together");
}

TEST(SplitList, DropsEmptyItems) {
  EXPECT_EQ(splitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(splitList("").empty());
}

}  // namespace
}  // namespace berth::cmd
