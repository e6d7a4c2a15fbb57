#include "pkg/api/json.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::api {
namespace {

std::string nested(size_t depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

TEST(ParseJson, AcceptsNestingUpToGosLimit) {
  auto doc = parseJson(nested(kMaxJsonDepth));
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_TRUE(doc->is_array());
}

TEST(ParseJson, RefusesNestingBeyondGosLimitWithoutRecursing) {
  // Deep enough to overflow the stack if anything copied or dumped it.
  auto doc = parseJson(nested(200000));
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, util::ErrorCode::InvalidArgument);
  EXPECT_EQ(doc.error().message, "exceeded max depth of 10000");
}

TEST(ParseJson, BracketsInsideStringsDoNotCount) {
  const std::string text = R"({"a":")" + std::string(20000, '[') + R"(\"{"})";
  EXPECT_EQ(jsonDepth(text), 1U);
  auto doc = parseJson(text);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["a"].get<std::string>().size(), 20002U);
}

TEST(ParseJson, MixedObjectsAndArraysCountTogether) {
  EXPECT_EQ(jsonDepth(R"({"a":[{"b":[]}],"c":{}})"), 4U);
  EXPECT_EQ(jsonDepth("[]"), 1U);
  EXPECT_EQ(jsonDepth("3"), 0U);
}

TEST(ParseJson, NamesWhereTextIsNotJson) {
  auto doc = parseJson(R"({"a":)");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.error().message.find("parse error"), std::string::npos) << doc.error().message;
}

}  // namespace
}  // namespace berth::api
