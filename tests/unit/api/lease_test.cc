#include "pkg/api/lease.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

TEST(Lease, EncodesEveryFieldOfTheSpecAndTheTimesAsMicroTime) {
  const Lease lease{.namespace_ = "kube-system",
                    .name = "berth",
                    .spec = {.holderIdentity = "a",
                             .leaseDurationSeconds = 15,
                             .acquireTime = Timestamp{1714557600000001},
                             .renewTime = Timestamp{1714557601000000},
                             .leaseTransitions = 2}};
  EXPECT_EQ(encodeLease(lease), json::parse(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"namespace": "kube-system", "name": "berth"},
    "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 2,
             "acquireTime": "2024-05-01T10:00:00.000001Z",
             "renewTime": "2024-05-01T10:00:01.000000Z"}})"));
}

TEST(Lease, SpecRoundTrips) {
  const LeaseSpec spec{.holderIdentity = "a",
                       .leaseDurationSeconds = 15,
                       .acquireTime = Timestamp{1714557600000001},
                       .renewTime = Timestamp{1714557601000000},
                       .leaseTransitions = 2};
  auto back = decodeLeaseSpec(encodeLeaseSpec(spec));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->holderIdentity, spec.holderIdentity);
  EXPECT_EQ(back->leaseDurationSeconds, spec.leaseDurationSeconds);
  EXPECT_EQ(back->acquireTime, spec.acquireTime);
  EXPECT_EQ(back->renewTime, spec.renewTime);
  EXPECT_EQ(back->leaseTransitions, spec.leaseTransitions);
}

TEST(Lease, AnEmptySpecKeepsTheHolderAndCountsButNoTimes) {
  EXPECT_EQ(encodeLeaseSpec({}),
            json::parse(R"({"holderIdentity":"","leaseDurationSeconds":0,"leaseTransitions":0})"));
  auto back = decodeLeaseSpec(json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->acquireTime, std::nullopt);
}

TEST(Lease, DecodeNamesTheFieldOfTheWrongType) {
  EXPECT_EQ(decodeLeaseSpec(json{{"leaseDurationSeconds", "15"}}).error().message,
            "spec.leaseDurationSeconds: not an int32: \"15\"");
  EXPECT_EQ(decodeLeaseSpec(json{{"holderIdentity", 1}}).error().message,
            "spec.holderIdentity: not a string");
  EXPECT_FALSE(decodeLeaseSpec(json{{"renewTime", "yesterday"}}).ok());
  EXPECT_FALSE(decodeLeaseSpec(json::array()).ok());
}

}  // namespace
}  // namespace berth::api
