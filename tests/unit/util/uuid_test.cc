#include "pkg/util/uuid.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <set>
#include <string>

namespace berth::util {
namespace {

TEST(UuidV4, IsVersionFourWithTheRfc4122Variant) {
  const std::regex shape("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    const std::string id = uuidV4(rng);
    ASSERT_TRUE(std::regex_match(id, shape)) << id;
  }
}

TEST(UuidV4, FollowsTheGeneratorItIsGiven) {
  std::mt19937_64 a(42);
  std::mt19937_64 b(42);
  EXPECT_EQ(uuidV4(a), uuidV4(b));
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(uuidV4(a));
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace berth::util
