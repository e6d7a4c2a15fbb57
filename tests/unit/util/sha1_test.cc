#include "pkg/util/sha1.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace berth::util {
namespace {

// FIPS 180-4's examples, the empty message, and messages whose padding spills into a second block.
TEST(Sha1, DigestsAsFips180) {
  struct Case {
    std::string in;
    std::string_view want;
  };
  const Case cases[] = {
      {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
      {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
      {std::string(200, 'x'), "94218caae9904e93a3d7bf578bf4791926fc5e82"},
      {std::string(1000000, 'a'), "34aa973cd4c4daa4f61eeb2bdbad27316534016f"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.substr(0, 60));
    EXPECT_EQ(sha1Hex(c.in), c.want);
  }
}

}  // namespace
}  // namespace berth::util
