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

}  // namespace
}  // namespace berth::api
