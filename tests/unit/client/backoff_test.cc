#include "pkg/client/backoff.h"

#include <gtest/gtest.h>

#include <stop_token>
#include <vector>

#include "pkg/client/rate_limiter.h"

namespace berth::client {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesFromInitialToMaxWithJitterWithinBounds) {
  util::FakeClock clock;
  for (const double u : {0.0, 0.5, 0.999}) {
    SCOPED_TRACE(u);
    util::FakeRandom random(u);
    Backoff b({.initial = milliseconds(800), .max = std::chrono::seconds(30)}, clock, random);
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
  util::FakeClock clock;
  util::FakeRandom random(0.0);
  Backoff b({.initial = milliseconds(100),
             .max = std::chrono::seconds(10),
             .resetAfter = std::chrono::minutes(2)},
            clock, random);
  EXPECT_EQ(b.next(), milliseconds(100));
  clock.advance(std::chrono::seconds(1));
  EXPECT_EQ(b.next(), milliseconds(200));
  clock.advance(std::chrono::minutes(2));
  EXPECT_EQ(b.next(), milliseconds(100));
  EXPECT_EQ(b.next(), milliseconds(200));
  b.reset();
  EXPECT_EQ(b.next(), milliseconds(100));
}

TEST(Backoff, DefaultRandomStaysInRange) {
  util::Random& r = util::defaultRandom();
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(TokenBucket, AllowsABurstThenPacesAtQps) {
  util::FakeClock clock;
  TokenBucket bucket(50, 100, clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(bucket.reserve(), Duration::zero()) << i;
  }
  // Out of tokens: each further request waits one more 1/50 s.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(20));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(40));
  // 100 ms later five tokens came back; two were already promised.
  clock.advance(milliseconds(100));
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(bucket.reserve(), Duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(20));
}

TEST(TokenBucket, RefillsNoMoreThanTheBurst) {
  util::FakeClock clock;
  TokenBucket bucket(10, 3, clock);
  clock.advance(std::chrono::hours(1));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bucket.reserve(), Duration::zero());
  }
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve()), milliseconds(100));
}

TEST(TokenBucket, ZeroQpsDoesNotLimit) {
  util::FakeClock clock;
  TokenBucket bucket(0, 1, clock);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(bucket.reserve(), Duration::zero());
  }
}

TEST(TokenBucket, WaitsForATokenOnTheInjectedClock) {
  util::FakeClock clock;
  TokenBucket bucket(10, 1, clock);
  EXPECT_TRUE(bucket.wait({}));
  EXPECT_TRUE(bucket.wait({}));  // empty: waits 100 ms, on the fake clock
  EXPECT_TRUE(bucket.wait({}));  // the 100 ms slept repaid the reserved token: 100 ms more
  EXPECT_EQ(clock.sleeps(), (std::vector<Duration>{milliseconds(100), milliseconds(100)}));
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(bucket.wait(stop.get_token()));
}

}  // namespace
}  // namespace berth::client
