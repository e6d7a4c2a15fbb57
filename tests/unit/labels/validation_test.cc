#include "pkg/labels/validation.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace berth::labels {
namespace {

TEST(LabelValidation, ParseInt64FollowsStrconvParseInt) {
  struct Case {
    std::string text;
    std::optional<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"0", 0},
      {"42", 42},
      {"-42", -42},
      {"+42", 42},
      {"007", 7},
      {"-0", 0},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"9223372036854775808", std::nullopt},
      {"-9223372036854775809", std::nullopt},
      {"99999999999999999999999", std::nullopt},
      {"", std::nullopt},
      {"+", std::nullopt},
      {"-", std::nullopt},
      {" 1", std::nullopt},
      {"1 ", std::nullopt},
      {"1.5", std::nullopt},
      {"1e3", std::nullopt},
      {"1_000", std::nullopt},
      {"0x10", std::nullopt},
      {"--1", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("text: \"" + c.text + "\"");
    EXPECT_EQ(parseInt64(c.text), c.want);
  }
}

TEST(LabelValidation, LabelKeyAndValueSyntax) {
  struct Case {
    std::string text;
    bool validKey;
    bool validValue;
  };
  const std::vector<Case> cases = {
      {"", false, true},
      {"a", true, true},
      {"A1", true, true},
      {"a-b_c.d", true, true},
      {"1234", true, true},
      {"-a", false, false},
      {"a-", false, false},
      {"a b", false, false},
      {"example.com/key", true, false},
      {"Example.com/key", false, false},
      {"a..b/key", false, false},
      {"-a.com/key", false, false},
      {"/key", false, false},
      {"example.com/", false, false},
      {"a/b/c", false, false},
      {std::string(63, 'a'), true, true},
      {std::string(64, 'a'), false, false},
      {std::string(253, 'a') + "/k", true, false},
      {std::string(254, 'a') + "/k", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("text: \"" + c.text + "\"");
    std::vector<std::string> keyErrors;
    std::vector<std::string> valueErrors;
    EXPECT_EQ(checkLabelKey(c.text), c.validKey);
    EXPECT_EQ(checkLabelKey(c.text, &keyErrors), c.validKey);
    EXPECT_EQ(keyErrors.empty(), c.validKey);
    EXPECT_EQ(checkLabelValue(c.text), c.validValue);
    EXPECT_EQ(checkLabelValue(c.text, &valueErrors), c.validValue);
    EXPECT_EQ(valueErrors.empty(), c.validValue);
  }
}

// The message-free fast path must agree with the message-producing one.
TEST(LabelValidation, LabelKeyFastPathAgreesWithMessages) {
  const std::string alphabet = "aZ09-_./A";
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string key;
    const size_t len = rng() % 12;
    for (size_t k = 0; k < len; ++k) {
      key += alphabet[rng() % alphabet.size()];
    }
    std::vector<std::string> errors;
    EXPECT_EQ(checkLabelKey(key), checkLabelKey(key, &errors)) << "key: " << key;
    EXPECT_EQ(errors.empty(), checkLabelKey(key)) << "key: " << key;
  }
}

}  // namespace
}  // namespace berth::labels

namespace berth::labels {
namespace {

// Brief is what berth's configuration errors print: upstream's words without RegexError's tail.
TEST(Validation, BriefMessagesDropTheRegexExamples) {
  std::vector<std::string> errors;
  EXPECT_FALSE(checkLabelKey("a b", &errors, MessageStyle::Brief));
  EXPECT_EQ(errors, std::vector<std::string>{
                        "name part must consist of alphanumeric characters, '-', '_' or '.', and "
                        "must start and end with an alphanumeric character"});
  errors.clear();
  EXPECT_FALSE(checkLabelValue("-x", &errors, MessageStyle::Brief));
  EXPECT_EQ(errors, std::vector<std::string>{
                        "a valid label must be an empty string or consist of alphanumeric "
                        "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                        "character"});
}

TEST(Validation, QualifiedNamesFollowLabelKeyRulesWithTheirOwnNoun) {
  EXPECT_TRUE(checkQualifiedName("example.com/gpu"));
  std::vector<std::string> errors;
  EXPECT_FALSE(checkQualifiedName("a/b/c", &errors, MessageStyle::Brief));
  EXPECT_EQ(errors, std::vector<std::string>{
                        "a qualified name must consist of alphanumeric characters, '-', '_' or "
                        "'.', and must start and end with an alphanumeric character with an "
                        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"});
}

}  // namespace
}  // namespace berth::labels
