#include "pkg/client/backoff.h"

#include <gtest/gtest.h>

#include <vector>

#include "pkg/client/rate_limiter.h"

namespace berth::client {
namespace {

using std::chrono::milliseconds;

struct FakeClock {
  TimePoint now{};
  SteadyClock fn() {
    return [this] { return now; };
  }
};

TEST(Backoff, DoublesFromInitialToMaxWithJitterWithinBounds) {
  FakeClock clock;
  for (const double u : {0.0, 0.5, 0.999}) {
    SCOPED_TRACE(u);
    Backoff b({.initial = milliseconds(800), .max = std::chrono::seconds(30)}, clock.fn(),
              [u] { return u; });
    milliseconds base(800);
    for (int i = 0; i < 10; ++i) {
      const Duration d = b.next();
      EXPECT_GE(d, base);
      EXPECT_LT(d, 2 * base);
      EXPECT_EQ(d, std::chrono::duration_cast<Duration>(base * (1.0 + u)));
      base = std::min<milliseconds>(base * 2, std::chrono::seconds(30));
    }
  }
}

TEST(Backoff, ResetsAfterAQuietPeriod) {
  FakeClock clock;
  Backoff b({.initial = milliseconds(100),
             .max = std::chrono::seconds(10),
             .resetAfter = std::chrono::minutes(2)},
            clock.fn(), [] { return 0.0; });
  EXPECT_EQ(b.next(), milliseconds(100));
  clock.now += std::chrono::seconds(1);
  EXPECT_EQ(b.next(), milliseconds(200));
  clock.now += std::chrono::minutes(2);
  EXPECT_EQ(b.next(), milliseconds(100));
  EXPECT_EQ(b.next(), milliseconds(200));
  b.reset();
  EXPECT_EQ(b.next(), milliseconds(100));
}

TEST(Backoff, DefaultRandomStaysInRange) {
  Random r = defaultRandom();
  for (int i = 0; i < 1000; ++i) {
    const double u = r();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(TokenBucket, AllowsABurstThenPacesAtQps) {
  FakeClock clock;
  TokenBucket bucket(50, 100, clock.fn());
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(bucket.reserve(), Duration::zero()) << i;
  }
  // Out of tokens: each further request waits one more 1/50 s.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(20));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(40));
  // 100 ms later five tokens came back; two were already promised.
  clock.now += milliseconds(100);
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(20));
}

TEST(TokenBucket, RefillsNoMoreThanTheBurst) {
  FakeClock clock;
  TokenBucket bucket(10, 3, clock.fn());
  clock.now += std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bucket.reserve(), Duration::zero());
  }
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(100));
}

TEST(TokenBucket, ZeroQpsDoesNotLimit) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock.fn());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(bucket.reserve(), Duration::zero());
  }
}

}  // namespace
}  // namespace berth::client
