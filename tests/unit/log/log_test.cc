#include "pkg/log/log.h"

#include <gtest/gtest.h>

namespace berth::log {
namespace {

TEST(Log, RendersTextLikeKlog) {
  EXPECT_EQ(renderText("Successfully bound pod to node",
                       {{"pod", "default/web-1"}, {"node", "n1"}, {"evaluatedNodes", 6}}),
            R"("Successfully bound pod to node" pod="default/web-1" node="n1" evaluatedNodes=6)");
  EXPECT_EQ(renderText("Error scheduling pod", {{"pod", "a/b"}}, "connection refused"),
            R"("Error scheduling pod" err="connection refused" pod="a/b")");
  EXPECT_EQ(renderText("quote \" and newline\n", {}), R"("quote \" and newline\n")");
}

TEST(Log, VerbosityGatesInfoMessages) {
  configure(Format::Text, 2);
  EXPECT_TRUE(enabled(0));
  EXPECT_TRUE(enabled(2));
  EXPECT_FALSE(enabled(3));
  configure(Format::Text, 0);
  EXPECT_FALSE(enabled(1));
}

TEST(Log, ParsesFormatFlag) {
  EXPECT_EQ(*parseFormat("json"), Format::Json);
  EXPECT_EQ(*parseFormat("text"), Format::Text);
  auto bad = parseFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "invalid argument \"xml\" for \"--log-format\" flag: must be text or json");
}

TEST(Log, KRefOmitsEmptyNamespace) {
  EXPECT_EQ(ref("default", "web-1"), "default/web-1");
  EXPECT_EQ(ref("", "node-a"), "node-a");
}

}  // namespace
}  // namespace berth::log
