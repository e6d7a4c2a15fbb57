#include "pkg/apiserver/review.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

ReviewConfig config() {
  auto decoded = decodeReviewConfig(json::parse(R"({
    "tokens": [{"token": "t1", "user": "prometheus", "uid": "7", "groups": ["monitoring"]}],
    "allow": [{"user": "prometheus", "verbs": ["get"], "nonResourceURLs": ["/metrics"]},
              {"group": "ops", "verbs": ["*"], "nonResourceURLs": ["/debug/*"]}]})"));
  EXPECT_TRUE(decoded.ok()) << decoded.error().message;
  return *decoded;
}

json sar(const std::string& user, const std::vector<std::string>& groups, const std::string& verb,
         const std::string& path) {
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec",
           {{"user", user},
            {"groups", groups},
            {"nonResourceAttributes", {{"verb", verb}, {"path", path}}}}}};
}

TEST(TokenReview, AuthenticatesTokensOfTheTableOnly) {
  const ReviewConfig c = config();
  auto known = reviewToken(c, R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",)"
                              R"("spec":{"token":"t1"}})");
  ASSERT_TRUE(known);
  EXPECT_EQ((*known)["status"]["authenticated"], true);
  EXPECT_EQ((*known)["status"]["user"]["username"], "prometheus");
  EXPECT_EQ((*known)["status"]["user"]["uid"], "7");
  EXPECT_EQ((*known)["status"]["user"]["groups"], json::array({"monitoring"}));
  auto unknown = reviewToken(c, R"({"kind":"TokenReview","spec":{"token":"nope"}})");
  ASSERT_TRUE(unknown);
  EXPECT_EQ((*unknown)["status"], json({{"authenticated", false}}));
  EXPECT_FALSE(reviewToken(c, R"({"kind":"TokenReview","spec":{}})"));
  EXPECT_FALSE(reviewToken(c, "not json"));
}

TEST(SubjectAccessReview, AllowsWhatARuleNamesAndNothingElse) {
  const ReviewConfig c = config();
  struct Case {
    const char* name;
    json review;
    bool allowed;
  };
  const Case cases[] = {
      {"the user's rule", sar("prometheus", {}, "get", "/metrics"), true},
      {"another verb", sar("prometheus", {}, "post", "/metrics"), false},
      {"another path", sar("prometheus", {}, "get", "/configz"), false},
      {"a group's prefix rule", sar("alice", {"ops"}, "get", "/debug/pprof"), true},
      {"no rule", sar("mallory", {"system:authenticated"}, "get", "/metrics"), false},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto answer = reviewAccess(c, tc.review.dump());
    ASSERT_TRUE(answer);
    EXPECT_EQ((*answer)["status"]["allowed"], tc.allowed);
    EXPECT_EQ((*answer)["kind"], "SubjectAccessReview");
  }
}

TEST(ReviewConfig, ErrorsNameTheField) {
  auto missing = decodeReviewConfig(json::parse(R"({"tokens":[{"user":"x"}]})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "tokens[0].token: required");
  auto both = decodeReviewConfig(json::parse(R"({"allow":[{"user":"a","group":"b"}]})"));
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().message, "allow[0]: exactly one of user and group is required");
}

}  // namespace
}  // namespace berth::apiserver
