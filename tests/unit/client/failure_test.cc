#include "pkg/client/failure.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::client {
namespace {

TEST(ApiFailure, DecodesStatusBodies) {
  struct Case {
    std::string name;
    int httpCode;
    std::string verb;
    std::string body;
    std::string retryAfter;
    int code;
    std::string reason;
    std::string message;
    int retryAfterSeconds;  // -1: none
  };
  const Case cases[] = {
      {"not found", 404, "GET",
       R"j({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"web\" not found",)j"
       R"j("reason":"NotFound","details":{"name":"web","kind":"pods"},"code":404})j",
       "", 404, "NotFound", "pods \"web\" not found", -1},
      {"conflict", 409, "PUT",
       R"j({"kind":"Status","code":409,"reason":"Conflict","message":"the object has been modified"})j",
       "", 409, "Conflict", "the object has been modified", -1},
      {"expired", 410, "GET",
       R"j({"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 (5)"})j",
       "", 410, "Expired", "too old resource version: 1 (5)", -1},
      {"too many requests, header", 429, "GET",
       R"j({"kind":"Status","code":429,"reason":"TooManyRequests","message":"slow down"})j", "3",
       429, "TooManyRequests", "slow down", 3},
      {"retryAfterSeconds in details", 500, "GET",
       R"j({"kind":"Status","code":500,"reason":"ServerTimeout","message":"m","details":{"retryAfterSeconds":2}})j",
       "", 500, "ServerTimeout", "m", 2},
      {"status without message", 403, "GET",
       R"j({"kind":"Status","code":403,"reason":"Forbidden"})j", "", 403, "Forbidden",
       "the server responded with the status code 403 but did not return more information", -1},
      {"html from a proxy", 502, "GET", "<html>Bad Gateway</html>\n", "", 502, "InternalError",
       "an error on the server (\"<html>Bad Gateway</html>\") has prevented the request from "
       "succeeding",
       -1},
      {"empty 404", 404, "GET", "", "", 404, "NotFound",
       "the server could not find the requested resource", -1},
      {"409 to a POST", 409, "POST", "", "", 409, "AlreadyExists", "the server reported a conflict",
       -1},
      {"409 to a PUT", 409, "PUT", "x", "", 409, "Conflict", "the server reported a conflict", -1},
      {"plain 401", 401, "GET", "Unauthorized", "", 401, "Unauthorized",
       "the server has asked for the client to provide credentials", -1},
      {"plain 429 with Retry-After", 429, "GET", "", " 7 ", 429, "TooManyRequests",
       "the server has received too many requests and has asked us to try again later", 7},
      {"bad Retry-After", 503, "GET", "", "soon", 503, "InternalError",
       "an error on the server (\"\") has prevented the request from succeeding", -1},
      {"410 without Status", 410, "GET", "", "", 410, "",
       "the server responded with the status code 410 but did not return more information", -1},
      {"JSON that is not a Status", 500, "GET", R"j({"error":"x"})j", "", 500, "InternalError",
       "an error on the server (\"{\\\"error\\\":\\\"x\\\"}\") has prevented the request from "
       "succeeding",
       -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ApiFailure f = decodeFailure(c.httpCode, c.verb, c.body, c.retryAfter);
    EXPECT_EQ(f.kind, ApiFailure::Kind::Status);
    EXPECT_EQ(f.status.code, c.code);
    EXPECT_EQ(f.status.reason, c.reason);
    EXPECT_EQ(f.status.message, c.message);
    EXPECT_EQ(f.retryAfter ? f.retryAfter->count() : -1, c.retryAfterSeconds);
  }
}

// Found by fuzz/decode_fuzz.cc: a body that is not UTF-8 made the message's JSON quoting throw.
TEST(ApiFailure, QuotesABodyThatIsNotUtf8) {
  const ApiFailure f = decodeFailure(502, "GET", "<html>\xff\xfe Bad Gateway</html>");
  EXPECT_EQ(f.status.reason, "InternalError");
  EXPECT_EQ(f.status.message,
            "an error on the server (\"<html>\xef\xbf\xbd\xef\xbf\xbd Bad Gateway</html>\") has "
            "prevented the request from succeeding");
}

TEST(ApiFailure, KeepsDetails) {
  const ApiFailure f = decodeFailure(
      422, "POST",
      R"j({"kind":"Status","code":422,"reason":"Invalid","message":"m",)j"
      R"j("details":{"name":"web","kind":"Pod","causes":[{"field":"spec.nodeName"}]}})j");
  EXPECT_EQ(f.status.details.name, "web");
  ASSERT_EQ(f.status.details.causes.size(), 1u);
  EXPECT_EQ(f.status.details.causes[0].field, "spec.nodeName");
  // A body that is not a Status has no details.
  const api::StatusDetails none = decodeFailure(404, "GET", "").status.details;
  EXPECT_TRUE(none.name.empty() && none.group.empty() && none.kind.empty() && none.uid.empty() &&
              none.causes.empty() && none.retryAfterSeconds == 0);
}

TEST(ApiFailure, ClassifiesForRetriesAndRelists) {
  EXPECT_TRUE(connectionFailure("refused").isTransient());
  EXPECT_EQ(connectionFailure("refused").status.code, 0);
  EXPECT_TRUE(decodeFailure(429, "GET", "").isTransient());
  EXPECT_TRUE(decodeFailure(503, "GET", "").isTransient());
  EXPECT_FALSE(decodeFailure(404, "GET", "").isTransient());
  EXPECT_FALSE(cancelledFailure().isTransient());
  EXPECT_FALSE(badResponse("x").isTransient());
  EXPECT_TRUE(decodeFailure(410, "GET", "").isGone());
  EXPECT_TRUE(decodeFailure(404, "GET", "").isNotFound());
  EXPECT_TRUE(decodeFailure(409, "PUT", "").isConflict());
}

TEST(ApiFailure, RendersAsTextAndError) {
  const ApiFailure f =
      decodeFailure(404, "GET", R"j({"kind":"Status","reason":"NotFound","message":"gone"})j");
  EXPECT_EQ(f.toString(), "gone (404 NotFound)");
  EXPECT_EQ(f.toError().code, util::ErrorCode::NotFound);
  EXPECT_EQ(connectionFailure("Connection refused").toString(), "connection: Connection refused");
  EXPECT_EQ(connectionFailure("x").toError().code, util::ErrorCode::Unavailable);
  EXPECT_EQ(decodeFailure(409, "POST", "").toError().code, util::ErrorCode::AlreadyExists);
}

}  // namespace
}  // namespace berth::client
