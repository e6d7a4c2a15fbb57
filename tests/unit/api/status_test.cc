#include "pkg/api/status.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

TEST(Status, AFailureEncodesItsMessageCodeReasonAndDetails) {
  Status status{.status = "Failure",
                .message = "pods \"web\" not found",
                .reason = "NotFound",
                .code = 404,
                .details = {.name = "web", .kind = "pods"}};
  EXPECT_EQ(encodeStatus(status), json::parse(R"({
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": "pods \"web\" not found", "reason": "NotFound", "code": 404,
    "details": {"name": "web", "kind": "pods"}})"));
}

TEST(Status, ASuccessOmitsWhatIsNotSet) {
  EXPECT_EQ(encodeStatus({.status = "Success", .code = 201}),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",
                            "code":201})"));
  // A Failure keeps its message even when empty, as the embedded server always wrote it.
  EXPECT_TRUE(encodeStatus({.status = "Failure", .code = 500}).contains("message"));
}

TEST(Status, RoundTripsEveryField) {
  const Status status{.status = "Failure",
                      .message = "too old",
                      .reason = "Expired",
                      .code = 410,
                      .details = {.name = "n",
                                  .group = "coordination.k8s.io",
                                  .kind = "leases",
                                  .uid = "u1",
                                  .causes = {{"FieldValueInvalid", "bad", "patch"}},
                                  .retryAfterSeconds = 3},
                      .continueToken = "abc"};
  const std::optional<Status> back = decodeStatus(encodeStatus(status));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, status.status);
  EXPECT_EQ(back->message, status.message);
  EXPECT_EQ(back->reason, status.reason);
  EXPECT_EQ(back->code, status.code);
  EXPECT_EQ(back->details.name, "n");
  EXPECT_EQ(back->details.group, "coordination.k8s.io");
  EXPECT_EQ(back->details.kind, "leases");
  EXPECT_EQ(back->details.uid, "u1");
  ASSERT_EQ(back->details.causes.size(), 1u);
  EXPECT_EQ(back->details.causes[0].reason, "FieldValueInvalid");
  EXPECT_EQ(back->details.causes[0].message, "bad");
  EXPECT_EQ(back->details.causes[0].field, "patch");
  EXPECT_EQ(back->details.retryAfterSeconds, 3);
  EXPECT_EQ(back->continueToken, "abc");
}

TEST(Status, DecodeRejectsWhatIsNotAStatusAndIgnoresMistypedFields) {
  EXPECT_FALSE(decodeStatus(json::parse(R"({"kind":"Pod"})")).has_value());
  EXPECT_FALSE(decodeStatus(json::array()).has_value());
  const auto status = decodeStatus(json::parse(R"({"kind":"Status","code":"404","reason":7,
                                                   "details":{"causes":[1,{"field":"x"}]}})"));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 0);
  EXPECT_EQ(status->reason, "");
  ASSERT_EQ(status->details.causes.size(), 1u);
  EXPECT_EQ(status->details.causes[0].field, "x");
}

}  // namespace
}  // namespace berth::api
