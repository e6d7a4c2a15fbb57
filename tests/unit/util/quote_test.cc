#include "pkg/util/quote.h"

#include <gtest/gtest.h>

namespace berth::util {
namespace {

TEST(QuoteGo, EscapesLikePercentQ) {
  EXPECT_EQ(quoteGo(""), "\"\"");
  EXPECT_EQ(quoteGo("abc"), "\"abc\"");
  EXPECT_EQ(quoteGo("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoteGo("\n\t\x01\x7f"), "\"\\n\\t\\x01\\x7f\"");
  EXPECT_EQ(quoteGo("\a\b\f\r\v"), "\"\\a\\b\\f\\r\\v\"");
  EXPECT_EQ(quoteGo("\xc3\xa9"), "\"\xc3\xa9\"");  // valid UTF-8 stays
  EXPECT_EQ(quoteGo("\xff"), "\"\\xff\"");
}

// The copies quoteGo replaced disagreed on these: the apiserver store's escaped only '"' and '\',
// the decoders' and the kubeconfig loader's wrapped the text in quotes unchanged, and the config
// loader's wrote JSON (\u0001, invalid UTF-8 as U+FFFD). Go's %q is what upstream's messages use.
TEST(QuoteGo, KeepsTheCasesTheOldCopiesDisagreedOn) {
  EXPECT_EQ(quoteGo("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(quoteGo("C:\\dir"), R"("C:\\dir")");
  EXPECT_EQ(quoteGo(std::string_view("\x01", 1)), R"("\x01")");
  EXPECT_EQ(quoteGo(std::string_view("\0", 1)), R"("\x00")");
  EXPECT_EQ(quoteGo("\xe2\x82"), R"("\xe2\x82")");          // a truncated sequence, byte by byte
  EXPECT_EQ(quoteGo("\xed\xa0\x80"), R"("\xed\xa0\x80")");  // a UTF-16 surrogate is not UTF-8
  EXPECT_EQ(quoteGo("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
}

}  // namespace
}  // namespace berth::util
