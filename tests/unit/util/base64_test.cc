#include "pkg/util/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace berth::util {
namespace {

TEST(Base64, DecodesLikeGoEncodingJson) {
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  const Case cases[] = {
      {"", ""},
      {"YWI=", "ab"},
      {"YWJjZA==", "abcd"},
      {"aGVsbG8sIHdvcmxk", "hello, world"},
      {"aGVs\nbG8s\r\nIHdv\ncmxk\n", "hello, world"},
      {"YW\nI\n=", "ab"},
      {"YWJjZA=\n=\n", "abcd"},
      {"+/+/", "\xfb\xff\xbf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    const Result<std::string> out = decodeBase64(c.in);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(*out, c.want);
  }
}

TEST(Base64, ReportsTheFirstIllegalByte) {
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  const Case cases[] = {
      {"YWI", "illegal base64 data at input byte 0"},       // unpadded final quantum
      {"YWJjZA", "illegal base64 data at input byte 4"},    // unpadded after a full quantum
      {"YWJj!A==", "illegal base64 data at input byte 4"},  // not in the alphabet
      {"Y===", "illegal base64 data at input byte 1"},      // padding too early
      {"YW=", "illegal base64 data at input byte 3"},       // second '=' missing at the end
      {"YW=x", "illegal base64 data at input byte 2"},      // second '=' missing
      {"YWI=YWI=", "illegal base64 data at input byte 4"},  // data after the padding
      {"YWJj=", "illegal base64 data at input byte 4"},     // padding starting a quantum
      {"YWJ-", "illegal base64 data at input byte 3"},      // URL alphabet is not accepted
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    const Result<std::string> out = decodeBase64(c.in);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message, c.want);
  }
}

TEST(Base64, EncodesWithPaddingAsStdEncoding) {
  // What `berth apiserver --write-kubeconfig` wrote with OpenSSL's EVP_EncodeBlock before.
  EXPECT_EQ(encodeBase64(""), "");
  EXPECT_EQ(encodeBase64("a"), "YQ==");
  EXPECT_EQ(encodeBase64("ab"), "YWI=");
  EXPECT_EQ(encodeBase64("abc"), "YWJj");
  EXPECT_EQ(encodeBase64("\xfb\xff\xbf"), "+/+/");
  const std::string pem(1000, 'x');
  EXPECT_EQ(encodeBase64(pem).find('\n'), std::string::npos);  // one line, no wrapping
  EXPECT_EQ(*decodeBase64(encodeBase64(pem)), pem);
}

TEST(Base64, RawUrlEncodesWithoutPaddingInTheUrlAlphabet) {
  EXPECT_EQ(encodeBase64RawUrl(""), "");
  EXPECT_EQ(encodeBase64RawUrl("a"), "YQ");
  EXPECT_EQ(encodeBase64RawUrl("ab"), "YWI");
  EXPECT_EQ(encodeBase64RawUrl("abc"), "YWJj");
  EXPECT_EQ(encodeBase64RawUrl("\xfb\xff\xbf"), "-_-_");
  EXPECT_EQ(encodeBase64RawUrl(R"({"v":"meta.k8s.io/v1","rv":5,"start":"a/b?"})"),
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJhL2I_In0");
}

TEST(Base64, RawUrlDecodesWhatItEncodes) {
  for (std::string_view in : {"", "a", "ab", "abc", "abcd", "\xfb\xff\xbf\x00\x01"}) {
    SCOPED_TRACE(in);
    const Result<std::string> out = decodeBase64RawUrl(encodeBase64RawUrl(in));
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(*out, in);
  }
}

TEST(Base64, RawUrlRejectsPaddingOtherAlphabetAndLooseBits) {
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  const Case cases[] = {
      {"%%%", "illegal base64 data at input byte 0"},
      {"YWI=", "illegal base64 data at input byte 3"},   // no padding in the raw encoding
      {"+/+/", "illegal base64 data at input byte 0"},   // standard alphabet is not accepted
      {"YWJjZ", "illegal base64 data at input byte 4"},  // a lone final symbol holds no byte
      {"YR", "illegal base64 data at input byte 1"},     // leftover bits are not zero
      {"a\nb", "illegal base64 data at input byte 1"},   // no line breaks in a token
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    const Result<std::string> out = decodeBase64RawUrl(c.in);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message, c.want);
  }
}

}  // namespace
}  // namespace berth::util
