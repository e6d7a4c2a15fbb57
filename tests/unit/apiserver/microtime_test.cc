#include "pkg/apiserver/microtime.h"

#include <gtest/gtest.h>

#include <string>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

constexpr std::string_view kLayoutPrefix = "\" as \"2006-01-02T15:04:05.000000Z07:00\": ";

TEST(MicroTime, AcceptsGoRfc3339MicroAndNormalizesToUtc) {
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  const Case cases[] = {
      {"2026-11-30T08:00:00.000000Z", "2026-11-30T08:00:00.000000Z"},
      {"2026-11-30T08:00:00.123456Z", "2026-11-30T08:00:00.123456Z"},
      {"2026-11-30T09:30:00.000001+01:30", "2026-11-30T08:00:00.000001Z"},
      {"2026-11-30T00:00:00.000000-08:00", "2026-11-30T08:00:00.000000Z"},
      {"2026-11-30T08:00:00,000000Z", "2026-11-30T08:00:00.000000Z"},  // Go takes a comma too
      {"2024-02-29T23:59:59.999999Z", "2024-02-29T23:59:59.999999Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    auto got = parseMicroTime(c.in);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(*got, c.want);
  }
}

TEST(MicroTime, RejectsOtherFormsWithGoParseErrors) {
  struct Case {
    std::string_view in;
    std::string want;  // after `parsing time "<in>`
  };
  const Case cases[] = {
      {"2026-11-30T08:00:00Z", std::string(kLayoutPrefix) + "cannot parse \"Z\" as \".000000\""},
      {"2026-11-30T08:00:00.000Z",
       std::string(kLayoutPrefix) + "cannot parse \".000Z\" as \".000000\""},
      {"2026-11-30T08:00:00.0000000Z",
       std::string(kLayoutPrefix) + "cannot parse \"0Z\" as \"Z07:00\""},
      {"2026-11-30T08:00:00.000000Z ", "\": extra text: \" \""},
      {"2026-11-30 08:00:00.000000Z",
       std::string(kLayoutPrefix) + "cannot parse \" 08:00:00.000000Z\" as \"T\""},
      {"2026-11-30T08:00:00.000000",
       std::string(kLayoutPrefix) + "cannot parse \"\" as \"Z07:00\""},
      {"2026-11-30T08:00:00.000000z",
       std::string(kLayoutPrefix) + "cannot parse \"z\" as \"Z07:00\""},
      {"2026-13-30T08:00:00.000000Z", "\": month out of range"},
      {"2026-02-30T08:00:00.000000Z", "\": day out of range"},
      {"2026-11-30T24:00:00.000000Z", "\": hour out of range"},
      {"26-11-30T08:00:00.000000Z",
       std::string(kLayoutPrefix) + "cannot parse \"26-11-30T08:00:00.000000Z\" as \"2006\""},
      {"", std::string(kLayoutPrefix) + "cannot parse \"\" as \"2006\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    auto got = parseMicroTime(c.in);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().message, "parsing time \"" + std::string(c.in) + c.want);
  }
}

json lease(json spec) { return {{"metadata", {{"name", "berth"}}}, {"spec", std::move(spec)}}; }

TEST(MicroTime, StoreChecksLeaseAndEventTimesOnEveryWrite) {
  Store store;
  // Create and update answer a decode error, 400.
  auto bad =
      store.create(Resource::Leases, "kube-system", lease({{"renewTime", "2026-11-30T08:00:00Z"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().status.code, 400);
  EXPECT_EQ(bad.error().status.reason, "BadRequest");
  EXPECT_EQ(bad.error().status.message,
            "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
            "\"2026-11-30T08:00:00Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" "
            "as \".000000\"");
  auto notString = store.create(Resource::Leases, "kube-system", lease({{"acquireTime", 5}}));
  ASSERT_FALSE(notString.ok());
  EXPECT_EQ(notString.error().status.message,
            "Lease in version \"v1\" cannot be handled as a Lease: json: cannot unmarshal number "
            "into Go value of type string");

  auto created = store.create(Resource::Leases, "kube-system",
                              lease({{"holderIdentity", "a"},
                                     {"acquireTime", "2026-11-30T09:00:00.000000+01:00"},
                                     {"renewTime", nullptr}}));
  ASSERT_TRUE(created.ok()) << created.error().status.message;
  EXPECT_EQ((*created)["spec"]["acquireTime"], "2026-11-30T08:00:00.000000Z");
  EXPECT_FALSE((*created)["spec"].contains("renewTime")) << "a null pointer field is omitted";

  json next = *created;
  next["spec"]["renewTime"] = "2026-11-30T08:00:10.5Z";
  auto updated = store.update(Resource::Leases, "kube-system", "berth", next);
  ASSERT_FALSE(updated.ok());
  EXPECT_EQ(updated.error().status.code, 400);
  next["spec"]["renewTime"] = "2026-11-30T08:00:10.500000Z";
  updated = store.update(Resource::Leases, "kube-system", "berth", next);
  ASSERT_TRUE(updated.ok()) << updated.error().status.message;
  EXPECT_EQ((*updated)["spec"]["renewTime"], "2026-11-30T08:00:10.500000Z");

  // A patch whose result does not decode is 422 Invalid on the field "patch".
  auto patched = store.patch(Resource::Leases, "kube-system", "berth", PatchType::Merge,
                             {{"spec", {{"renewTime", "2026-11-30T08:00:11Z"}}}});
  ASSERT_FALSE(patched.ok());
  EXPECT_EQ(patched.error().status.code, 422);
  EXPECT_EQ(patched.error().status.reason, "Invalid");
  ASSERT_EQ(patched.error().status.details.causes.size(), 1u);
  EXPECT_EQ(patched.error().status.details.causes[0].field, "patch");
  EXPECT_TRUE(
      patched.error().status.message.starts_with(" \"\" is invalid: patch: Invalid value: "))
      << patched.error().status.message;
  EXPECT_TRUE(patched.error().status.message.ends_with(
      ": parsing time \"2026-11-30T08:00:11Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot "
      "parse \"Z\" as \".000000\""))
      << patched.error().status.message;
  patched = store.patch(Resource::Leases, "kube-system", "berth", PatchType::Merge,
                        {{"spec", {{"renewTime", "2026-11-30T08:00:11.000000Z"}}}});
  ASSERT_TRUE(patched.ok()) << patched.error().status.message;
  EXPECT_EQ((*patched)["spec"]["renewTime"], "2026-11-30T08:00:11.000000Z");

  // events.k8s.io/v1 eventTime, and the core/v1 view of the same field.
  for (Resource resource : {Resource::EventsV1, Resource::Events}) {
    SCOPED_TRACE(resourceInfo(resource).apiVersion());
    json event = {{"metadata", {{"name", "e1"}}}, {"eventTime", "2026-11-30T08:00:00Z"}};
    auto e = store.create(resource, "default", event);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().status.code, 400);
    EXPECT_TRUE(e.error().status.message.starts_with(
        "Event in version \"v1\" cannot be handled as a Event: parsing time"))
        << e.error().status.message;
    event["eventTime"] = "2026-11-30T08:00:00.000000Z";
    EXPECT_TRUE(store.create(resource, "default", event).ok());
  }
}

}  // namespace
}  // namespace berth::apiserver
