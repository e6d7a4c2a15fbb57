#include "pkg/serving/zpages.h"

#include <gtest/gtest.h>

#include <chrono>

namespace berth::serving {
namespace {

TEST(ZPages, AcceptsPlainTextAsUpstreamsAcceptableMediaType) {
  EXPECT_TRUE(acceptsPlainText("text/plain"));
  EXPECT_TRUE(acceptsPlainText("*/*"));
  EXPECT_TRUE(acceptsPlainText("*"));
  EXPECT_TRUE(acceptsPlainText("application/json, text/*;q=0.5"));
  EXPECT_TRUE(acceptsPlainText("text/plain; charset=UTF-8"));
  EXPECT_FALSE(acceptsPlainText(""));
  EXPECT_FALSE(acceptsPlainText("application/json"));
  EXPECT_FALSE(acceptsPlainText("text/plain; charset=latin1"));
  EXPECT_FALSE(acceptsPlainText("text/plain; version=2"));
  EXPECT_FALSE(acceptsPlainText("text/html"));
  const Response refused = notAcceptable();
  EXPECT_EQ(refused.status, 406);
  EXPECT_EQ(refused.body, "media type not acceptable, must be: text/plain\n");
}

TEST(ZPages, ConfigzIsOneJsonObjectKeyedByTheRegisteredName) {
  const Response r = configzResponse("componentconfig", R"({"kind":"KubeSchedulerConfiguration"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.contentType, "application/json");
  EXPECT_EQ(r.body, R"({"componentconfig":{"kind":"KubeSchedulerConfiguration"}})");
}

TEST(ZPages, FlagzListsFlagsSortedUnderUpstreamsHeader) {
  const Response r = flagzResponse("berth", {{"v", "2"}, {"bind-address", "0.0.0.0"}}, "=");
  EXPECT_EQ(r.contentType, "text/plain; charset=utf-8");
  EXPECT_EQ(r.body,
            "\nberth flags\nWarning: This endpoint is not meant to be machine parseable, has no "
            "formatting compatibility guarantees and is for debugging purposes only.\n\n"
            "bind-address=0.0.0.0\nv=2\n");
}

TEST(ZPages, StatuszShowsStartUptimeVersionsAndPaths) {
  StatuszInfo info;
  info.started = std::chrono::system_clock::from_time_t(1700000000);  // Tue Nov 14 22:13:20 2023
  info.now =
      info.started + std::chrono::hours(26) + std::chrono::minutes(3) + std::chrono::seconds(7);
  info.compiler = "g++ 12.2.0";
  info.binaryVersion = "v0.9.0";
  info.paths = {"/configz", "/metrics"};
  const Response r = statuszResponse("berth", info, ": ");
  EXPECT_EQ(r.body,
            "\nberth statusz\nWarning: This endpoint is not meant to be machine parseable, has no "
            "formatting compatibility guarantees and is for debugging purposes only.\n\n"
            "Started:  Tue Nov 14 22:13:20 UTC 2023\n"
            "Up:  26 hr 03 min 07 sec\n"
            "Compiler:  g++ 12.2.0\n"
            "Binary version:  v0.9.0\n"
            "Paths:  /configz /metrics\n");
}

TEST(ZPages, TheDelimiterIsOneOfUpstreamsAndStaysTheSame) {
  const std::string_view d = zpageDelimiter();
  EXPECT_TRUE(d == ":" || d == ": " || d == "=" || d == " ") << d;
  EXPECT_EQ(zpageDelimiter(), d);
}

}  // namespace
}  // namespace berth::serving
