#include "pkg/api/meta.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

TEST(WatchEventType, NamesRoundTripAsTheWireSpellsThem) {
  const std::pair<WatchEventType, std::string_view> cases[] = {
      {WatchEventType::Added, "ADDED"},     {WatchEventType::Modified, "MODIFIED"},
      {WatchEventType::Deleted, "DELETED"}, {WatchEventType::Bookmark, "BOOKMARK"},
      {WatchEventType::Error, "ERROR"},
  };
  for (const auto& [type, name] : cases) {
    SCOPED_TRACE(name);
    EXPECT_EQ(watchEventTypeName(type), name);
    EXPECT_EQ(parseWatchEventType(name), type);
  }
  EXPECT_EQ(parseWatchEventType("added"), std::nullopt);  // the names are case-sensitive
  EXPECT_EQ(parseWatchEventType(""), std::nullopt);
}

TEST(PatchType, ContentTypeIsReadBackAsTheSameType) {
  for (PatchType type : {PatchType::Json, PatchType::Merge, PatchType::StrategicMerge}) {
    EXPECT_EQ(patchTypeFromContentType(contentType(type)), type);
  }
  EXPECT_EQ(contentType(PatchType::Merge), "application/merge-patch+json");
  EXPECT_EQ(patchTypeFromContentType(" Application/Merge-Patch+JSON ; charset=utf-8"),
            PatchType::Merge);
  EXPECT_EQ(patchTypeFromContentType("application/json"), std::nullopt);
  EXPECT_EQ(patchTypeFromContentType("application/apply-patch+yaml"), std::nullopt);
}

TEST(DeleteOptions, EncodesOnlyTheSetPreconditionsAndReadsThemBack) {
  const DeleteOptions options{{.uid = "u1", .resourceVersion = "7"}};
  const nlohmann::json body = encodeDeleteOptions(options);
  EXPECT_EQ(body, nlohmann::json::parse(R"({"kind":"DeleteOptions","apiVersion":"v1",
      "preconditions":{"uid":"u1","resourceVersion":"7"}})"));
  const DeleteOptions back = decodeDeleteOptions(body);
  EXPECT_EQ(back.preconditions.uid, "u1");
  EXPECT_EQ(back.preconditions.resourceVersion, "7");
  EXPECT_EQ(encodeDeleteOptions({{.uid = "u1"}})["preconditions"],
            nlohmann::json::parse(R"({"uid":"u1"})"));
}

TEST(DeleteOptions, DecodeIgnoresPreconditionsThatAreNotStrings) {
  const DeleteOptions options = decodeDeleteOptions(
      nlohmann::json::parse(R"({"preconditions":{"uid":5,"resourceVersion":"3"}})"));
  EXPECT_EQ(options.preconditions.uid, "");
  EXPECT_EQ(options.preconditions.resourceVersion, "3");
  EXPECT_EQ(decodeDeleteOptions(nlohmann::json::array()).preconditions.uid, "");
  EXPECT_EQ(decodeDeleteOptions(nlohmann::json::parse(R"({"preconditions":"x"})"))
                .preconditions.resourceVersion,
            "");
}

TEST(ResourceInfo, PathsNameTheGroupVersionNamespaceAndSubresource) {
  EXPECT_EQ(kPods.path("default", "web", "binding"), "/api/v1/namespaces/default/pods/web/binding");
  EXPECT_EQ(kPods.path(), "/api/v1/pods");
  EXPECT_EQ(kNodes.path("ignored", "n1"), "/api/v1/nodes/n1");
  EXPECT_EQ(kLeases.path("kube-system", "berth"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/berth");
  EXPECT_EQ(kLeases.apiVersion(), "coordination.k8s.io/v1");
  EXPECT_EQ(kEventsV1.listKind, "EventList");
  EXPECT_EQ(kNodes.apiVersion(), "v1");
}

TEST(WatchOptions, AskForNothingTheWireLeavesOut) {
  const WatchOptions options;
  EXPECT_FALSE(options.allowWatchBookmarks);
  EXPECT_EQ(options.timeoutSeconds, 0);
}

}  // namespace
}  // namespace berth::api
