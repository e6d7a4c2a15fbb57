// util::parseGoDuration: Go's time.ParseDuration, shared by the flags and the configuration.

#include "pkg/util/duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace berth::util {
namespace {

using std::chrono::nanoseconds;

TEST(GoDuration, ParsesGosSyntax) {
  struct Case {
    const char* text;
    int64_t nanos;
  };
  const Case cases[] = {
      {"0", 0},
      {"1m30s", 90'000'000'000},
      {"500ms", 500'000'000},
      {"-1.5h", -5'400'000'000'000},
      {"+2s", 2'000'000'000},
      {"1h2m3s4ms5us6ns", 3'723'004'005'006},
      {"3\xC2\xB5s", 3000},  // micro sign
      {"3\xCE\xBCs", 3000},  // Greek mu
      {".5s", 500'000'000},
      {"1.s", 1'000'000'000},
      {"2562047h47m16.854775807s", std::numeric_limits<int64_t>::max()},
      {"-2562047h47m16.854775808s", std::numeric_limits<int64_t>::min()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto d = parseGoDuration(c.text);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(*d, nanoseconds(c.nanos));
  }
}

TEST(GoDuration, RefusesWithGosMessages) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "time: invalid duration \"\""},
      {"-", "time: invalid duration \"-\""},
      {"s", "time: invalid duration \"s\""},
      {".s", "time: invalid duration \".s\""},
      {"1", "time: missing unit in duration \"1\""},
      {"1m2", "time: missing unit in duration \"1m2\""},
      {"3d", "time: unknown unit \"d\" in duration \"3d\""},
      {"2562047h47m16.854775808s", "time: invalid duration \"2562047h47m16.854775808s\""},
      {"9999999999999999999h", "time: invalid duration \"9999999999999999999h\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto d = parseGoDuration(c.text);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(d.error().message, c.message);
  }
}

}  // namespace
}  // namespace berth::util
